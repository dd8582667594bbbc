"""tcgen05.shift, tcgen05.mma.ws with its collector buffers, and tcgen05.cp .4x256b / .cta_group::2
in the executor (layoutsim/ptx/ops_tcgen05_extra.py, collector.py), hand-written PTX against the PTX
ISA 9.x (v9.2) text (no Blackwell GPU here; every expected value is the document's, written out
again below, each MMA bit for bit layoutsim.mma's). Every kernel assembles with
`ptxas -arch=sm_100a` (test_the_kernels_assemble_for_sm_100a).

- tcgen05.shift.cta_group::1.down (9.7.16.9.3): the 32-byte element of rows 0..30 of the warp's
  32-lane slab moves one row down (the implicit .31x256b shape of 9.7.16.2.3 'Data Movement Shape');
- tcgen05.mma.ws (9.7.16.10.9.3): M = 32/64/128, N = 64/128/256 (9.7.16.2.1 Table 39), D in TMEM by
  Layout G (M=32), E (M=64), D (M=128) of 9.7.16.10.5, written out as TVM TIRx's closed forms of those
  figures (i, j -> lane, column): G: (i + 32 (j // (N/4)), j % (N/4)); E: (i + 64 (j // (N/2)),
  j % (N/2)); D: (i, j) (= CUTLASS 4.2's UMMA::tmem_frg_ws: tests/isa/test_tcgen05.py);
- the collector buffers (9.7.16.10 and the .collector_usage table of 9.7.16.10.9.3): ::use needs a
  valid fill; reuse is opportunistic, so a use whose memory changed since the fill is undetermined;
- tcgen05.cp.4x256b: row r to TMEM lane 32 r (CUTLASS 4.2 SM100_UTCCP_4dp256bit traits, assumed);
  .cta_group::2: both CTAs of the pair, each from its own shared memory at the descriptor address.
"""
import shutil

import numpy as np
import pytest

import layoutsim
from layoutsim import ptx
from layoutsim.isa.ptx_tcgen05_idesc import encode
from layoutsim.ptx.state import PtxFault
from layoutsim.smem.umma import UmmaDescriptor

from test_ptx_tcgen05 import ALLOC, k_major, mma_kernel, operand, ptxas_sm100a, read_back, rules_kernel, SM
from test_tcgen05_pair import pair_kernel

KS = {"tf32": 8, "f16": 16, "f8f6f4": 32, "i8": 32}
MMA_LINE = "tcgen05.mma.cta_group::1.kind::KIND [%r2], %rd10, %rd11, %r20, %p3;"
PAIR_MMA = "tcgen05.mma.cta_group::2.kind::f16 [%r2], %rd10, %rd11, %r20, %p3;"


# ---- tcgen05.shift ---------------------------------------------------------------------------------
def shift_kernel(shift_line):
    """Each lane stores lane*100 + c into columns c = 0..15 of its row, thread 0 shifts, all read back."""
    movs = "\n".join(f"  add.u32 %v{c}, %r4, {c};" for c in range(16))
    return rules_kernel(ALLOC.format(n=32) + f"""  mov.u32 %r3, %laneid;
  mul.lo.u32 %r4, %r3, 100;
{movs}
  tcgen05.st.sync.aligned.32x32b.x16.b32 [%r2], {{{', '.join(f'%v{c}' for c in range(16))}}};
  tcgen05.wait::st.sync.aligned;
  setp.eq.u32 %p1, %r3, 0;
  @%p1 {shift_line}
  tcgen05.fence::before_thread_sync;
  bar.sync 0;
  tcgen05.fence::after_thread_sync;
{read_back("%r2", 16, "%r3")}  tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;
  tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r2, 32;
""").replace(".entry k()", ".entry k(.param .u64 out)").replace(
        ".reg .pred %p<4>;", ".reg .pred %p<4>; .reg .b32 %v<16>; .reg .b32 %o<16>; .reg .b64 %rd<6>;")


def test_shift_moves_rows_0_to_30_of_eight_columns_one_row_down():
    out = np.zeros((32, 16), np.uint32)
    r = ptx.run(shift_kernel("tcgen05.shift.cta_group::1.down [%r2];"), "k", 1, 32, [out], arch="sm_100")
    got = r.buffers[0]
    before = np.arange(32)[:, None] * 100 + np.arange(16)
    want = before.copy()
    want[1:, :8] = before[:-1, :8]                   # rows 0..30 -> 1..31; the last row's element is gone
    assert np.array_equal(got, want)                 # columns 8..15 (past the 256 bits) untouched
    assert any("tcgen05.shift" in n and "assumed" in n for n in r.notes)


