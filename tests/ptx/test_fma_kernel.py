"""fma.rn.f32's compiled loop (layoutsim/ptx/fma_kernel.py) against its numpy form
(ops_float.fma32_rn_numpy): the same bits, and a refusal (None) exactly where the numpy form
takes the rounding to odd, on random values and on the cases each branch is there for."""
import numpy as np

from layoutsim.ptx import fma_kernel, ops_float


def _same(x, y, z):
    got = fma_kernel.fma_rn(x, y, z)
    with np.errstate(all="ignore"):
        s = x.astype(np.float64) * y.astype(np.float64) + z.astype(np.float64)
    risky = ((s.view(np.uint64) & np.uint64((1 << 29) - 1)) == np.uint64(1 << 28)) | \
        ((s != 0) & (np.abs(s) < 2.0 ** -126))
    if risky.any():
        assert got is None
        return
    want = ops_float.fma32_rn_numpy(x, y, z)
    assert got.dtype == np.float32 and got.tobytes() == np.asarray(want, np.float32).tobytes()
    assert np.array_equal(ops_float.fma32_rn(x, y, z).view(np.uint32), want.view(np.uint32))


def test_random_bits_and_values():
    rng = np.random.default_rng(26)
    for _ in range(50):
        x, y, z = (rng.integers(0, 1 << 32, 256, dtype=np.uint64).astype(np.uint32).view(np.float32)
                   for _ in range(3))
        _same(x, y, z)
        x, y, z = (rng.standard_normal(256).astype(np.float32) for _ in range(3))
        _same(x, y, z)


def test_nan_inf_overflow_and_the_refused_cases():
    f = np.float32
    cases = [(np.nan, 1, 0), (np.inf, 0, 0), (np.inf, 1, -np.inf), (3e38, 10, 0), (-3e38, 10, 0),
             (1, 1, 1), (0, 0, -0.0), (-0.0, 1, 0.0),
             (1, 2.0 ** -24, 1),           # 1 + 2^-24: an f32 halfway point
             (2.0 ** -70, 2.0 ** -70, 0),  # an f32 subnormal sum
             (1e-30, 1e-30, 2.0 ** -126)]
    for c in cases:
        x, y, z = (np.array([v], f) for v in c)
        _same(x, y, z)
    x = np.ones(64, f)
    y = np.full(64, 2.0 ** -24, f)
    y[40] = 1                              # one halfway lane among ordinary ones: the whole step refused
    y[:40] = 1
    assert fma_kernel.fma_rn(x, y, x) is None
