"""Block-scaled tcgen05.mma with .cta_group::2 in the executor (hand-written PTX, each kernel assembled by
ptxas 13.0 for sm_100a; no Blackwell GPU here: from documents, not measured). Every expected value is
written out again in this file from the sources below, then compared bit for bit with what the
executor computed.

- The pair (PTX ISA 9.x 9.7.16.5 Table 46; CuTe's SM100_MMA_MXF8F6F4_2x1SM_SS / SM100_MMA_MXF4_2x1SM_SS /
  SM100_MMA_MXF4NVF4_2x1SM_SS traits, nvidia-cutlass 4.2.0.0 cute/atom/mma_traits_sm100.hpp: ALayout
  gives peer v rows v*M/2.. of A, BLayout rows v*N/2.. of B (N x K)): the even CTA's shared memory holds
  A[0:128] and B[0:N/2], the odd CTA's A[128:256] and B[N/2:N], at the same descriptor addresses; D in
  Layout A (row i in lane i % 128 of CTA i // 128; PTX ISA 9.7.16.10).
- The scale factors (assumed; the PTX ISA's figures were not read here): each CTA's TMEM holds, at the
  [scale-A-tmem] / [scale-B-tmem] addresses, the scales of its own 128 rows of A and of all N columns of
  B, in the one-SM 4x1 layout (CUTLASS 4.2: MMA_ScaleFactor = the one-SM MMA of M/2 x round_up(N, 128),
  tmem_sf_frg ScaleFactorDuplicated4by1 for M = 256; its block-scaled collective loads SFA through the
  pair's TiledMma and SFB through the one-SM TiledMMA_SF into every CTA; Triton's Gluon
  04-2cta-block-scale-matmul.py: A's scales cga_layout [[1, 0]], B's [[0, 0]]): scale s of row
  (column) r in lane r % 32 of every 32-lane slab, column r // 32, byte sf_id + s.
- M = 128 (64 rows of A per CTA, D in Layout B: row i of CTA i // 64 in lane i % 64 + 64 (j // (N/2)), column
  j % (N/2)), assumed likewise: as JAX's Mosaic GPU stages them for its B200 test
  test_mma_block_scaled_collective_m128 (jax tests/mosaic/gpu_test.py; jax/experimental/mosaic/gpu/tcgen05.py):
  each CTA's SFA its 64 rows padded to 128 in the 4x1 layout above; SFB as shared rows h*32 + j % 32 holding
  the (N/2)/32 columns of half h = j // (N/2) (4 bytes each), copied by tcgen05.cp.64x128b.warpx2::01_23,
  which puts shared rows 0-31 in lanes 0-63 and rows 32-63 in lanes 64-127 (CUTLASS's
  SM100_UTCCP_2x64dp128bitlw0123: "data_row[0:31] -> DP[0:63], data_row[32:63] -> DP[64:127]").
- The arithmetic: layoutsim.mma of the whole pair's M=256 problem, and MMA-Sim (pip `mmasim`) per dot
  product of the same kind, N and K (it computes per MMA; the pair's MMA is one MMA of the combined
  shape: tests/numerics/mmasim_oracle.tcgen05_op).
"""
import shutil

import numpy as np
import pytest

import layoutsim
from layoutsim import ptx
from layoutsim.isa.ptx_tcgen05_idesc import encode_scaled
from layoutsim.ptx.state import PtxFault
from layoutsim.smem.umma import UmmaDescriptor

from blackwell_oracle import HAVE_MMASIM, oracle, summary
from test_ptx_tcgen05 import ptxas_sm100a, read_back, SM
from test_tcgen05_fp4 import raw_values, store
from test_tcgen05_pair import IMG, pair_kernel

SMEM, B_AT = 32768, 16384         # each CTA's shared image (A's half at 0, B's at B_AT; a 128B-swizzled
                                  # K-major row takes 128 bytes)
SW128 = "128B"
SF_COLS = 16                       # TMEM columns 256..271 of each CTA: SFA from 256, SFB from 260


