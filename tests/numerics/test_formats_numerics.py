"""Raw-bit decode/encode of every element format (exhaustive for the 8- and 16-bit ones)."""
import ml_dtypes
import numpy as np
import pytest

from layoutsim import LayoutsimError
from layoutsim import formats as F

SMALL = [("f16", np.float16), ("bf16", ml_dtypes.bfloat16), ("e4m3", ml_dtypes.float8_e4m3fn),
         ("e5m2", ml_dtypes.float8_e5m2), ("e4m3fnuz", ml_dtypes.float8_e4m3fnuz),
         ("e5m2fnuz", ml_dtypes.float8_e5m2fnuz)]


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
    assert [F.bits(n) for n in ("b8", "b16", "b32")] == [8, 16, 32]
    assert [F.raw_dtype(n) for n in ("b8", "b16", "b32")] == [np.uint8, np.uint16, np.uint32]
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


# OCP Microscaling Formats v1.0, 5.3.2/5.3.3: FP6 (E2M3, E3M2) and FP4 (E2M1) have no Inf and no
# NaN: every bit pattern is a number (max 7.5, 28, 6). Checked exhaustively against ml_dtypes'
# float6_e2m3fn / float6_e3m2fn / float4_e2m1fn.
@pytest.mark.parametrize("name,vd,top", [("e2m3", ml_dtypes.float6_e2m3fn, 7.5),
                                         ("e3m2", ml_dtypes.float6_e3m2fn, 28.0),
                                         ("e2m1", ml_dtypes.float4_e2m1fn, 6.0)])
def test_mx_fp6_fp4_have_no_specials(name, vd, top):
    raw = np.arange(1 << F.bits(name), dtype=np.uint8)
    val = F.decode(name, raw)
    assert np.array_equal(val, raw.view(vd).astype(np.float64))
    assert not np.isnan(val).any() and val.max() == top == F.get_format(name).max_finite
    assert np.array_equal(F.encode(name, val), raw)
    # out of range saturates to the largest magnitude, as ml_dtypes does
    big = np.array([top * 4, np.inf, -np.inf, -top * 1.01])
    assert np.array_equal(F.encode(name, big), big.astype(vd).view(np.uint8))
    with pytest.raises(LayoutsimError, match=f"^{name} has no NaN"):
        F.encode(name, np.array([np.nan]))


def test_largest_finite_values():
    # IEEE 754 binary16 65504, bfloat16 and binary32 (2 - 2^-7) 2^127 and (2 - 2^-23) 2^127, OCP
    # E4M3 448 and E5M2 57344, AMD CDNA3 FNUZ fp8 240 and bf8 57344 (ml_dtypes' finfo agrees)
    want = {"f16": 65504.0, "bf16": float(ml_dtypes.finfo(ml_dtypes.bfloat16).max),
            "f32": float(np.finfo(np.float32).max), "e4m3": 448.0, "e5m2": 57344.0,
            "e4m3fnuz": 240.0, "e5m2fnuz": 57344.0}
    assert {n: F.get_format(n).max_finite for n in want} == want


def test_fnuz_has_no_negative_zero():
    # AMD CDNA3 FNUZ: 0x80 is the NaN, so -0 and negative values that round to zero encode as +0
    got = F.encode("e4m3fnuz", np.array([-0.0, -1e-30, 0.0, np.nan, -1e9]))
    assert [int(x) for x in got] == [0x00, 0x00, 0x00, 0x80, 0x80]


def test_decode_reads_integers_as_signed_values():
    assert list(F.decode("s8", np.array([0xFF, 0x80, 0x7F], np.uint8))) == [-1, -128, 127]
    assert list(F.decode("s32", np.array([0xFFFFFFFF], np.uint32))) == [-1]
    assert list(F.decode("u8", np.array([0xFF], np.uint8))) == [255]
    assert list(F.decode("b16", np.array([0xFFFF], np.uint16))) == [0xFFFF]


