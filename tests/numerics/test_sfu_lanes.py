"""The MUFU models select among their cases (NaN, Inf, subnormal, out-of-range, sign) only where
some element of the call is in the case (numerics/sfu.py: the executor calls them on every
thread of a step). An element's result must not depend on what else is in the array: each
element alone (every case on its own) gives what the whole mixed array gives it, and so do arrays
of one sign. The expected values are the models' own on the mixed array, which tests/numerics/
test_sfu.py holds to the H200's."""
import numpy as np
import pytest

from layoutsim.numerics import sfu, sfu_div

SPECIALS = np.array([0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00001, 0x00000001,
                     0x807FFFFF, 0x00800000, 0x45800001, 0xC5800001, 0x7F7FFFFF, 0xFF7FFFFF, 0x3F800000,
                     0xBF800000], np.uint32)


def _inputs():
    rng = np.random.default_rng(26)
    bits = rng.integers(0, 1 << 32, 300, dtype=np.uint64).astype(np.uint32)
    small = (rng.standard_normal(300) * 20).astype(np.float32).view(np.uint32)
    return np.concatenate([SPECIALS, bits, small])


@pytest.mark.parametrize("fn", [sfu.mufu_ex2, sfu.mufu_rcp], ids=["ex2", "rcp"])
def test_an_elements_result_is_its_own(fn):
    x = _inputs()
    whole = fn(x)
    alone = np.array([fn(x[i:i + 1])[0] for i in range(len(x))], np.uint32)
    assert np.array_equal(whole, alone)
    for sign in (x >> 31 == 1, x >> 31 == 0):
        assert np.array_equal(fn(x[sign]), whole[sign])


@pytest.mark.parametrize("name", ["div.full.f32", "div.full.ftz.f32", "div.approx.f32"])
def test_a_quotients_bits_are_its_own(name):
    a, b = _inputs(), _inputs()[::-1].copy()
    f = sfu_div.model(name)
    whole = f(a, b)
    alone = np.array([f(a[i:i + 1], b[i:i + 1])[0] for i in range(len(a))], np.uint32)
    assert np.array_equal(whole, alone)
