"""fround.round_to's f16 round-to-nearest path (numpy's float64 -> float16 cast) gives the bits
formats.encode gives (the project's exact rounding, the reference) for every f16 value, every
midpoint between neighbours and its float64 neighbours, the overflow and underflow edges, and
random values over 15 decades (no vendor figure: two implementations of IEEE 754 roundTiesToEven
must agree bit for bit)."""
import numpy as np

from layoutsim.formats import encode
from layoutsim.ptx.fround import round_to


def test_f16_rn_equals_encode():
    rng = np.random.default_rng(0)
    h = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16).astype(np.float64)
    h = np.sort(h[np.isfinite(h)])
    mid = (h[:-1] + h[1:]) / 2
    edges = np.array([65504.0, 65519.99, 65520.0, 65536.0, 1e10, -65520.0, 2.0 ** -25, 2.0 ** -26, -2.0 ** -25,
                      np.nextafter(2.0 ** -25, 1), np.inf, -np.inf, 0.0, -0.0, np.nan])
    x = np.concatenate([h, mid, np.nextafter(mid, np.inf), np.nextafter(mid, -np.inf), edges,
                        rng.standard_normal(10 ** 5) * 10.0 ** rng.integers(-9, 6, 10 ** 5)])
    want = encode("f16", x, "rn")
    want = np.where(np.isnan(x), np.uint16(0x7FFF), want)          # the canonical NaN round_to writes
    got = round_to(x, "f16")
    assert got.dtype == np.uint16 and np.array_equal(got, want)


def test_ftz_decides_tininess_after_rounding_with_an_unbounded_exponent():
    """mul.ftz.f32 (FMUL.FTZ), measured on an H100 (tests/data/sfu): 0x00ffffff * 0.5 is exactly
    2^-126 (1 - 2^-24), representable with an unbounded exponent and below 2^-126, so +0; while
    0x00800001 * 0x3f7ffffe is 2^-126 (1 - 2^-46) before rounding and 2^-126 after, so 0x00800000."""
    from layoutsim.ptx import fround as F
    a = np.array([0x00FFFFFF, 0x00800001, 0x80FFFFFF], np.uint32).view(np.float32).astype(np.float64)
    b = np.array([0x3F000000, 0x3F7FFFFE, 0x3F000000], np.uint32).view(np.float32).astype(np.float64)
    assert F.round_to(a * b, "f32", "rn", ftz=True).tolist() == [0, 0x00800000, 0x80000000]
    assert F.round_to(a * b, "f32", "rn", ftz=False).tolist() == [0x00800000, 0x00800000, 0x80800000]
