"""fma.rn.f32's compiled loop (layoutsim/ptx/fma_kernel.py) against its numpy form
(ops_float.fma32_rn_numpy): the same bits, and a refusal (None) exactly where the numpy form
takes the rounding to odd, on random values and on the cases each branch is there for; both
agree with the rounding to odd (ops_float.fma32) on every lane they answer."""
import numpy as np

from layoutsim.ptx import fma_kernel, ops_float
from layoutsim.ptx import types as T


def _same(x, y, z):
    got = fma_kernel.fma_rn(x, y, z)
    with np.errstate(all="ignore"):
        p, c = x.astype(np.float64) * y.astype(np.float64), z.astype(np.float64)
        s = p + c
        bb = s - p
        rounded = ((p - (s - bb)) + (c - bb)) != 0          # TwoSum's error
    risky = ((s.view(np.uint64) & np.uint64((1 << 29) - 1)) == np.uint64(1 << 28)) | \
        ((s != 0) & (np.abs(s) < 2.0 ** -126))
    if (risky & rounded).any():
        assert got is None
        return
    want = ops_float.fma32_rn_numpy(x, y, z)
    odd = np.asarray(ops_float.fma32(x, y, z, T.get("f32"), "rn", False, False), np.float32)
    assert np.asarray(want, np.float32).tobytes() == odd.tobytes()
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
             (1, 2.0 ** -24, 1),           # 1 + 2^-24: an f32 halfway point, the exact sum
             (2.0 ** -70, 2.0 ** -70, 0),  # an f32 subnormal sum, exact
             (1 + 2.0 ** -20, 1 - 2.0 ** -20, 2.0 ** 24 + 2),   # a halfway point the float64 sum rounded to
             (1 + 2.0 ** -20, 2.0 ** -130, 2.0 ** -127),        # a subnormal the float64 sum rounded to
             (1e-30, 1e-30, 2.0 ** -126)]
    for c in cases:
        x, y, z = (np.array([v], f) for v in c)
        _same(x, y, z)
    x = np.full(64, 1 + 2.0 ** -20, f)
    y = np.ones(64, f)
    z = np.ones(64, f)
    y[40], z[40] = 1 - 2.0 ** -20, 2.0 ** 24 + 2    # one rounded halfway lane among ordinary ones:
    assert fma_kernel.fma_rn(x, y, z) is None      # the whole step refused


def test_exact_halfway_points_are_answered_rounded_ones_refused():
    """f16 inputs make products of few bits, whose exact sums are often f32 halfway points: those
    are rounded once, correctly; a halfway point that float64's rounding made is refused."""
    f = np.float32
    one = np.array([1.0], f)
    got = fma_kernel.fma_rn(one, np.array([2.0 ** -24], f), one)
    assert got is not None and got[0] == 1.0              # 1 + 2^-24 to nearest even: 1
    x, y, z = np.array([1 + 2.0 ** -20], f), np.array([1 - 2.0 ** -20], f), np.array([2.0 ** 24 + 2], f)
    assert fma_kernel.fma_rn(x, y, z) is None
    assert ops_float.fma32_rn_numpy(x, y, z)[0] == 2.0 ** 24 + 2   # below the halfway point 2^24 + 3
    rng = np.random.default_rng(25)
    for _ in range(20):
        x, y, z = (rng.standard_normal(256).astype(np.float16).astype(f) for _ in range(3))
        _same(x, y, z)
