"""nvcuda::wmma on doubles (m8n8k4 .f64, DMMA): fragments from the catalog's measured maps, the
product through layoutsim.mma's f64 mma.sync m8n8k4, the costs from the SASS ptxas emits
(layoutsim/ptx/data/wmma_sm_90.json). Kernel written here in the form nvcc 13.0 emits for
wmma::load_matrix_sync / mma_sync / store_matrix_sync on double fragments (the rounding modifier
after the types). Expected values: PTX ISA 9.0 section 9.7.14.4 (wmma: D = A x B + C on the
matrices in memory, row or column major with the given leading dimension); inputs are multiples of
1/4 below 2, so every product and sum is exact in f64 and numpy's A @ B + C is the answer."""
import shutil

import numpy as np
import pytest

import layoutsim.ptx as P
from layoutsim.errors import LayoutsimError

HEAD = ".version 8.0\n.target sm_90\n.address_size 64\n"


def _kernel(al, bl, cl, dl, lda, ldb, ldc, space="", rnd=".rn"):
    return HEAD + f"""
.visible .entry k(.param .u64 pd, .param .u64 pa, .param .u64 pb, .param .u64 pc) {{
  .reg .b32 %r<4>; .reg .f64 %fd<8>; .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [pd]; ld.param.u64 %rd2, [pa]; ld.param.u64 %rd3, [pb]; ld.param.u64 %rd4, [pc];
  mov.u32 %r1, {lda}; mov.u32 %r2, {ldb}; mov.u32 %r3, {ldc};
  wmma.load.a.sync.aligned.{al}.m8n8k4{space}.f64 {{%fd1}}, [%rd2], %r1;
  wmma.load.b.sync.aligned.{bl}.m8n8k4{space}.f64 {{%fd2}}, [%rd3], %r2;
  wmma.load.c.sync.aligned.{cl}.m8n8k4{space}.f64 {{%fd3, %fd4}}, [%rd4], %r3;
  wmma.mma.sync.aligned.{al}.{bl}.m8n8k4.f64.f64.f64.f64{rnd} {{%fd5, %fd6}}, {{%fd1}}, {{%fd2}}, {{%fd3, %fd4}};
  wmma.store.d.sync.aligned.{dl}.m8n8k4{space}.f64 [%rd1], {{%fd5, %fd6}}, %r3;
  ret;
}}"""


def _place(M, layout, ld):
    """M laid out with leading dimension ld (row: ld doubles between rows; col: between columns);
    the padding is NaN, which must never reach the result."""
    R, C = M.shape
    if layout == "row":
        buf = np.full((R, ld), np.nan)
        buf[:, :C] = M
    else:
        buf = np.full((C, ld), np.nan)
        buf[:, :R] = M.T
    return buf.reshape(-1)


def _read(buf, layout, ld, R=8, C=8):
    m = buf.reshape(-1, ld)
    return m[:R, :C] if layout == "row" else m[:C, :R].T


@pytest.mark.parametrize("al, bl, cl, dl", [("row", "col", "row", "row"), ("col", "row", "col", "col"),
                                            ("row", "row", "col", "row"), ("col", "col", "row", "col")])
def test_f64_wmma_is_a_times_b_plus_c(al, bl, cl, dl):
    rng = np.random.default_rng(24)
    A, B, C = (rng.integers(-8, 8, s) / 4 for s in ((8, 4), (4, 8), (8, 8)))
    lda, ldb, ldc = 10, 9, 12                   # padded leading dimensions: the stride is honoured
    d = np.zeros(8 * ldc)
    r = P.run(_kernel(al, bl, cl, dl, lda, ldb, ldc), "k", 1, 32,
              [d, _place(A, al, lda), _place(B, bl, ldb), _place(C, cl, ldc)])
    got = _read(r.buffers[0].view(np.float64), dl, ldc)
    assert np.array_equal(got, A @ B + C)
    # store_matrix_sync writes the 8x8 matrix only: the padding keeps its zeros
    assert np.count_nonzero(r.buffers[0].view(np.float64).reshape(8, ldc)[:, 8:]) == 0


def test_f64_wmma_rounds_once_per_fma_like_dmma():
    # DMMA.8x8x4: one product/sum chain in f64 (layoutsim.mma's m8n8k4 .f64, PTX ISA 9.7.14.5.14:
    # .rn); 1 + 2^-60 is not representable, a single rounding of the exact sum gives the same
    # result as layoutsim.mma on the same tile, which the wmma path must reproduce bit for bit
    from layoutsim.numerics import mma as numeric_mma
    rng = np.random.default_rng(7)
    A, B, C = rng.standard_normal((8, 4)), rng.standard_normal((4, 8)), rng.standard_normal((8, 8))
    r = P.run(_kernel("row", "col", "row", "row", 4, 4, 8), "k", 1, 32,
              [np.zeros(64), A.reshape(-1), B.T.reshape(-1), C.reshape(-1)])
    want = numeric_mma("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64", A.view(np.uint64)[None],
                       B.view(np.uint64)[None], C.view(np.uint64)[None], arch="sm_90", raw=True)[0]
    assert np.array_equal(r.buffers[0].view(np.uint64).reshape(8, 8), want)


def test_f64_wmma_costs_the_sass_ptxas_emits():
    # data/wmma_sm_90.json (gpu_check/wmma_probe.py, nvcc 13.0 + cuobjdump): an A or B fragment is
    # one LD.E.64 per lane, a row-major C one LD.E.128, the row-major D store one ST.E.128; a dense
    # 8x4 (8x8) double matrix is 256 (512) bytes: 8 (16) sectors of 32 bytes in one request
    r = P.run(_kernel("row", "col", "row", "row", 4, 4, 8), "k", 1, 32,
              [np.zeros(64), np.zeros(32), np.zeros(32), np.zeros(64)])
    got = [(s.sass, s.requests, s.sectors) for s in r.instructions
           if s.text.startswith(("wmma.load", "wmma.store"))]
    want = [("LD.E.64", 1, 8), ("LD.E.64", 1, 8), ("LD.E.128", 1, 16), ("ST.E.128", 1, 16)]
    assert [g[1:] for g in got] == [w[1:] for w in want]
    if shutil.which("ptxas"):             # the SASS column names what ptxas emitted (none without it)
        assert got == want


def test_f64_wmma_directed_rounding_is_refused():
    with pytest.raises(LayoutsimError, match=r"wmma.mma with rounding .rz \(only .rn"):
        P.run(_kernel("row", "col", "row", "row", 4, 4, 8, rnd=".rz"), "k", 1, 32,
              [np.zeros(64), np.zeros(32), np.zeros(32), np.zeros(64)])
