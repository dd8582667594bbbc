"""The seed programs on the simulator: results against numpy (exact arithmetic) and against
layoutsim.mma bit for bit; the wmma_v2 tile's shared-memory cost with and without padding;
the W8A8 GEMV's padding."""
import numpy as np
import pytest

import layoutsim
from layoutsim.sim import seeds
from sim_exact import exact_mma

# every seed runs with the real numerics; where the arithmetic is exact, also with the exact
# stand-in, which checks the data movement on its own
NUMERICS = [pytest.param(None, id="layoutsim.mma"), pytest.param(exact_mma, id="exact")]


def _bits(x):
    x = np.ascontiguousarray(x)
    return x.view(np.dtype(f"u{x.dtype.itemsize}"))


def _f16_random(rng, shape):
    """f16 values over a wide exponent range, both signs, with some subnormals and cancellation."""
    mant = rng.uniform(1, 2, shape) * rng.choice([-1, 1], shape)
    exp = rng.integers(-16, 8, shape)
    v = (mant * 2.0 ** exp).astype(np.float16)
    v[rng.random(shape) < 0.05] = 0
    return v


# ====================================================================== 1. mma.sync m16n8k16
@pytest.mark.parametrize("mma", NUMERICS)
def test_seed1_small_integers_equal_numpy(mma):
    rng = np.random.default_rng(1)
    a = rng.integers(-8, 9, (16, 16)).astype(np.float16)
    b = rng.integers(-8, 9, (16, 8)).astype(np.float16)
    c = rng.integers(-64, 65, (16, 8)).astype(np.float32)
    run = seeds.mma_sync_m16n8k16(a, b, c, mma=mma)
    want = a.astype(np.float64) @ b.astype(np.float64) + c
    assert run.result.dtype == np.float32 and (run.result == want).all()


@pytest.mark.parametrize("seed", range(5))
def test_seed1_random_equals_layoutsim_mma_bit_for_bit(seed):
    rng = np.random.default_rng(100 + seed)
    a, b = _f16_random(rng, (16, 16)), _f16_random(rng, (16, 8))
    c = (rng.standard_normal((16, 8)) * 2.0 ** rng.integers(-20, 10, (16, 8))).astype(np.float32)
    run = seeds.mma_sync_m16n8k16(a, b, c)
    ins = layoutsim.get(seeds.F16_MMA)
    want = layoutsim.mma(ins, _bits(a), _bits(b), _bits(c), arch="sm_90")
    assert (_bits(run.result) == _bits(np.asarray(want, np.float32))).all()


def test_seed1_trace():
    rng = np.random.default_rng(2)
    a = rng.integers(-2, 3, (16, 16)).astype(np.float16)
    b = rng.integers(-2, 3, (16, 8)).astype(np.float16)
    run = seeds.mma_sync_m16n8k16(a, b, mma=exact_mma)
    ops = [e.op for e in run.trace]
    assert ops == ["ld.global.b32"] * 6 + ["ld.global.v2.b32"] * 2 + [seeds.F16_MMA] + ["st.global.v2.b32"] * 2
    assert run.trace[8].instruction == layoutsim.get(seeds.F16_MMA).name


# ====================================================================== 2. wmma_v2 block tile
@pytest.mark.parametrize("mma", NUMERICS)
@pytest.mark.parametrize("b_load", ["x4", "x2"])
def test_seed2_small_integers_equal_numpy(mma, b_load):
    rng = np.random.default_rng(3)
    A = rng.integers(-4, 5, (64, 128)).astype(np.float16)
    B = rng.integers(-4, 5, (128, 64)).astype(np.float16)
    run = seeds.block_tile(A, B, pad=8, b_load=b_load, mma=mma)
    assert (run.result == A.astype(np.float64) @ B.astype(np.float64)).all()


