"""tcgen05 in the executor, hand-written PTX against the PTX ISA 9.x (v9.2) tables (no Blackwell GPU
here: every expected value below is the document's, written out again in this file).

- tcgen05.st then tcgen05.ld.32x32b (9.7.16.2.3.1 Figure for .32x32b: lane l register r is TMEM
  lane l, column r, the identity) read back where each st shape puts register r of lane l:
  Figures 183-187 'Matrix fragments for shape .16x64b / .16x128b / .16x256b / .16x32bx2', as TVM
  TIRx's closed forms state them (the same forms are in ISA below);
- tcgen05.mma from shared memory in the ISA's canonical no-swizzle layouts (9.7.16.3.1 'Shared
  Memory Matrix Layouts': K-major core matrices of 8 rows x 16 bytes, LBO between core matrices
  along K, SBO along M/N; MN-major the transpose), D in TMEM by Layout D (M=128, lane = row) and
  Layout F (M=64: rows 16r..16r+15 in lanes 32r..32r+15; 9.7.16.10), the instruction descriptor
  of 9.7.16.4.2, compared bit for bit with layoutsim.mma;
- tcgen05.alloc / dealloc / relinquish_alloc_permit and tcgen05.ld's rules (9.7.16.7.1,
  9.7.16.2.2 'Access restrictions'): each misuse is a fault of kind tensor_memory.
"""
import subprocess

import numpy as np
import pytest

import layoutsim
from layoutsim import archs, ptx
from layoutsim.isa.ptx_tcgen05_idesc import encode
from layoutsim.ptx.state import PtxFault
from layoutsim.smem.umma import UmmaDescriptor

# the shared address of `sm`, the kernels' first shared variable: a CTA's own shared memory begins
# after the system's reserved KiB (ptxas -arch=sm_100a: 0x400; archs.user_smem_base)
SM = archs.user_smem_base("sm_100")

HEAD = ".version 8.7\n.target sm_100a\n.address_size 64\n"


def regs(prefix, n, start=0):
    return "{" + ", ".join(f"%{prefix}{start + i}" for i in range(n)) + "}"


def read_back(taddr, read, tid, param="out"):
    """PTX: tcgen05.ld.32x32b.x<read> at taddr (the identity map), each thread's row to out[tid]."""
    outs = "\n".join(f"  st.global.u32 [%rd4+{4 * c}], %o{c};" for c in range(read))
    return (f"  tcgen05.ld.sync.aligned.32x32b.x{read}.b32 {regs('o', read)}, [{taddr}];\n"
            f"  tcgen05.wait::ld.sync.aligned;\n  ld.param.u64 %rd2, [{param}];\n"
            f"  mul.wide.u32 %rd3, {tid}, {4 * read};\n  add.s64 %rd4, %rd2, %rd3;\n{outs}\n")