def reads(N):
    """The columns each thread reads back per tcgen05.ld.32x32b (a power of 2, at most .x128)."""
    return min(1 << (N - 1).bit_length(), 128)


def scaled_pair_kernel(N, form, issuer=0):
    """PTX: test_tcgen05_pair's pair kernel (512 columns, a 32 KiB shared image per CTA) where every warp of each CTA first stores its
    CTA's scale image (param sfimg: [2 CTAs, 128 lanes, 16 columns] words) to TMEM columns 256..271 of
    its slab, the pair synchronises (cluster barrier), and the issuer runs one
    tcgen05.mma.cta_group::2.kind::<form> with [sfa] at column 256 and [sfb] at 260. Each thread reads
    its lane's reads(N) columns of D to out[128 * rank + tid] (N = 256: columns 128.. to out row + 256)."""
    store_sf = ("  mad.lo.u32 %r17, %r30, 128, %r3;\n  mul.wide.u32 %rd12, %r17, 64;\n"
                "  ld.param.u64 %rd13, [sfimg];\n  add.s64 %rd13, %rd13, %rd12;\n"
                + "".join(f"  ld.global.u32 %r{40 + c}, [%rd13+{4 * c}];\n" for c in range(SF_COLS))
                + "  shl.b32 %r13, %r5, 21;\n  add.u32 %r14, %r2, %r13;\n  add.u32 %r14, %r14, 256;\n"
                + f"  tcgen05.st.sync.aligned.32x32b.x{SF_COLS}.b32 [%r14], "
                + "{" + ", ".join(f"%r{40 + c}" for c in range(SF_COLS)) + "};\n"
                + "  tcgen05.wait::st.sync.aligned;\n  tcgen05.fence::before_thread_sync;\n"
                + "  barrier.cluster.arrive.aligned;\n  barrier.cluster.wait.aligned;\n"
                + "  tcgen05.fence::after_thread_sync;\n")
    n = reads(N)
    src = pair_kernel(n, issuer=issuer)
    first = read_back("%r12", n, "%r13")
    second = "  add.u32 %r18, %r12, 128;\n  add.u32 %r19, %r13, 256;\n" + read_back("%r18", n, "%r19")
    for old, new in ((".reg .b32 %r<40>;", ".reg .b32 %r<60>;"), (f"sm[{IMG}]", f"sm[{SMEM}]"),
                     (f"%r6, {IMG // 4};", f"%r6, {SMEM // 4};"), (f"%r30, {IMG};", f"%r30, {SMEM};"),
                     (".param .u32 idesc)", ".param .u32 idesc, .param .u64 sfimg)"),
                     ("  ld.param.u64 %rd10, [da];", store_sf + "  ld.param.u64 %rd10, [da];"),
                     ("[%r1], 256;", "[%r1], 512;"), ("%r2, 256;", "%r2, 512;"),
                     ("tcgen05.mma.cta_group::2.kind::f16 [%r2], %rd10, %rd11, %r20, %p3;",
                      "add.u32 %r15, %r2, 256;\n  add.u32 %r16, %r2, 260;\n"
                      f"  tcgen05.mma.cta_group::2.kind::{form} [%r2], %rd10, %rd11, %r20, [%r15], [%r16], %p3;"),
                     (first, first + second * (N > 128))):
        assert src.count(old) == 1, old
        src = src.replace(old, new)
    return src.replace(".version 8.7", ".version 8.8")             # .block16 / .block32: PTX ISA 8.8