def _chained_reference(A, B, instr=seeds.F16_MMA):
    """The 64x64 product as 4x8 tiles of m16n8k16, each a chain over K in steps of 16."""
    ins = layoutsim.get(instr)
    At = _bits(A).reshape(4, 16, -1)[:, None]                      # [4, 1, 16, K]
    Bt = _bits(B).reshape(-1, 8, 8).transpose(1, 0, 2)[None]      # [1, 8, K, 8]
    D = np.zeros((4, 8, 16, 8), np.uint32)
    for k in range(0, A.shape[1], 16):
        a = np.broadcast_to(At[..., k:k + 16], (4, 8, 16, 16))
        b = np.broadcast_to(Bt[..., k:k + 16, :], (4, 8, 16, 8))
        D = _bits(np.asarray(layoutsim.mma(ins, a, b, D, arch="sm_90"), np.float32))
    return D.view(np.float32).transpose(0, 2, 1, 3).reshape(64, 64)


def test_seed2_random_equals_chained_layoutsim_mma_bit_for_bit():
    rng = np.random.default_rng(4)
    A, B = _f16_random(rng, (64, 96)), _f16_random(rng, (96, 64))
    run = seeds.block_tile(A, B, pad=8)
    assert (_bits(run.result) == _bits(_chained_reference(A, B))).all()
    run2 = seeds.block_tile(A, B, pad=0, b_load="x2")
    assert (_bits(run2.result) == _bits(run.result)).all()


def test_seed2_trace_shape():
    rng = np.random.default_rng(5)
    A = rng.integers(-2, 3, (64, 64)).astype(np.float16)
    B = rng.integers(-2, 3, (64, 64)).astype(np.float16)
    run = seeds.block_tile(A, B, mma=exact_mma)
    s = run.trace.by_op()
    iters = 64 // 32
    assert s["st.shared.v4.b32"]["count"] == 4 * iters          # 2 A + 2 B fills per thread
    assert s["ldmatrix.x4"]["count"] == 2 * 2 * iters           # 2 per k16 step
    assert s["ldmatrix.x4.trans"]["count"] == 2 * 2 * iters
    assert s[seeds.F16_MMA]["count"] == 8 * 2 * iters
    assert all(e.active == 128 for e in run.trace)


def test_seed2_pad8_vs_pad0_bank_conflicts():
    rng = np.random.default_rng(6)
    A = rng.integers(-2, 3, (64, 64)).astype(np.float16)
    B = rng.integers(-2, 3, (64, 64)).astype(np.float16)
    by = {pad: seeds.block_tile(A, B, pad=pad, mma=exact_mma).trace for pad in (8, 0)}
    s8, s0 = by[8].by_op(), by[0].by_op()
    # every shared access has a cost in the trace, per instruction
    for tr in by.values():
        for e in tr:
            if e.op.startswith(("ldmatrix", "st.shared")):
                assert e.wavefronts is not None and len(e.per_warp) == 4
                assert e.wavefronts == e.ideal + e.conflicts
    # PAD=8: rows 80 B (A) and 144 B (B) apart: ldmatrix is conflict-free
    assert s8["ldmatrix.x4"]["conflicts"] == 0 and s8["ldmatrix.x4.trans"]["conflicts"] == 0
    # PAD=0: rows 64 B apart -> 4 rows share each bank group (4x); 128 B apart -> 8x
    assert s0["ldmatrix.x4"]["wavefronts"] == 4 * s0["ldmatrix.x4"]["ideal"]
    assert s0["ldmatrix.x4.trans"]["wavefronts"] == 8 * s0["ldmatrix.x4.trans"]["ideal"]
    assert s0["ldmatrix.x4"]["ideal"] == s8["ldmatrix.x4"]["ideal"]
    assert by[0].totals()["wavefronts"] > by[8].totals()["wavefronts"]
    # per instruction: one ldmatrix.x4 of one warp costs 4 wavefronts (one per 8x8 matrix) with PAD=8
    e = next(e for e in by[8] if e.op == "ldmatrix.x4")
    assert e.per_warp == ((4, 4, 0),) * 4
    e = next(e for e in by[0] if e.op == "ldmatrix.x4")
    assert e.per_warp == ((16, 4, 12),) * 4


