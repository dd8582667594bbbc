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


# Values from the format definitions (IEEE 754 binary16/32, bfloat16, OCP 8-bit FP spec 2023).
@pytest.mark.parametrize("name,emin,emax", [("f16", -14, 15), ("bf16", -126, 127), ("f32", -126, 127),
                                            ("tf32", -126, 127), ("e5m2", -14, 15),
                                            ("e4m3", -6, 8)])     # E4M3: exponent 15 is finite (max 448)
def test_exponent_range(name, emin, emax):
    f = F.get_format(name)
    assert (f.emin, f.emax) == (emin, emax)


def test_e4m3_overflow_and_nan_encode_to_the_nan_pattern():
    # OCP E4M3 has no infinity: S.1111.111 is NaN; 448 = 1.75 * 2^8 is the largest finite value.
    # 464 lies half way between 448 (fraction 110, even) and 480 (111, the NaN pattern): ties to
    # even keep 448; anything above, and NaN, gives the NaN pattern.
    got = F.encode("e4m3", np.array([np.nan, 1000.0, 470.0, 464.0, 449.0, 448.0, -470.0, -np.inf]))
    assert [int(x) for x in got] == [0x7F, 0x7F, 0x7F, 0x7E, 0x7E, 0x7E, 0xFF, 0xFF]


def test_integer_ranges_and_raw_formats():
    assert [int(x) for x in F.encode("u8", np.array([0, 255]))] == [0, 255]
    assert [int(x) for x in F.encode("s8", np.array([-128, 127]))] == [0x80, 0x7F]
    assert [int(x) for x in F.encode("u4", np.array([0, 15]))] == [0, 15]
    with pytest.raises(LayoutsimError, match="^u8 values must be integers in 0..255$"):
        F.encode("u8", np.array([256]))
    with pytest.raises(LayoutsimError, match="^s4 values must be integers in -8..7$"):
        F.encode("s4", np.array([8]))
    with pytest.raises(LayoutsimError) as e:                   # raw formats have no value dtype
        F.as_raw("b16", np.zeros(2))
    assert str(e.value) == "operand (b16) has dtype float64; give uint16 raw bits"