def sf_images(sa, sb, a_id, b_id):
    """Each CTA's TMEM words [2, 128, 16] at columns 256..: CTA c's SFA = rows 128c.. of sa [256, nsf]
    from column 256 (4 columns), its SFB = all of sb [nsf, N] from column 260, both as the one-SM 4x1
    layout puts them (scale s of row r: lane r % 32 + 32 * slab, column r // 32, byte sf_id + s)."""
    sf = np.zeros((2, 128, SF_COLS), np.uint32)
    for c in range(2):
        for rows, base, sid in ((sa[128 * c:128 * (c + 1)], 0, a_id), (sb.T, 4, b_id)):
            for r in range(rows.shape[0]):
                for s_ in range(rows.shape[1]):
                    for slab in range(4):
                        sf[c, r % 32 + 32 * slab, base + r // 32] |= np.uint32(rows[r, s_]) << np.uint32(8 * (sid + s_))
    return sf


def sf_images_m128(sa, sb, a_id, b_id):
    """Each CTA's TMEM words [2, 128, 16] at columns 256.. for the pair's M = 128 (module docstring): CTA c's
    SFA = rows 64c.. of sa [128, nsf] in the 4x1 layout from column 256; its SFB = all of sb [nsf, N] from
    column 260, staged as JAX does (shared row h*32 + j % 32, byte 4 ((j % (N/2)) // 32) + s) and moved
    by .warpx2::01_23 (row q to lanes q % 32 + 64 (q // 32) and 32 lanes on, byte b to column b // 4)."""
    sf = np.zeros((2, 128, SF_COLS), np.uint32)
    N = sb.shape[1]
    half = N // 2
    staged = np.zeros((64, 16), np.uint8)                      # JAX's (1, K // 4, 64, 16) shared tile, one K-tile
    for j in range(N):
        for s_ in range(sb.shape[0]):
            staged[32 * (j // half) + j % 32, 4 * ((j % half) // 32) + s_] = sb[s_, j]
    for c in range(2):
        for r in range(64):
            for s_ in range(sa.shape[1]):
                for slab in range(4):
                    sf[c, r % 32 + 32 * slab, r // 32] |= np.uint32(sa[64 * c + r, s_]) << np.uint32(8 * (a_id + s_))
        for q in range(64):
            for lane in (q % 32 + 64 * (q // 32), q % 32 + 64 * (q // 32) + 32):
                for b in range(16):
                    sf[c, lane, 4 + b // 4] |= np.uint32(staged[q, b]) << np.uint32(8 * (b_id + b % 4))
    return sf


def images(A, B, fa, fb, packed, swizzle):
    """Each CTA's shared image [2, SMEM]: its half of A (M/2 rows) at 0, its half of B (N/2 rows of the
    N x K B) at B_AT, K-major (test_tcgen05_fp4.store: FP4 packed two per byte, or FP6/FP4 in 16-byte
    units), and the two descriptors (swizzle: A's and B's mode, None or 128B)."""
    (M, K), N = A.shape, B.shape[0]
    img = np.zeros((2, SMEM), np.uint8)
    for c in range(2):
        store(img[c], 0, A[M // 2 * c:M // 2 * (c + 1)], fa, packed, swizzle[0])
        store(img[c], B_AT, B[N // 2 * c:N // 2 * (c + 1)], fb, packed, swizzle[1])
    rowb = K // 2 if packed else K
    descs = [UmmaDescriptor(SM + base, 128, 128 * (rowb // 16)).encode() if w is None
             else UmmaDescriptor(SM + base, 16, 1024, w).encode() for base, w in zip((0, B_AT), swizzle)]
    return img, descs


CASES = [  # kind, qualifiers, scale_vec, types (d.a.b.scale), N, a_sf_id, b_sf_id, (A's, B's swizzle), issuer
    ("mxf8f6f4", "block_scale.scale_vec::1X", "1X", "f32.e4m3.e5m2.ue8m0", 64, 1, 2, (None, None), 0),
    ("mxf8f6f4", "block_scale", "1X", "f32.e2m1.e3m2.ue8m0", 32, 0, 3, (SW128, SW128), 1),
    ("mxf4", "block_scale.block32", "2X", "f32.e2m1.e2m1.ue8m0", 128, 2, 0, (None, SW128), 0),
    ("mxf4nvf4", "block_scale.scale_vec::4X", "4X", "f32.e2m1.e2m1.ue4m3", 256, 0, 0, (None, None), 0),
    ("mxf4nvf4", "block_scale.scale_vec::2X", "2X", "f32.e2m1.e2m1.ue8m0", 16, 2, 1, (None, None), 1),
    ("mxf4nvf4", "block_scale.block16", "4X", "f32.e2m1.e2m1.ue8m0", 48, 0, 0, (SW128, None), 0),
]


def case(kind, vec, types, N, a_id, b_id, swizzle, seed, M=256):
    """The operands (raw A [M, K], B [N, K], scales sa [M, nsf], sb [nsf, N]) and kernel arguments of one case."""
    _, fa, fb, fs = types.split(".")
    packed = kind != "mxf8f6f4"
    K = 64 if packed else 32
    nsf = K // (16 if vec == "4X" else 32)
    rng = np.random.default_rng(seed)
    A, B = raw_values(rng, fa, (M, K)), raw_values(rng, fb, (N, K))
    lo, hi = (118, 137) if fs == "ue8m0" else (0x30, 0x48)       # ue8m0 2**(s-127); ue4m3 about 1
    sa, sb = rng.integers(lo, hi, (M, nsf)).astype(np.uint8), rng.integers(lo, hi, (nsf, N)).astype(np.uint8)
    img, (da, db) = images(A, B, fa, fb, packed, swizzle)
    idesc = encode_scaled(M, N, types, a_sf_id=a_id, b_sf_id=b_id, kind=kind)
    sf = sf_images(sa, sb, a_id, b_id) if M == 256 else sf_images_m128(sa, sb, a_id, b_id)
    out = np.zeros((512 if N > 128 and M == 256 else 256, reads(N if M == 256 else N // 2)), np.uint32)
    return A, B, sa, sb, K, [img.reshape(-1), out, np.uint64(da), np.uint64(db),
                             np.uint32(idesc), sf.reshape(-1)]


def run(kind, quals, N, issuer, args, M=256, **kw):
    """The pair kernel (M = 128: each thread reads back its lane's N/2 columns of D, Layout B)."""
    return ptx.run(scaled_pair_kernel(N if M == 256 else N // 2, f"{kind}.{quals}", issuer), "k", 2, 128, args,
                   arch="sm_100", cluster=(2, 1, 1), **kw)


def d_of(out, M, N):
    """D [M, N] from the read-back rows (row 128c + lane: CTA c's TMEM lane; Layouts A and B, PTX ISA 9.7.16.10)."""
    if M == 256:
        return np.concatenate([out[:256], out[256:]], 1) if N > 128 else out[:, :N]
    i, j = np.meshgrid(np.arange(128), np.arange(N), indexing="ij")
    return out[128 * (i // 64) + i % 64 + 64 * (j // (N // 2)), j % (N // 2)]


@pytest.mark.parametrize("kind,quals,vec,types,N,a_id,b_id,swizzle,issuer", CASES)
def test_block_scaled_pair_mma_is_the_whole_pairs_mma_bit_for_bit(kind, quals, vec, types, N, a_id, b_id, swizzle,
                                                                   issuer):
    A, B, sa, sb, K, args = case(kind, vec, types, N, a_id, b_id, swizzle, N + a_id + 7 * issuer)
    r = run(kind, quals, N, issuer, args, record_mmas=True)
    out = r.buffers[1]                 # row 128c + lane: CTA c's TMEM lane (Layout A: D[128c + lane]), column j
    got = np.concatenate([out[:256], out[256:]], 1) if N > 128 else out[:, :N]
    name = f"tcgen05.mma.cta_group::2.kind::{kind}.block_scale.scale_vec::{vec}.m256n{N}k{K}"
    Bt = np.ascontiguousarray(B.T)
    C = np.zeros((256, N), np.uint32)
    want = layoutsim.mma(name, A, Bt, C, arch="sm_100a", raw=True, types=types, scale_a=sa, scale_b=sb)
    assert np.array_equal(got, want)
    assert np.count_nonzero(got) > 256 * N // 2          # the scales and operands reached the result
    # the even CTA's SFA scaled rows 0..127 and the odd CTA's rows 128..255: with the even CTA's for
    # every row (or with the rows' halves exchanged) the result differs
    wrong = layoutsim.mma(name, A, Bt, C, arch="sm_100a", raw=True, types=types,
                          scale_a=np.concatenate([sa[128:], sa[:128]]), scale_b=sb)
    assert not np.array_equal(got, wrong)
    (rec,) = r.mmas
    assert rec.name == name and rec.ctas == (0, 1)
    assert np.array_equal(rec.scale_a, sa) and np.array_equal(rec.scale_b, sb)
    if not HAVE_MMASIM:
        pytest.skip("MMA-Sim (pip install mmasim, with torch) is the second oracle")
    op, block = oracle().tcgen05_op(name, types)     # MMA-Sim's single-CTA model of the kind, N, K
    ref = oracle().dpa(op, types, block, A[None], Bt[None], C[None], sa[None], sb[None])[0]
    assert np.array_equal(got, ref)
    assert oracle().compare_records(r.mmas)[f"kind::{kind} {types}"]["differ"] == 0


M128 = [  # the pair's M = 128 (JAX's B200 test: e5m2 with ue8m0 1X scales, N = 64..256), every block-scaled kind
    ("mxf8f6f4", "block_scale.scale_vec::1X", "1X", "f32.e5m2.e5m2.ue8m0", 64, 0, 0, (SW128, SW128), 0),
    ("mxf8f6f4", "block_scale", "1X", "f32.e4m3.e5m2.ue8m0", 192, 1, 2, (None, None), 1),
    ("mxf4", "block_scale.block32", "2X", "f32.e2m1.e2m1.ue8m0", 128, 2, 0, (None, SW128), 0),
    ("mxf4nvf4", "block_scale.scale_vec::4X", "4X", "f32.e2m1.e2m1.ue4m3", 256, 0, 0, (None, None), 1),
    ("mxf4nvf4", "block_scale.scale_vec::2X", "2X", "f32.e2m1.e2m1.ue8m0", 32, 2, 1, (None, None), 0),
]


@pytest.mark.parametrize("kind,quals,vec,types,N,a_id,b_id,swizzle,issuer", M128)
def test_block_scaled_pair_m128_reads_jax_mosaic_gpus_scale_layout(kind, quals, vec, types, N, a_id, b_id, swizzle,
                                                                   issuer):
    A, B, sa, sb, K, args = case(kind, vec, types, N, a_id, b_id, swizzle, N + 3 * a_id + issuer, M=128)
    r = run(kind, quals, N, issuer, args, M=128, record_mmas=True)
    got = d_of(r.buffers[1], 128, N)
    name = f"tcgen05.mma.cta_group::2.kind::{kind}.block_scale.scale_vec::{vec}.m128n{N}k{K}"
    Bt, C = np.ascontiguousarray(B.T), np.zeros((128, N), np.uint32)
    want = layoutsim.mma(name, A, Bt, C, arch="sm_100a", raw=True, types=types, scale_a=sa, scale_b=sb)
    assert np.array_equal(got, want)
    assert np.count_nonzero(got) > 128 * N // 2
    (rec,) = r.mmas
    assert rec.name == name and rec.ctas == (0, 1)
    assert np.array_equal(rec.scale_a, sa) and np.array_equal(rec.scale_b, sb)
    if HAVE_MMASIM:
        assert oracle().compare_records(r.mmas)[f"kind::{kind} {types}"]["differ"] == 0
    if N <= 32:                 # every column j at lane j % 32 of each slab, column 0: the layouts coincide
        return
    # SFB laid out as for M = 256 (the 4x1 layout, columns j // 32 in every slab) scales half 1 with the wrong
    # columns' scales (or, where they disagree, leaves the two copies of a half different: a fault)
    sf = args[5].reshape(2, 128, SF_COLS)
    sf[:, :, 4:] = sf_images(np.resize(sa, (256, sa.shape[1])), sb, a_id, b_id)[:, :, 4:]
    try:
        wrong = d_of(run(kind, quals, N, issuer, args, M=128).buffers[1], 128, N)
    except PtxFault as e:
        assert "copies of SFB's scale factors" in str(e)
    else:
        assert not np.array_equal(wrong, got)


def per_mma(c, M=256):
    """blackwell_oracle.summary of one case's kernel run with record_mmas=True: its one MMA against MMA-Sim
    (tests/blackwell_crosscheck.py counts these)."""
    kind, quals, vec, types, N, a_id, b_id, swizzle, issuer = c
    seed = N + a_id + 7 * issuer if M == 256 else N + 3 * a_id + issuer
    *_, args = case(kind, vec, types, N, a_id, b_id, swizzle, seed, M=M)
    return summary(f"hand-written pair {'M=128 ' * (M == 128)}{kind} {types} N={N}",
                   run(kind, quals, N, issuer, args, M=M, record_mmas=True), 1)


ORACLE_KERNELS = {**{f"hand-written pair {c[0]} {c[3]} N={c[4]}": (lambda c=c: per_mma(c)) for c in CASES},
                  **{f"hand-written pair M=128 {c[0]} {c[3]} N={c[4]}": (lambda c=c: per_mma(c, 128)) for c in M128}}


def test_the_fidelity_line_names_the_pairs_scale_factor_assumption():
    kind, quals, vec, types, N, a_id, b_id, swizzle, issuer = CASES[0]
    *_, args = case(kind, vec, types, N, a_id, b_id, swizzle, 1)
    r = run(kind, quals, N, issuer, args)
    sources = [d["source"] for d in r.fidelity["documented_instructions"] if d["instruction"].startswith("tcgen05.mma")]
    assert sources and all("block-scaled cta_group::2" in s and "assumed" in s for s in sources)


def test_the_two_ctas_sfb_copies_must_agree():
    # each CTA holds all N columns' SFB; which copy scales which D rows is not documented: a fault
    kind, quals, vec, types, N, a_id, b_id, swizzle, issuer = CASES[2]
    *_, args = case(kind, vec, types, N, a_id, b_id, swizzle, 2)
    sf = args[5].reshape(2, 128, SF_COLS)
    sf[1, 3 + 32 * np.arange(4), 4] ^= np.uint32(1 << 8 * b_id)       # column 3's first scale, odd CTA, every slab
    with pytest.raises(PtxFault, match=r"the CTA pair's SFB scale factors differ \(scale 0 of column 3"):
        run(kind, quals, N, issuer, args)
    sf[1, 3 + 32 * np.arange(4), 4] ^= np.uint32(1 << 8 * b_id)
    sf[1, 40, 0] ^= np.uint32(1 << 8 * a_id)                          # one slab's copy of the odd CTA's SFA
    with pytest.raises(PtxFault, match="32-lane copies of SFA's scale factors at TMEM address 0x[0-9a-f]+ differ"):
        run(kind, quals, N, issuer, args)


def test_unallocated_scale_columns_are_faults():
    kind, quals, vec, types, N = "mxf4", "block_scale.scale_vec::2X", "2X", "f32.e2m1.e2m1.ue8m0", 32
    # SFB past the pair's 512 columns: not allocated (ptx/tmem.py)
    src = scaled_pair_kernel(N, f"{kind}.{quals}").replace("add.u32 %r16, %r2, 260;", "add.u32 %r16, %r2, 512;")
    *_, args = case(kind, vec, types, N, 0, 0, (None, None), 3)
    with pytest.raises(PtxFault, match="SFB"):
        ptx.run(src, "k", 2, 128, args, arch="sm_100", cluster=(2, 1, 1))


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas is not installed here")
@pytest.mark.parametrize("kind,quals", sorted({(c[0], c[1]) for c in CASES}))
def test_the_hand_written_kernels_build_with_ptxas_for_sm_100a(kind, quals, tmp_path):
    res = ptxas_sm100a(scaled_pair_kernel(64, f"{kind}.{quals}"), tmp_path)
    assert res.returncode == 0, res.stderr