# ====================================================================== 3. W8A8 GEMV
@pytest.mark.filterwarnings("ignore:.*UNVERIFIED ASSUMPTION")
@pytest.mark.parametrize("mma", NUMERICS)
@pytest.mark.parametrize("arch,layout", [("sm_90", "x_in_A"), ("sm_90", "w_in_A"), ("sm_80", "x_in_A"),
                                         ("gfx1201", "x_in_A")])
def test_seed3_gemv_equals_numpy(mma, arch, layout):
    rng = np.random.default_rng(7)
    W = rng.integers(-128, 128, (32, 512)).astype(np.int8)
    x = rng.integers(-128, 128, 512).astype(np.int8)
    W[0], x[:] = -128, -128                  # extremes: 512 * 2^14 per output, no wrap
    run = seeds.gemv_w8a8(W, x, layout=layout, arch=arch, mma=mma)
    y = run.result["y"]
    assert y.dtype == np.int32 and (y == W.astype(np.int64) @ x.astype(np.int64)).all()
    mmas = [e for e in run.trace if e.instruction == run.result["padding"]["instruction"]]
    assert len(mmas) == run.result["padding"]["mma_count"]


def test_seed3_padding_report():
    rng = np.random.default_rng(8)
    W = rng.integers(-128, 128, (16, 64)).astype(np.int8)
    x = rng.integers(-128, 128, 64).astype(np.int8)
    p = seeds.gemv_w8a8(W, x, layout="x_in_A", mma=exact_mma).result["padding"]
    assert p["A_rows_used"] == 1 and p["A_rows"] == 16 and p["A_padding"] == 15 / 16
    assert p["useful_mac_fraction"] == 1 / 16 and p["mma_count"] == 2 * 2 and p["D_useful"] == "8 of 128"
    assert p["issued_macs"] == 16 * p["useful_macs"]
    q = seeds.gemv_w8a8(W, x, layout="w_in_A", mma=exact_mma).result["padding"]
    assert q["B_padding"] == 7 / 8 and q["useful_mac_fraction"] == 1 / 8 and q["mma_count"] == 2
    r = seeds.gemv_w8a8(W, x, arch="gfx1201", mma=exact_mma).result["padding"]
    assert r["A_padding"] == 15 / 16 and r["useful_mac_fraction"] == 1 / 16 and r["mma_count"] == 4
    assert "15/16" not in seeds.padding_summary(r) and "93.75% padding" in seeds.padding_summary(r)


def test_seed3_tile_equals_layoutsim_mma():
    """One mma of the x_in_A GEMV, on its own: the simulator's D bits are layoutsim.mma's."""
    rng = np.random.default_rng(9)
    W = rng.integers(-128, 128, (8, 32)).astype(np.int8)
    x = rng.integers(-128, 128, 32).astype(np.int8)
    y = seeds.gemv_w8a8(W, x).result["y"]
    A = np.zeros((16, 32), np.uint8)
    A[0] = x.view(np.uint8)
    B = np.ascontiguousarray(W.T).view(np.uint8)
    D = np.asarray(layoutsim.mma(layoutsim.get(seeds.S8_MMA), A, B, np.zeros((16, 8), np.uint32), arch="sm_90"))
    assert (D[0].astype(np.int32) == y).all() and (D[1:] == 0).all()


def test_the_demo_script_runs_and_checks_itself(capsys):
    # `python -m layoutsim.sim.seeds`: each seed program prints its own check against exact math
    import warnings
    from layoutsim.sim import seeds
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        seeds.main()
    heads = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("== ")]
    assert heads == ["== 1. mma.sync.m16n8k16 packed by hand: max |D - A B| = 0.0",
                     "== 2. wmma_v2-style 64x64 tile, BK=32, PAD=8",
                     "== 2. wmma_v2-style 64x64 tile, BK=32, PAD=0",
                     "== 3. W8A8 GEMV 32x256 on sm_90, y == W x: True",
                     "== 3. W8A8 GEMV 32x256 on sm_90, y == W x: True",
                     "== 3. W8A8 GEMV 32x256 on gfx1201, y == W x: True"]