# ---- tcgen05.st shapes, read back with the identity 32x32b load ------------------------------------
# (rows, regs of .x1, cols of .x1) and the ISA's position of register r of lane l in an unpacked .x1
ISA = {"32x32b": (32, 1, 1, lambda l, r: (l, r)),
       "16x64b": (16, 1, 2, lambda l, r: (l // 4 + 8 * (l % 2), (l // 2) % 2)),
       "16x128b": (16, 2, 4, lambda l, r: (l // 4 + 8 * r, l % 4)),
       "16x256b": (16, 4, 8, lambda l, r: (l // 4 + 8 * ((r // 2) % 2), r % 2 + 2 * (l % 4))),
       "16x32bx2": (16, 1, 1, lambda l, r: (l % 16, 0))}        # lanes 16-31: the half at + immHalfSplitoff


def st_kernel(shape, num, packed):
    rows, rx1, cx1, _ = ISA[shape]
    n = rx1 * num
    split = ", 20" if shape == "16x32bx2" else ""
    read = 64
    body = "\n".join(f"  add.u32 %v{k}, %r4, {k + 1};" for k in range(n))
    return HEAD + f""".visible .entry k(.param .u64 out)
{{
  .reg .b32 %r<10>; .reg .b32 %v<{n}>; .reg .b32 %o<{read}>; .reg .b64 %rd<6>;
  .shared .align 16 .b32 slot;
  mov.u32 %r1, slot;
  tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r1], 128;
  ld.shared.u32 %r2, [%r1];
  mov.u32 %r3, %laneid;
  mul.lo.u32 %r4, %r3, 1000;
{body}
  tcgen05.st.sync.aligned.{shape}.x{num}{'.unpack::16b' if packed else ''}.b32 [%r2]{split}, {regs('v', n)};
  tcgen05.wait::st.sync.aligned;
{read_back("%r2", read, "%r3")}  tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;
  tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r2, 128;
  ret;
}}
"""


@pytest.mark.parametrize("shape", list(ISA))
@pytest.mark.parametrize("num,packed", [(1, False), (2, False), (4, False), (2, True)])
def test_tcgen05_st_puts_each_register_where_the_isa_figure_does(shape, num, packed):
    out = np.zeros((32, 64), np.uint32)
    r = ptx.run(st_kernel(shape, num, packed), "k", 1, 32, [out], arch="sm_100")
    tm = r.buffers[0]
    rows, rx1, cx1, pos = ISA[shape]
    want = np.zeros((32, 64), np.int64)
    for lane in range(32):
        for reg in range(rx1 * num):
            row, col = pos(lane, reg % rx1)
            col += cx1 * (reg // rx1)                      # .xN: the .x1 pattern repeated along columns
            half = 20 if shape == "16x32bx2" and lane >= 16 else 0     # a TMEM column offset, not scaled
            v = lane * 1000 + reg + 1
            if packed:                                     # .unpack::16b: low half to 2c, high half to 2c+1
                col = 2 * col
                want[row, col + half], want[row, col + 1 + half] = v & 0xFFFF, v >> 16
            else:
                want[row, col + half] = v
    got = tm & 0xFFFF if packed else tm
    assert np.array_equal(got, want), f"{shape}.x{num}: {np.argwhere(got != want)[:4]}"


def test_tcgen05_ld_16x256b_pack_reads_two_columns_into_one_register():
    # st 32x32b.x16 column c of lane l = l*100 + c, then ld.16x256b.x1.pack::16b: register r of lane l
    # holds columns 2c, 2c+1 (c: the unpacked column of Figure 185) of row l//4 + 8*((r//2)%2)
    src = st_kernel("32x32b", 16, False).replace("tcgen05.ld.sync.aligned.32x32b.x64.b32 " + regs("o", 64),
                                                "tcgen05.ld.sync.aligned.16x256b.x1.pack::16b.b32 " + regs("o", 4))
    src = src.replace("mul.lo.u32 %r4, %r3, 1000;", "mul.lo.u32 %r4, %r3, 100;")
    src = "\n".join(x for x in src.splitlines() if not any(f"%o{c};" in x for c in range(4, 64)))
    out = np.zeros((32, 64), np.uint32)
    got = ptx.run(src, "k", 1, 32, [out], arch="sm_100").buffers[0][:, :4]
    for lane in range(32):
        for reg in range(4):
            row, col = lane // 4 + 8 * ((reg // 2) % 2), reg % 2 + 2 * (lane % 4)
            assert got[lane, reg] == (row * 100 + 2 * col + 1) | ((row * 100 + 2 * col + 2) << 16)


# ---- tcgen05.mma -----------------------------------------------------------------------------------
def k_major(mn, k, e, lbo, sbo):
    """Byte offset of element (mn, k) in the ISA's K-major no-swizzle canonical layout."""
    t = 16 // e
    i, j = np.meshgrid(np.arange(mn), np.arange(k), indexing="ij")
    return (i % 8) * 16 + (i // 8) * sbo + (j // t) * lbo + (j % t) * e


def mn_major(mn, k, e, lbo, sbo):
    """... and in the MN-major one: 8 k-rows of 16 bytes along MN per core matrix."""
    t = 16 // e
    i, j = np.meshgrid(np.arange(mn), np.arange(k), indexing="ij")
    return (j % 8) * 16 + (j // 8) * lbo + (i // t) * sbo + (i % t) * e


def copy_image(nbytes):
    """PTX: the 128 threads copy nbytes of the global image at %rd1 into shared `sm` (word by word)."""
    return COPY_IMAGE.replace("WORDS", str(nbytes // 4))


COPY_IMAGE = """  mov.u32 %r6, %r3;
COPY:
  mul.wide.u32 %rd5, %r6, 4;
  add.s64 %rd6, %rd1, %rd5;
  ld.global.u32 %r7, [%rd6];
  mov.u32 %r8, sm;
  shl.b32 %r9, %r6, 2;
  add.u32 %r8, %r8, %r9;
  st.shared.u32 [%r8], %r7;
  add.u32 %r6, %r6, 128;
  setp.lt.u32 %p3, %r6, WORDS;
  @%p3 bra COPY;
"""
# the TMEM address, the descriptors and the idesc; %p2: not the issuing thread 0
MMA_OPERANDS = """  ld.shared.u32 %r2, [%r1];
  ld.param.u64 %rd10, [da];
  ld.param.u64 %rd11, [db];
  ld.param.u32 %r20, [idesc];
  setp.ne.u32 %p2, %r3, 0;
"""
# wait for the commit's phase 0, then %r12: the TMEM address of the warp's 32-lane slab
WAIT_SLAB = """WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r10], 0;
  @!%p3 bra WAIT;
  tcgen05.fence::after_thread_sync;
  shl.b32 %r11, %r5, 21;
  add.u32 %r12, %r2, %r11;
"""


def disable_lanes(mask):
    """(the disable-output-lane operand, the movs that fill its registers %r21..) of a mask tuple."""
    if mask is None:
        return "", ""
    return (" {" + ", ".join(f"%r{21 + i}" for i in range(len(mask))) + "},",
            "".join(f"  mov.u32 %r{21 + i}, {m};\n" for i, m in enumerate(mask)))


def mma_entry(n_cols, smem_bytes):
    """PTX: the MMA kernels' entry, registers and shared variables, %r1 the TMEM-address slot, %r3 %tid.x."""
    return HEAD + f""".visible .entry k(.param .u64 img, .param .u64 out, .param .u64 da, .param .u64 db, .param .u32 idesc)
{{
  .reg .b32 %r<40>; .reg .b32 %o<{n_cols}>; .reg .b64 %rd<20>; .reg .pred %p<6>; .reg .b16 %rs<2>;
  .shared .align 1024 .b8 sm[{smem_bytes}];
  .shared .align 16 .b32 slot;
  .shared .align 8 .b64 bar;
  mov.u32 %r1, slot;
  mov.u32 %r3, %tid.x;
"""


def mma_kernel(n_cols, smem_bytes, extra_mma=False, mask=None):
    read = n_cols
    mask_op, movs = disable_lanes(mask)
    second = ("  mov.pred %p2, 1;\n  tcgen05.mma.cta_group::1.kind::KIND [%r2], %rd10, %rd11, %r20," + mask_op
              + " %p2;\n") if extra_mma else ""
    return mma_entry(read, smem_bytes) + f"""  shr.u32 %r5, %r3, 5;
  setp.eq.u32 %p1, %r5, 0;
  @%p1 tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r1], 512;
  ld.param.u64 %rd1, [img];
{copy_image(smem_bytes)}  mov.u32 %r10, bar;
  setp.eq.u32 %p2, %r3, 0;
  @%p2 mbarrier.init.shared::cta.b64 [%r10], 1;
  tcgen05.fence::before_thread_sync;
  bar.sync 0;
  tcgen05.fence::after_thread_sync;
{MMA_OPERANDS}  @%p2 bra WAIT;
  mov.pred %p3, 0;
{movs}  tcgen05.mma.cta_group::1.kind::KIND [%r2], %rd10, %rd11, %r20, %p3;
{second}  tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%r10];
{WAIT_SLAB}{read_back("%r12", read, "%r3")}  bar.sync 0;
  @%p1 tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;
  @%p1 tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r2, 512;
  ret;
}}
"""


RAW = {"f16": np.float16, "bf16": "bfloat16", "tf32": np.float32, "e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2",
       "s8": np.int8, "u8": np.uint8}


def operand(rng, fmt, shape):
    import ml_dtypes
    if fmt in ("s8", "u8"):
        return rng.integers(-128 if fmt == "s8" else 0, 128 if fmt == "s8" else 256, shape).astype(RAW[fmt])
    dt = getattr(ml_dtypes, RAW[fmt]) if isinstance(RAW[fmt], str) else RAW[fmt]
    x = rng.standard_normal(shape).astype(np.float32)
    if fmt == "tf32":
        return (x.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)
    return x.astype(dt)


CASES = [  # kind, types, M, N, a MN-major, b MN-major, neg_a, two MMAs, disable-output-lane
    ("f16", "f32.f16.f16", 128, 64, False, False, False, False, None),
    ("f16", "f32.bf16.bf16", 128, 32, False, True, True, True, None),
    ("f16", "f16.f16.f16", 64, 32, True, False, False, True, None),
    ("tf32", "f32.tf32.tf32", 128, 16, False, False, False, False, None),
    ("f8f6f4", "f32.e4m3.e5m2", 128, 32, False, False, False, True, (0xF0F0F0F0, 0, 1, 0x80000000)),
    ("i8", "s32.s8.u8", 64, 16, False, False, False, True, None),
]


@pytest.mark.parametrize("kind,types,M,N,amn,bmn,neg_a,two,mask", CASES)
def test_tcgen05_mma_is_layoutsim_mma_bit_for_bit(kind, types, M, N, amn, bmn, neg_a, two, mask):
    d, fa, fb = types.split(".")
    inst = layoutsim.get(f"tcgen05.mma.cta_group::1.kind::{kind}.m{M}n{N}k{ {'tf32': 8, 'f16': 16}.get(kind, 32)}")
    K = inst.shape[2]
    rng = np.random.default_rng(M * N + K)
    A, B = operand(rng, fa, (M, K)), operand(rng, fb, (N, K))
    e = A.dtype.itemsize
    img = np.zeros(16384, np.uint8)
    descs = []
    for x, mn, mnm, base in ((A, M, amn, 0), (B, N, bmn, 8192)):
        if mnm:      # MN-major: core matrices of 8 k x 16 bytes; LBO between 8-k groups, SBO between 16-byte MN groups
            lbo, sbo = 128 * (mn * e // 16), 128
            off = mn_major(mn, K, e, lbo, sbo)
        else:        # K-major: LBO between 16-byte K groups, SBO between 8-row groups
            lbo, sbo = 128, 128 * (K * e // 16)
            off = k_major(mn, K, e, lbo, sbo)
        raw = x.view(f"u{e}")
        img.view(np.uint8)[(base + off)[..., None] + np.arange(e)] = raw.view(np.uint8).reshape(mn, K, e)
        descs.append(UmmaDescriptor(SM + base, lbo, sbo).encode())
    idesc = encode(kind, M, N, types, neg_a=neg_a, a_mn_major=amn, b_mn_major=bmn)
    out = np.zeros((128, N), np.uint32)
    src = mma_kernel(N, 16384, two, mask).replace("KIND", kind)
    r = ptx.run(src, "k", 1, 128, [img, out, np.uint64(descs[0]), np.uint64(descs[1]), np.uint32(idesc)],
                arch="sm_100", shared_bytes=0, record_mmas=two)
    got = r.buffers[1]
    if two:     # the MMA records (events.Mma): the operands as read, D as computed (before the mask)
        first, second = r.mmas
        assert (first.name, first.types, first.ctas, first.neg_a) == (inst.name, types, (0,), neg_a)
        assert np.array_equal(first.a, A.view(f"u{e}")) and np.array_equal(first.b, B.view(f"u{e}").T)
        assert not first.c.any() and np.array_equal(second.c, first.d.astype(second.c.dtype))
        assert first.taddr == second.taddr and first.scale_a is None
    else:
        assert r.mmas is None
    a = A.view(f"u{e}")
    if neg_a:
        a = a ^ a.dtype.type(1 << (8 * e - 1))                   # negate: the sign bit flipped
    b = np.ascontiguousarray(B.view(f"u{e}").T)
    c = np.zeros((M, N), np.uint16 if d == "f16" else np.uint32)
    D = layoutsim.mma(inst, a, b, c, arch="sm_100a", raw=True, types=types)
    if two:
        D = layoutsim.mma(inst, a, b, D, arch="sm_100a", raw=True, types=types)
        assert np.array_equal(second.d, D.astype(np.uint32))
    lanes = np.arange(M) if M == 128 else 32 * (np.arange(M) // 16) + np.arange(M) % 16     # Layout D / F
    cells = got[lanes]
    if d == "f16":
        cells = cells & 0xFFFF
    want = D.astype(np.uint32)
    if mask is not None:                 # disable-output-lane: those lanes keep the first MMA's result
        first = layoutsim.mma(inst, a, b, np.zeros_like(c), arch="sm_100a", raw=True, types=types).astype(np.uint32)
        bits = np.array([(mask[L // 32] >> (L % 32)) & 1 for L in lanes], bool)
        want = np.where(bits[:, None], first, want)
    assert np.array_equal(cells, want)
    assert r.fidelity["documented"] > 0                # the fidelity line says: from documents, not measured


# ---- allocation and access rules ---------------------------------------------------------------------
def rules_kernel(body):
    return HEAD + f""".visible .entry k()
{{
  .reg .b32 %r<10>; .reg .pred %p<4>;
  .shared .align 16 .b32 slot;
  mov.u32 %r1, slot;
{body}
  ret;
}}
"""


ALLOC = "  tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r1], {n};\n  ld.shared.u32 %r2, [%r1];\n"


def test_mma_records_keep_a_run_in_one_process():
    # ptx.run(..., record_mmas=True): the records live in this process, so jobs=2 runs as jobs=1 and says so
    r = ptx.run(rules_kernel(""), "k", 4, 32, [], arch="sm_100", jobs=2, record_mmas=True)
    assert r.mmas == [] and "jobs=2 ignored: the MMA records (record_mmas) are kept in one process" in r.notes


@pytest.mark.parametrize("body,match", [
    (ALLOC.format(n=48), "nCols must be a power of 2 in 32..512"),
    (ALLOC.format(n=1024), "nCols must be a power of 2 in 32..512"),
    ("  tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\n" + ALLOC.format(n=32),
     "after the CTA's tcgen05.relinquish_alloc_permit"),
    (ALLOC.format(n=256) + ALLOC.format(n=512), "only 256 of 512 columns are free"),
    (ALLOC.format(n=64) + "  add.u32 %r3, %r2, 32;\n  tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r3, 32;\n",
     "not an allocation of the CTA"),
    (ALLOC.format(n=32) + "  add.u32 %r3, %r2, 32;\n  tcgen05.ld.sync.aligned.32x32b.x1.b32 {%r4}, [%r3];\n",
     "column 32 is not in a column the CTA allocated"),
    (ALLOC.format(n=32) + "  add.u32 %r3, %r2, 0x200000;\n  tcgen05.ld.sync.aligned.32x32b.x1.b32 {%r4}, [%r3];\n",
     "warp 0 of its CTA reaches TMEM lanes 0..31 only"),
])
def test_tensor_memory_misuse_is_a_fault(body, match):
    with pytest.raises(PtxFault, match=match) as e:
        ptx.run(rules_kernel(body), "k", 1, 32, [], arch="sm_100")
    assert e.value.fault["kind"] == "tensor_memory"
    if e.value.fault["address"]:              # a TMEM address is named as one, never as a global buffer
        assert e.value.fault["space"] == "tmem" and "argument" not in str(e.value)
        assert e.value.fault["buffer"]["name"].startswith("TMEM lane")


def test_alloc_writes_a_column_address_and_two_allocations_do_not_overlap():
    body = (ALLOC.format(n=128) + "  mov.u32 %r5, %r2;\n" + ALLOC.format(n=256)
            + "  tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r5, 128;\n"
            + "  tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r2, 256;\n")
    src = rules_kernel(body).replace(".entry k()", ".entry k(.param .u64 out)").replace(
        "  ret;", "  ld.param.u64 %rd1, [out];\n  st.global.v2.u32 [%rd1], {%r5, %r2};\n  ret;").replace(
        ".reg .pred %p<4>;", ".reg .pred %p<4>; .reg .b64 %rd<3>;")
    out = np.zeros(2, np.uint32)
    got = ptx.run(src, "k", 1, 32, [out], arch="sm_100").buffers[0]
    assert got[0] >> 16 == 0 and got[1] >> 16 == 0                   # lane 0 << 16 | column
    assert got[0] % 128 == 0 and got[1] % 256 == 0 and abs(int(got[0]) - int(got[1])) >= 128


def test_tcgen05_on_another_arch_is_refused_in_one_line():
    with pytest.raises(layoutsim.LayoutsimError, match="tcgen05 exists on sm_100 only"):
        ptx.run(rules_kernel(ALLOC.format(n=32)).replace("sm_100a", "sm_90a"), "k", 1, 32, [], arch="sm_90")


@pytest.mark.parametrize("line,match", [
    # .ashift shifts an A in TMEM of a non-block-scaled MMA (ptxas 13.0 rejects the other forms too)
    ("tcgen05.mma.cta_group::1.kind::f16.ashift [%r1], %rd1, %rd1, %r1, %p1;", r"\.ashift shifts an A in tensor memory"),
    ("tcgen05.mma.cta_group::1.kind::mxf4.block_scale.ashift [%r1], [%r1], %rd1, %r1, [%r1], [%r1], %p1;",
     r"\.ashift shifts an A in tensor memory"),
    ("tcgen05.mma.cta_group::1.kind::tf32.ashift.collector::a::fill [%r1], [%r1], %rd1, %r1, %p1;",
     r"takes no .collector::a::fill/use"),
    ("tcgen05.mma.cta_group::1.kind::mxf4.block_scale.scale_vec::4X [%r1], %rd1, %rd1, %r1, [%r1], [%r1], %p1;",
     r"block-scaled .kind::mxf4 .scale_vec::4X is not a form of the PTX ISA"),
    ("tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale [%r1], %rd1, %rd1, %r1, [%r1], [%r1], %p1;",
     r"block-scaled .kind::mxf4nvf4 is not a form"),            # mxf4nvf4 names its .scale_vec (9.7.16.10.7)
    ("tcgen05.cp.cta_group::1.128x256b.b8x16.b4x16_p64 [%r1], %rd1;", "decompression"),
    ("tcgen05.ld.sync.aligned.32x32b.x2.b32 {%r1}, [%r1];", "moves 2 32-bit registers per thread; 1 given"),
])
def test_what_is_not_modelled_is_refused_when_loaded(line, match):
    src = rules_kernel(f"  .reg .b64 %rd<2>;\n  {line}")
    with pytest.raises(layoutsim.LayoutsimError, match=match):
        ptx.run(src, "k", 1, 32, [], arch="sm_100")


def test_an_instruction_descriptor_of_mn_major_fp4_operands_or_an_illegal_shape_is_a_fault():
    from layoutsim.isa.ptx_tcgen05_idesc import decode
    with pytest.raises(layoutsim.LayoutsimError, match="not a legal type combination"):
        decode(encode("f16", 128, 64, "f32.f16.f16") | (3 << 4), "f16")      # D format 3: none
    fp4 = encode("f8f6f4", 128, 32, "f32.e2m1.e2m1", b_mn_major=True)
    assert decode(fp4, "f8f6f4")["types"] == "f32.e2m1.e2m1"
    img, out = np.zeros(16384, np.uint8), np.zeros((128, 32), np.uint32)
    src = mma_kernel(32, 16384).replace("KIND", "f8f6f4")
    d = UmmaDescriptor(0, 128, 512).encode()
    with pytest.raises(PtxFault, match="FP6/FP4 operands are K-major only"):
        ptx.run(src, "k", 1, 128, [img, out, np.uint64(d), np.uint64(d), np.uint32(fp4)], arch="sm_100")
    no_n = encode("f16", 128, 8, "f32.f16.f16") & ~(0x3F << 17)            # N >> 3 = 0
    with pytest.raises(PtxFault, match="gives M=128 N=0: tcgen05.mma.cta_group::1.kind::f16.m128n0k16 is not"):
        ptx.run(src.replace("f8f6f4", "f16"), "k", 1, 128, [img, out, np.uint64(d), np.uint64(d), np.uint32(no_n)],
                arch="sm_100")


# tcgen05.cp (PTX ISA 9.7.16 'tcgen05.cp'): which TMEM lanes each source row reaches, as CUTLASS 4.2's
# SM100_UTCCP traits' ValID layouts state it (copy_traits_sm100.hpp; the ISA's .warpx4 / .warpx2 words)
CP = {"128x256b": (128, 32, lambda r: [r]), "128x128b": (128, 16, lambda r: [r]),
      "32x128b.warpx4": (32, 16, lambda r: [r, r + 32, r + 64, r + 96]),
      "64x128b.warpx2::02_13": (64, 16, lambda r: [r, r + 64]),
      "64x128b.warpx2::01_23": (64, 16, lambda r: [r % 32 + 64 * (r // 32), r % 32 + 64 * (r // 32) + 32])}


@pytest.mark.parametrize("shape", list(CP))
def test_tcgen05_cp_puts_each_row_in_the_lanes_of_its_shape(shape):
    rows, nbytes, lanes = CP[shape]
    rng = np.random.default_rng(rows + nbytes)
    src = rng.integers(0, 256, (rows, nbytes), dtype=np.uint8)
    img = np.zeros(16384, np.uint8)
    lbo, sbo = 128, 128 * (nbytes // 16)                    # K-major core matrices of 8 rows x 16 bytes
    img[k_major(rows, nbytes, 1, lbo, sbo)] = src
    kernel = mma_kernel(8, 16384).replace(
        "tcgen05.mma.cta_group::1.kind::KIND [%r2], %rd10, %rd11, %r20, %p3;",
        f"tcgen05.cp.cta_group::1.{shape} [%r2], %rd10;")
    out = np.zeros((128, 8), np.uint32)
    got = ptx.run(kernel, "k", 1, 128, [img, out, np.uint64(UmmaDescriptor(SM, lbo, sbo).encode()), np.uint64(0),
                                        np.uint32(0)], arch="sm_100").buffers[1]
    want = np.zeros((128, 8), np.uint32)
    words = src.view("<u4")                                  # byte c of a row: bits 8(c % 4) of column c // 4
    for r in range(rows):
        for lane in lanes(r):
            want[lane, :nbytes // 4] = words[r]
    assert np.array_equal(got, want)


def test_a_cta_that_ends_holding_tensor_memory_gets_a_note():
    # PTX ISA 9.7.16.7.1: what tcgen05.alloc took is released with tcgen05.dealloc before the kernel exits
    r = ptx.run(rules_kernel(ALLOC.format(n=64)), "k", 2, 32, [], arch="sm_100")
    held = [n for n in r.notes if "ended holding tensor memory" in n]
    assert len(held) == 2 and "column+nCols 0+64" in held[0]


def sf_image(sa, sb, a_id, b_id):
    """TMEM words [128, 8] at columns 256.. of the scales sa [M, nsf] / sb [nsf, N] as CUTLASS 4.2's
    UMMA::tmem_sf_frg lays them out (ScaleFactorDuplicated4by1): scale s of row (column) r in lane
    r % 32 of every 32-lane slab, column r // 32 (SFA from 256, SFB from 260), byte sf_id + s."""
    sf = np.zeros((128, 8), np.uint32)
    for rows, base, sid in ((sa, 0, a_id), (sb.T, 4, b_id)):
        for r in range(rows.shape[0]):
            for s_ in range(rows.shape[1]):
                for slab in range(4):
                    sf[r % 32 + 32 * slab, base + r // 32] |= np.uint32(rows[r, s_]) << np.uint32(8 * (sid + s_))
    return sf


def scaled_kernel(n_cols, form, smem_bytes=16384):
    """PTX: mma_kernel with the scale image (param sfimg, sf_image's words) stored to TMEM columns
    256..263 by each warp, then one tcgen05.mma.cta_group::1.kind::<form> with [sfa] at column 256
    and [sfb] at 260 (`form`: e.g. mxf8f6f4.block_scale.scale_vec::1X)."""
    store = ("  mul.wide.u32 %rd12, %r3, 32;\n  ld.param.u64 %rd13, [sfimg];\n  add.s64 %rd13, %rd13, %rd12;\n"
             + "".join(f"  ld.global.u32 %r{40 + c}, [%rd13+{4 * c}];\n" for c in range(8))
             + "  shl.b32 %r13, %r5, 21;\n  add.u32 %r14, %r2, %r13;\n  add.u32 %r14, %r14, 256;\n"
             + "  tcgen05.st.sync.aligned.32x32b.x8.b32 [%r14], {%r40, %r41, %r42, %r43, %r44, %r45, %r46, %r47};\n"
             + "  tcgen05.wait::st.sync.aligned;\n  bar.sync 0;\n")
    return mma_kernel(n_cols, smem_bytes).replace(".reg .b32 %r<40>;", ".reg .b32 %r<50>;").replace(
        ".param .u32 idesc)", ".param .u32 idesc, .param .u64 sfimg)").replace(
        "  ld.param.u64 %rd10, [da];", store + "  ld.param.u64 %rd10, [da];").replace(
        "tcgen05.mma.cta_group::1.kind::KIND [%r2], %rd10, %rd11, %r20, %p3;",
        "add.u32 %r15, %r2, 256;\n  add.u32 %r16, %r2, 260;\n"
        f"  tcgen05.mma.cta_group::1.kind::{form} [%r2], %rd10, %rd11, %r20, [%r15], [%r16], %p3;")


def test_block_scaled_mxf8f6f4_reads_its_scales_from_tmem_and_is_layoutsim_mma():
    # .kind::mxf8f6f4.block_scale.scale_vec::1X, M=128 N=32 K=32: one ue8m0 scale per row of A and
    # column of B, in TMEM as the catalog's SFA/SFB maps (CUTLASS's tmem_sf_frg: row r at lane r % 32,
    # column r // 32, in every 32-lane slab), from byte a_sf_id / b_sf_id of the column (CuTe keeps
    # that byte in its TMEM address's top bits: make_runtime_instr_desc_block_scaled)
    from layoutsim.isa.ptx_tcgen05_idesc import encode_scaled
    M, N, K = 128, 32, 32
    rng = np.random.default_rng(7)
    A, B = operand(rng, "e4m3", (M, K)), operand(rng, "e5m2", (N, K))
    img = np.zeros(16384, np.uint8)
    for x, mn, base in ((A, M, 0), (B, N, 8192)):
        img[base + k_major(mn, K, 1, 128, 128 * (K // 16))] = x.view(np.uint8)
    d = [UmmaDescriptor(SM + base, 128, 128 * (K // 16)).encode() for base in (0, 8192)]
    sa = rng.integers(120, 135, M).astype(np.uint8)                  # ue8m0: 2**(s - 127)
    sb = rng.integers(120, 135, N).astype(np.uint8)
    sf = sf_image(sa[:, None], sb[None, :], 2, 1)                     # SFA from byte 2, SFB from byte 1
    kernel = scaled_kernel(N, "mxf8f6f4.block_scale.scale_vec::1X")
    idesc = encode_scaled(M, N, "f32.e4m3.e5m2", a_sf_id=2, b_sf_id=1)
    out = np.zeros((128, N), np.uint32)
    got = ptx.run(kernel, "k", 1, 128, [img, out, np.uint64(d[0]), np.uint64(d[1]), np.uint32(idesc), sf],
                  arch="sm_100").buffers[1]
    inst = "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::1X.m128n32k32"
    want = layoutsim.mma(inst, A.view(np.uint8), np.ascontiguousarray(B.view(np.uint8).T),
                         np.zeros((M, N), np.uint32), arch="sm_100a", raw=True, types="f32.e4m3.e5m2",
                         scale_a=sa[:, None], scale_b=sb[None, :])
    assert np.array_equal(got, want)
    # one slab's copy changed: which copy the tensor core reads is not documented -> refused
    sf[40, 0] ^= 1 << 16
    with pytest.raises(PtxFault, match="copies of SFA's scale factors at TMEM address 0x[0-9a-f]+ differ"):
        ptx.run(kernel, "k", 1, 128, [img, out, np.uint64(d[0]), np.uint64(d[1]), np.uint32(idesc), sf],
                arch="sm_100")


# ---- tcgen05.commit with no state space (Triton 3.6's form) ----------------------------------------
# The PTX ISA names the operand a generic address without .shared::cluster; Triton 3.6 passes the
# shared address zero-extended (cvt.u64.u32). ptxas 13.0 compiles both (and .shared::cluster's
# 32-bit one) to the same SASS, UTCBAR [URn] of the operand's low 32 bits (cuobjdump -sass of
# ptxas -arch=sm_100a on this kernel), so the model reads the low 32 bits as the shared address.
COMMIT_FORMS = {
    "generic": "  cvta.shared.u64 %rd1, %rd1;\n",
    "zero-extended": "",
    "global": "  ld.param.u64 %rd1, [out];\n",
}


@pytest.mark.parametrize("form", list(COMMIT_FORMS))
def test_tcgen05_commit_generic_operand_is_its_low_32_bits(form):
    src = HEAD + f""".visible .entry k(.param .u64 out)
{{
  .reg .b32 %r<4>; .reg .b64 %rd<4>; .reg .pred %p<2>;
  .shared .align 8 .b64 bar;
  mov.u32 %r1, bar;
  mbarrier.init.shared::cta.b64 [%r1], 1;
  cvt.u64.u32 %rd1, %r1;
{COMMIT_FORMS[form]}  tcgen05.commit.cta_group::1.mbarrier::arrive::one.b64 [%rd1];
WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r1], 0;
  @!%p1 bra WAIT;
  ld.param.u64 %rd2, [out];
  st.global.u32 [%rd2], 7;
  ret;
}}
"""
    out = np.zeros(1, np.uint32)
    if form == "global":
        with pytest.raises(PtxFault, match="neither a generic shared address nor a zero-extended shared one"):
            ptx.run(src, "k", 1, 1, [out], arch="sm_100")
        return
    r = ptx.run(src, "k", 1, 1, [out], arch="sm_100")
    assert r.buffers[0][0] == 7                  # the commit's one arrival completed phase 0


def ptxas_sm100a(src, tmp_path, name="k"):
    """ptxas -arch=sm_100a on the PTX text `src` (the check that a hand-written kernel is PTX
    ptxas 13.0 takes): its CompletedProcess, output captured."""
    p = tmp_path / f"{name}.ptx"
    p.write_text(src)
    return subprocess.run(["ptxas", "-arch=sm_100a", str(p), "-o", str(tmp_path / f"{name}.cubin")],
                          capture_output=True, text=True)