def test_shift_of_a_lane_that_is_not_a_multiple_of_32_is_a_fault():
    src = shift_kernel("tcgen05.shift.cta_group::1.down [%r5];").replace(
        "  @%p1 tcgen05.shift", "  add.u32 %r5, %r2, 0x10000;\n  @%p1 tcgen05.shift")
    with pytest.raises(PtxFault, match="lane 1 is not a multiple of 32") as e:
        ptx.run(src, "k", 1, 32, [np.zeros((32, 16), np.uint32)], arch="sm_100")
    assert e.value.fault["kind"] == "tensor_memory"


# ---- tcgen05.mma.ws -------------------------------------------------------------------------------
def ws_cells(M, N):
    """(lane, column) of D[i][j] for a .ws MMA: Layouts G / E / D (see the module docstring)."""
    i, j = np.meshgrid(np.arange(M), np.arange(N), indexing="ij")
    if M == 32:
        return i + 32 * (j // (N // 4)), j % (N // 4)
    if M == 64:
        return i + 64 * (j // (N // 2)), j % (N // 2)
    return i, j


def ws_image(kind, types, M, N, seed):
    """(A [M, K], B [N, K], the shared image, (a-desc, b-desc)): K-major no-swizzle, A at 0, B at 8192."""
    _, fa, fb = types.split(".")
    K = KS[kind]
    rng = np.random.default_rng(seed)
    A, B = operand(rng, fa, (M, K)), operand(rng, fb, (N, K))
    e = A.dtype.itemsize
    img = np.zeros(16384, np.uint8)
    lbo, sbo = 128, 128 * (K * e // 16)
    for x, mn, base in ((A, M, 0), (B, N, 8192)):
        img[(base + k_major(mn, K, e, lbo, sbo))[..., None] + np.arange(e)] = x.view(np.uint8).reshape(mn, K, e)
    return A, B, img, [UmmaDescriptor(SM + base, lbo, sbo).encode() for base in (0, 8192)]


def ws_run(kind, types, M, N, lines, seed=0):
    A, B, img, d = ws_image(kind, types, M, N, seed)
    cols = {32: N // 4, 64: N // 2}.get(M, N)
    src = mma_kernel(cols, 16384).replace(MMA_LINE, "\n  ".join(lines).replace("KIND", kind))
    out = np.zeros((128, cols), np.uint32)
    r = ptx.run(src, "k", 1, 128, [img, out, np.uint64(d[0]), np.uint64(d[1]),
                                   np.uint32(encode(kind, M, N, types))], arch="sm_100")
    return r.buffers[1], A, B


def ws_reference(kind, types, M, N, A, B, times=1):
    inst = layoutsim.get(f"tcgen05.mma.ws.cta_group::1.kind::{kind}.m{M}n{N}k{KS[kind]}")
    e = A.dtype.itemsize
    a, b = A.view(f"u{e}"), np.ascontiguousarray(B.view(f"u{e}").T)
    D = np.zeros((M, N), np.uint16 if types.startswith("f16") else np.uint32)
    for _ in range(times):
        D = layoutsim.mma(inst, a, b, D, arch="sm_100a", raw=True, types=types)
    return np.asarray(D, np.uint32)


WS = "tcgen05.mma.ws.cta_group::1.kind::KIND"


@pytest.mark.parametrize("kind,types,M,N", [
    ("f16", "f32.f16.f16", 32, 64), ("f16", "f16.f16.f16", 64, 128), ("f16", "f32.bf16.bf16", 128, 64),
    ("tf32", "f32.tf32.tf32", 32, 128), ("f8f6f4", "f32.e4m3.e5m2", 64, 64), ("i8", "s32.s8.u8", 32, 256),
])
def test_ws_mma_is_layoutsim_mma_in_its_data_path_layout(kind, types, M, N):
    got, A, B = ws_run(kind, types, M, N, [f"{WS} [%r2], %rd10, %rd11, %r20, %p3;"], seed=M + N)
    lane, col = ws_cells(M, N)
    cells = got[lane, col] & (0xFFFF if types.startswith("f16") else 0xFFFFFFFF)
    assert np.array_equal(cells, ws_reference(kind, types, M, N, A, B))


def test_ws_collector_fill_then_use_accumulates_as_two_mmas():
    src_lines = [f"{WS}.collector::b2::fill [%r2], %rd10, %rd11, %r20, %p3;", "mov.pred %p3, 1;",
                 "mov.u64 %rd12, 0;",                                    # a zero-column mask using every column
                 f"{WS}.collector::b2::lastuse [%r2], %rd10, %rd11, %r20, %p3, %rd12;"]
    got, A, B = ws_run("f16", "f32.f16.f16", 64, 64, src_lines, seed=3)
    lane, col = ws_cells(64, 64)
    assert np.array_equal(got[lane, col], ws_reference("f16", "f32.f16.f16", 64, 64, A, B, times=2))


@pytest.mark.parametrize("lines,match", [
    ([f"{WS}.collector::b1::use [%r2], %rd10, %rd11, %r20, %p3;"], "needs a previous fill of collector buffer b1"),
    ([f"{WS}.collector::b0::fill [%r2], %rd10, %rd11, %r20, %p3;",
      f"{WS}.collector::b0::lastuse [%r2], %rd10, %rd11, %r20, %p3;",
      f"{WS}.collector::b0::use [%r2], %rd10, %rd11, %r20, %p3;"], "needs a previous fill of collector buffer b0"),
    ([f"{WS}.collector::b3::fill [%r2], %rd10, %rd11, %r20, %p3;",
      f"{WS} [%r2], %rd10, %rd11, %r20, %p3;",                     # no qualifier: b0::discard, b3 kept
      "mov.u32 %r30, sm;", "st.shared.u32 [%r30+8192], 77;",      # B's first bytes change
      f"{WS}.collector::b3::use [%r2], %rd10, %rd11, %r20, %p3;"], "no longer holds the B matrix"),
    (["mov.u64 %rd12, 0x8000000000;", f"{WS} [%r2], %rd10, %rd11, %r20, %p3, %rd12;"],
     "zero-column mask descriptor 0x0000008000000000 generates a mask"),
    ([f"tcgen05.mma.cta_group::1.kind::KIND.collector::a::use [%r2], %rd10, %rd11, %r20, %p3;"],
     "needs a previous fill of collector buffer a"),
])
def test_collector_misuse_is_a_fault(lines, match):
    with pytest.raises(PtxFault, match=match):
        ws_run("f16", "f32.f16.f16", 128, 64, lines)


def test_dense_collector_a_fill_then_use_is_two_mmas():
    lines = ["tcgen05.mma.cta_group::1.kind::KIND.collector::a::fill [%r2], %rd10, %rd11, %r20, %p3;",
             "mov.pred %p3, 1;",
             "tcgen05.mma.cta_group::1.kind::KIND.collector::a::lastuse [%r2], %rd10, %rd11, %r20, %p3;"]
    got, A, B = ws_run("f16", "f32.f16.f16", 128, 64, lines, seed=5)
    inst = layoutsim.get("tcgen05.mma.cta_group::1.kind::f16.m128n64k16")
    a, b = A.view(np.uint16), np.ascontiguousarray(B.view(np.uint16).T)
    D = np.zeros((128, 64), np.uint32)
    for _ in range(2):
        D = layoutsim.mma(inst, a, b, D, arch="sm_100a", raw=True, types="f32.f16.f16")
    assert np.array_equal(got, np.asarray(D, np.uint32))


@pytest.mark.parametrize("line,match", [
    ("tcgen05.mma.ws.cta_group::2.kind::f16 [%r1], %rd1, %rd1, %r1, %p1;", "does not take .cta_group::2"),
    ("tcgen05.mma.ws.sp.cta_group::1.kind::f16 [%r1], %rd1, %rd1, %r1, %p1;", r"tcgen05.mma.ws.sp takes .*\[sp-meta-tmem\]"),
    ("tcgen05.mma.ws.cta_group::1.kind::f16.collector::a::fill [%r1], %rd1, %rd1, %r1, %p1;",
     "takes .collector::{b0, b1, b2, b3}"),
    ("tcgen05.mma.ws.cta_group::1.kind::mxf8f6f4 [%r1], %rd1, %rd1, %r1, %p1;", "kind::mxf8f6f4: tcgen05.mma.ws"),
    ("tcgen05.mma.cta_group::1.kind::f16.collector::b0::fill [%r1], %rd1, %rd1, %r1, %p1;",
     "takes .collector::{a}"),
    ("tcgen05.cp.cta_group::1.128x256b.b8x16.b4x16_p64 [%r1], %rd1;", "decompression"),
])
def test_what_stays_unmodelled_is_refused_in_one_line(line, match):
    with pytest.raises(layoutsim.LayoutsimError, match=match):
        ptx.run(rules_kernel(f"  .reg .b64 %rd<2>;\n  {line}"), "k", 1, 32, [], arch="sm_100")


def test_ws_idesc_of_a_shape_table_39_does_not_list_is_a_fault():
    A, B, img, d = ws_image("f16", "f32.f16.f16", 64, 64, 0)
    src = mma_kernel(32, 16384).replace(MMA_LINE, f"{WS} [%r2], %rd10, %rd11, %r20, %p3;".replace("KIND", "f16"))
    with pytest.raises(PtxFault, match="m64n32k16 is not a legal .ws shape"):
        ptx.run(src, "k", 1, 128, [img, np.zeros((128, 32), np.uint32), np.uint64(d[0]), np.uint64(d[1]),
                                   np.uint32(encode("f16", 64, 32, "f32.f16.f16"))], arch="sm_100")


# ---- tcgen05.cp .4x256b and .cta_group::2 ----------------------------------------------------------
def test_cp_4x256b_puts_row_r_in_lane_32r():
    rng = np.random.default_rng(4)
    src = rng.integers(0, 256, (4, 32), dtype=np.uint8)
    img = np.zeros(16384, np.uint8)
    img[k_major(4, 32, 1, 128, 256)] = src                     # 4 rows of the first core matrices
    kernel = mma_kernel(8, 16384).replace(MMA_LINE, "tcgen05.cp.cta_group::1.4x256b [%r2], %rd10;")
    got = ptx.run(kernel, "k", 1, 128, [img, np.zeros((128, 8), np.uint32),
                                        np.uint64(UmmaDescriptor(SM, 128, 256).encode()), np.uint64(0),
                                        np.uint32(0)], arch="sm_100").buffers[1]
    want = np.zeros((128, 8), np.uint32)
    want[32 * np.arange(4)] = src.view("<u4")
    assert np.array_equal(got, want)


def test_cp_cta_group_2_copies_each_ctas_rows_into_its_own_tmem():
    rng = np.random.default_rng(6)
    src = rng.integers(0, 256, (2, 128, 16), dtype=np.uint8)    # each CTA's 128 rows of 16 bytes
    img = np.zeros((2, 16384), np.uint8)
    for c in range(2):
        img[c][k_major(128, 16, 1, 128, 128)] = src[c]
    kernel = pair_kernel(4).replace(PAIR_MMA, "tcgen05.cp.cta_group::2.128x128b [%r2], %rd10;")
    out = np.zeros((256, 4), np.uint32)
    got = ptx.run(kernel, "k", 2, 128, [img.reshape(-1), out, np.uint64(UmmaDescriptor(SM, 128, 128).encode()),
                                        np.uint64(0), np.uint32(0)], arch="sm_100", cluster=(2, 1, 1)).buffers[1]
    assert np.array_equal(got, src.reshape(256, 16).view("<u4"))


def test_shift_cta_group_2_shifts_both_tmems_of_the_pair():
    # each CTA's 128 rows of 16 bytes copied in by tcgen05.cp.cta_group::2 (as above), then one thread of
    # the pair shifts the first slab: rows 0..30 of columns 0..3 (of the 8 the .31x256b shape moves) move down
    rng = np.random.default_rng(8)
    src = rng.integers(0, 256, (2, 128, 16), dtype=np.uint8)
    img = np.zeros((2, 16384), np.uint8)
    for c in range(2):
        img[c][k_major(128, 16, 1, 128, 128)] = src[c]
    kernel = pair_kernel(4).replace(PAIR_MMA, "tcgen05.cp.cta_group::2.128x128b [%r2], %rd10;\n"
                                              "  tcgen05.shift.cta_group::2.down [%r2];")
    got = ptx.run(kernel, "k", 2, 128, [img.reshape(-1), np.zeros((256, 4), np.uint32),
                                        np.uint64(UmmaDescriptor(SM, 128, 128).encode()), np.uint64(0), np.uint32(0)],
                  arch="sm_100", cluster=(2, 1, 1)).buffers[1].reshape(2, 128, 4)
    want = src.view("<u4").copy()
    want[:, 1:32] = src.view("<u4")[:, 0:31]
    assert np.array_equal(got, want)


# ---- the kernels are PTX ptxas accepts -----------------------------------------------------------
@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas is not installed here")
def test_the_kernels_assemble_for_sm_100a(tmp_path):
    kernels = [shift_kernel("tcgen05.shift.cta_group::1.down [%r2];"),
               mma_kernel(16, 16384).replace(MMA_LINE, "\n  ".join([
                   "mov.u64 %rd12, 0;",
                   f"{WS}.collector::b2::fill [%r2], %rd10, %rd11, %r20, %p3, %rd12;",
                   f"{WS}.collector::b2::use [%r2], [%r2], %rd11, %r20, %p3;",
                   "tcgen05.cp.cta_group::1.4x256b [%r2], %rd10;"]).replace("KIND", "i8")),
               pair_kernel(4).replace(PAIR_MMA, "tcgen05.cp.cta_group::2.4x256b [%r2], %rd10;\n"
                                                "  tcgen05.shift.cta_group::2.down [%r2];")]
    for n, src in enumerate(kernels):
        res = ptxas_sm100a(src, tmp_path, f"k{n}")
        assert res.returncode == 0, res.stderr
