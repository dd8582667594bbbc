"""Raw-bit decode/encode of every element format (exhaustive for the 8- and 16-bit ones)."""
import ml_dtypes
import numpy as np
import pytest

from layoutsim import LayoutsimError
from layoutsim import formats as F

SMALL = [("f16", np.float16), ("bf16", ml_dtypes.bfloat16), ("e4m3", ml_dtypes.float8_e4m3fn),
         ("e5m2", ml_dtypes.float8_e5m2)]


@pytest.mark.parametrize("name,vd", SMALL)
def test_decode_exhaustive_and_encode_round_trip(name, vd):
    raw = np.arange(1 << F.bits(name), dtype=np.uint64).astype(F.raw_dtype(name))
    val = F.decode(name, raw)
    with np.errstate(invalid="ignore"):
        ref = raw.view(vd).astype(np.float64)
    assert np.array_equal(np.isnan(val), np.isnan(ref))
    fin = ~np.isnan(val)
    assert np.array_equal(val[fin], ref[fin])
    assert np.array_equal(F.encode(name, val[fin]), raw[fin])
    assert np.all(np.isnan(F.decode(name, F.encode(name, val[~fin]))))


@pytest.mark.parametrize("name,vd", SMALL + [("f32", np.float32)])
def test_encode_rounds_to_nearest_even(name, vd):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(50000) * np.exp2(rng.integers(-40, 40, 50000))).astype(np.float32)
    ours = F.encode(name, x.astype(np.float64))
    with np.errstate(over="ignore", invalid="ignore"):
        ref = x.astype(vd).view(F.raw_dtype(name))    # float32 -> vd: a single rounding
    ok = ~np.isnan(F.decode(name, ref))
    assert np.array_equal(ours[ok], ref[ok])


def test_tf32_lives_in_the_top_19_bits():
    raw = F.encode("tf32", np.array([1.0, 1 + 2.0 ** -10, 1 + 2.0 ** -11]))
    assert list(raw) == [0x3F800000, 0x3F802000, 0x3F800000]       # tie -> even
    assert F.decode("tf32", np.array([0x3F802000], np.uint32))[0] == 1 + 2.0 ** -10


def test_dtypes():
    assert F.raw_dtype("s4") == np.uint8 and F.value_dtype("s4") == np.int8
    assert F.raw_dtype("f64") == np.uint64 and F.value_dtype("tf32") == np.float32
    assert F.value_dtype("bf16") == np.dtype(ml_dtypes.bfloat16)


def test_as_raw_takes_raw_or_values_and_nothing_else():
    v = np.array([1.0, -2.0], np.float16)
    assert np.array_equal(F.as_raw("f16", v), v.view(np.uint16))
    assert F.as_raw("f16", v.view(np.uint16)).dtype == np.uint16
    with pytest.raises(LayoutsimError, match="float64.*uint16 raw bits or float16 values"):
        F.as_raw("f16", v.astype(np.float64))
    assert list(F.as_raw("s4", np.array([-8, 7, -1], np.int8))) == [8, 7, 15]
    with pytest.raises(LayoutsimError, match="0..15"):
        F.as_raw("u4", np.array([16], np.uint8))
    with pytest.raises(LayoutsimError, match="-8..7"):
        F.as_raw("s4", np.array([8], np.int8))


def test_int4_values():
    raw = np.arange(16, dtype=np.uint8)
    assert list(F.from_raw("s4", raw)) == list(range(8)) + list(range(-8, 0))
    assert list(F.decode("u4", raw)) == list(range(16))
    assert list(F.encode("s4", np.array([-8, -1, 7]))) == [8, 15, 7]