def test_encode_exact_refuses_what_would_round():
    assert list(F.encode_exact("f16", np.array([1.5, -0.25]))) == [0x3E00, 0xB400]
    with pytest.raises(LayoutsimError, match="^value not exact in f16$"):
        F.encode_exact("f16", np.array([0.1]))
    with pytest.raises(LayoutsimError, match="^value not exact in bf16$"):
        F.encode_exact("bf16", np.array([1 + 2.0 ** -8]))


def test_positive_normals_are_consecutive_and_bounded():
    assert [int(x) for x in F.positive_normals("e4m3", 3)] == [0x08, 0x09, 0x0A]
    normals = F.positive_normals("e5m2", 30 * 4)                    # exponent fields 1..30
    assert len(normals) == 120 and int(normals[8]) == 0x0C and int(normals[-1]) == 0x7B   # 57344
    with pytest.raises(LayoutsimError, match="^e5m2 has 120 positive normal numbers, not 121$"):
        F.positive_normals("e5m2", 121)


def test_show_and_dtype_format():
    assert F.show("f16", 0x3C00) == "0x3c00 (1.0)"
    assert F.show("e4m3", 0x7F) == "0x7f (nan)"
    assert F.show("f32", 0x62800000) == "0x62800000 (1.18059162e+21)"   # 2^70: too long as x.0
    assert F.show("f32", 0x7F800000) == "0x7f800000 (inf)"
    assert F.show("s8", 0xFF) == "0xff (-1)"
    assert [F.dtype_format(d) for d in (np.float16, np.int32, np.uint32, np.uint16, np.int8)] == [
        "f16", "s32", "b32", "b16", "s8"]


def test_exact_integer_ranges():
    # every integer 1..N exact: 2^(fraction bits + 1) for floats, the largest value for integers
    got = {n: F.get_format(n).exact_int_max for n in ("f16", "bf16", "f32", "e4m3", "s8", "s32", "u8", "s4", "u4")}
    assert got == {"f16": 2048, "bf16": 256, "f32": 1 << 24, "e4m3": 16, "s8": 127, "s32": (1 << 31) - 1,
                   "u8": 255, "s4": 7, "u4": 15}


def test_scale_formats_ue8m0_and_ue4m3():
    # OCP Microscaling Formats v1.0 5.4.1: E8M0 is 2**(e-127), no sign, no zero, 0xFF the NaN
    # (ml_dtypes float8_e8m0fnu); ue4m3 (PTX ISA: the unsigned e4m3 scale of NVFP4) is e4m3 with
    # sign 0 (its byte's top bit is not part of the format: MMA-Sim masks it, 0x7F).
    from layoutsim.formats import canonical_nan, decode, encode, get_format
    raw = np.arange(256, dtype=np.uint8)
    assert np.array_equal(decode("ue8m0", raw), raw.view(ml_dtypes.float8_e8m0fnu).astype(np.float64),
                          equal_nan=True)
    assert np.array_equal(decode("ue4m3", raw), (raw & 0x7F).view(ml_dtypes.float8_e4m3fn).astype(np.float64),
                          equal_nan=True)
    assert canonical_nan("ue8m0") == 0xFF and canonical_nan("ue4m3") == 0x7F
    assert get_format("ue8m0").max_finite == 2.0 ** 127 and get_format("ue4m3").max_finite == 448
    assert np.array_equal(encode("ue8m0", decode("ue8m0", raw[:255])), raw[:255])
    # 3 = 1.5 * 2: nearest-even picks the even exponent field (128 = 2**1), rp 2**2, rz 2**1
    assert encode("ue8m0", [3.0, 1e300, np.nan]).tolist() == [128, 254, 255]
    assert encode("ue8m0", [3.0], "rp").tolist() == [129] and encode("ue8m0", [3.0], "rz").tolist() == [128]
    with pytest.raises(LayoutsimError, match="no zero"):
        encode("ue8m0", [0.0])
    with pytest.raises(LayoutsimError, match="unsigned"):
        encode("ue4m3", [-1.0])
