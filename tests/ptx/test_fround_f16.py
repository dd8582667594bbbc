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
