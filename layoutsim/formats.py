"""Element formats: width, layout of the bits, raw-bit decode/encode.

Every format has a *raw* numpy dtype (the unsigned integer that holds its bits: uint8 for
8-bit and 4-bit formats -- a 4-bit element sits in the low 4 bits --, uint16, uint32, uint64)
and a *value* dtype (float16, ml_dtypes bfloat16 / float8_e4m3fn / float8_e5m2, float32 for
f32 and tf32, float64, int8/uint8/int32). `as_raw` accepts either and returns raw bits;
`from_raw` gives values; `decode`/`encode` convert raw bits to and from exact float64 (or int64)
values with integer arithmetic only (encode rounds to nearest, ties to even).

numpy and ml_dtypes are imported inside the functions: `layoutsim query` never needs them.
"""
from dataclasses import dataclass

from .errors import LayoutsimError, choose


@dataclass(frozen=True)
class Format:
    name: str
    bits: int
    kind: str          # "float", "int", "uint", "raw"
    ebits: int = 0     # floats: exponent field width
    mbits: int = 0     # floats: fraction field width (tf32: 10, stored in the top 19 of 32 bits)
    specials: str = "ieee"   # floats: "ieee" (all-ones exponent = Inf/NaN) or "fn" (e4m3: no Inf,
    #                          NaN = S.1111.111, every other all-ones exponent is a normal number),
    #                          or "fnuz" (AMD CDNA3 fp8/bf8: bias one more than IEEE, no Inf, no
    #                          -0: 0x80 is the only NaN, every all-ones exponent is a number), or
    #                          "finite" (OCP MX FP6/FP4, OCP Microscaling Formats v1.0 5.3: no Inf,
    #                          no NaN, every bit pattern is a number), or "e8m0" (the MX scale, OCP
    #                          MX v1.0 5.4.1: no sign, no fraction, no zero, no subnormal; exponent
    #                          field e is 2**(e-127), 0xFF the one NaN)
    signed: bool = True      # False: unsigned scale formats (ue8m0, ue4m3) have no sign bit

    @property
    def bias(self):
        return (1 << (self.ebits - 1)) - (0 if self.specials == "fnuz" else 1)

    @property
    def emin(self):
        """Exponent of the smallest normal number (subnormals share it)."""
        return 1 - self.bias

    @property
    def emax(self):
        """Exponent of the largest finite number."""
        return self.bias if self.specials == "ieee" else (1 << self.ebits) - 1 - self.bias

    @property
    def max_finite(self):
        """The largest finite value (e4m3: 448, its all-ones fraction being NaN)."""
        top_frac = self.mbits - (1 if self.specials == "fn" else 0)
        if self.specials == "e8m0":
            return 2.0 ** (254 - self.bias)
        return 2.0 ** self.emax * (2 - 2.0 ** -top_frac)

    @property
    def shift(self):
        """tf32 keeps its 19 bits in the top of a 32-bit word: the field layout starts here."""
        return 13 if self.name == "tf32" else 0

    @property
    def exact_int_max(self):
        """Largest N such that every integer 1..N is exact in the format (e2m3: 7, its largest value 7.5)."""
        if self.kind == "float":
            return min(1 << (self.mbits + 1), int(self.max_finite))
        w = 32 if self.name == "s32" else self.bits
        return (1 << (w - 1)) - 1 if self.kind == "int" else (1 << w) - 1


FORMATS = {f.name: f for f in (
    Format("f64", 64, "float", 11, 52), Format("f32", 32, "float", 8, 23),
    Format("tf32", 32, "float", 8, 10),
    Format("f16", 16, "float", 5, 10), Format("bf16", 16, "float", 8, 7),
    Format("e4m3", 8, "float", 4, 3, "fn"), Format("e5m2", 8, "float", 5, 2),
    # AMD CDNA3 fp8/bf8 (MI300: bias 8 / 16, no Inf, 0x80 the only NaN; ml_dtypes
    # float8_e4m3fnuz / float8_e5m2fnuz) and the CDNA4 fp6/fp4 MFMA operands (catalog formats
    # only: layoutsim.mma has no model for them)
    Format("e4m3fnuz", 8, "float", 4, 3, "fnuz"), Format("e5m2fnuz", 8, "float", 5, 2, "fnuz"),
    Format("e2m3", 6, "float", 2, 3, "finite"), Format("e3m2", 6, "float", 3, 2, "finite"),
    Format("e2m1", 4, "float", 2, 1, "finite"),
    # block scale factors of the MX / NVFP4 block-scaled MMAs (tcgen05.mma .kind::mxf8f6f4, mxf4,
    # mxf4nvf4; sm_120 mma.sync .block_scale): ue8m0 is OCP MX v1.0 5.4.1's E8M0 (PTX ISA 9.x
    # 5.2.5.5 'Block scaling': .ue8m0); ue4m3 is e4m3 without its sign bit (PTX ISA: "unsigned
    # e4m3", the NVFP4 scale), held in a byte whose top bit this model ignores (assumed)
    Format("ue8m0", 8, "float", 8, 0, "e8m0", signed=False),
    Format("ue4m3", 8, "float", 4, 3, "fn", signed=False),
    Format("s32", 32, "int"), Format("s8", 8, "int"), Format("u8", 8, "uint"),
    Format("s4", 4, "int"), Format("u4", 4, "uint"),
    Format("b16", 16, "raw"), Format("b8", 8, "raw"), Format("b32", 32, "raw"),
)}

# What AMD's "fp8" / "bf8" matrix operands are, per target: the same mnemonics and clang builtins
# (v_mfma_f32_16x16x32_fp8_fp8, __builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8) read the FNUZ formats
# on CDNA3 (gfx942) and the OCP ones (E4M3FN, E5M2) on CDNA4 (gfx950) and RDNA4 (gfx12).
AMD_FP8 = {"gfx942": {"fp8": "e4m3fnuz", "bf8": "e5m2fnuz"},
           "gfx950": {"fp8": "e4m3", "bf8": "e5m2"},
           "gfx12": {"fp8": "e4m3", "bf8": "e5m2"}}
AMD_FP8_SOURCE = (
    "AMD ROCm blog 'Matrix Core Programming on AMD CDNA3 and CDNA4 architecture' (2025): 'The AMD "
    "CDNA3 architecture uses FNUZ variants for both E4M3 and E5M2, whereas the CDNA4 architecture "
    "uses E4M3FN and E5M2 (OCP) variants'; LLVM mlir/lib/Conversion/AMDGPUToROCDL/AMDGPUToROCDL.cpp "
    "typeIsExpectedFp8ForChipset / typeIsExpectedBf8ForChipset (the mfma_*_fp8/bf8 intrinsics take "
    "Float8E4M3FNUZ / Float8E5M2FNUZ on gfx942, Float8E4M3FN / Float8E5M2 where Chipset.h "
    "hasOcpFp8: gfx950 and gfx12+); ROCm HIP 'FP8 numbers' (gfx942: FNUZ only); RDNA4: AMD's matrix "
    "instruction calculator ('FP8 (OCP ...)')")


def amd_fp8(kind, target):
    """The format of an AMD "fp8" or "bf8" matrix operand on `target` (gfx942, gfx950, gfx12);
    AMD_FP8_SOURCE says where each comes from."""
    if target not in AMD_FP8 or kind not in AMD_FP8[target]:
        raise LayoutsimError(f"no AMD {kind!r} operand format for {target!r}; known: "
                             f"{', '.join(f'{k} on {t}' for t in AMD_FP8 for k in AMD_FP8[t])}")
    return AMD_FP8[target][kind]


# name -> (numpy attribute or ml_dtypes attribute) of the value dtype
_VALUE = {"f64": "float64", "f32": "float32", "tf32": "float32", "f16": "float16",
          "bf16": "ml:bfloat16", "e4m3": "ml:float8_e4m3fn", "e5m2": "ml:float8_e5m2",
          "e4m3fnuz": "ml:float8_e4m3fnuz", "e5m2fnuz": "ml:float8_e5m2fnuz",
          "ue8m0": "ml:float8_e8m0fnu",
          "s32": "int32", "s8": "int8", "u8": "uint8", "s4": "int8", "u4": "uint8"}


def get_format(name):
    return FORMATS[choose("format", name, tuple(FORMATS))]


def bits(name):
    return get_format(name).bits


def _fmt(f):
    return f if isinstance(f, Format) else get_format(f)


def raw_dtype_of_width(bits):
    """numpy unsigned dtype that holds the raw bits of one `bits`-wide element (a 4-bit element
    sits in the low nibble of a uint8)."""
    import numpy as np
    return np.dtype(f"u{max(1, -(-int(bits) // 8))}")


def raw_dtype(name):
    """numpy unsigned dtype that holds one element's bits."""
    return raw_dtype_of_width(_fmt(name).bits)


def value_dtype(name):
    """numpy dtype whose values are this format's values (None for raw b8/b16/b32)."""
    f = _fmt(name)
    spec = _VALUE.get(f.name)
    return None if spec is None else numpy_dtype(spec.removeprefix("ml:"))


def numpy_dtype(name):
    """The numpy dtype of a numpy or ml_dtypes type name ("float16", "bfloat16", "float8_e4m3fn",
    ...): numpy cannot name the ml_dtypes types itself."""
    import numpy as np
    ml = {v[3:] for v in _VALUE.values() if v.startswith("ml:")}
    if name in ml:
        import ml_dtypes
        return np.dtype(getattr(ml_dtypes, name))
    return np.dtype(name)


def dtype_format(dtype):
    """The format whose values a numpy dtype holds (float16 -> f16, bfloat16 -> bf16, int32 ->
    s32, ...), or the raw format of its width (uint32 -> b32) when no format's values are it."""
    import numpy as np
    dt = np.dtype(dtype)
    for fmt, spec in _VALUE.items():
        if fmt not in ("tf32", "s4", "u4") and spec.removeprefix("ml:") == dt.name:
            return fmt
    return f"b{dt.itemsize * 8}"


def as_raw(name, array, what="operand"):
    """Raw bits of `array`: given as raw bits (the raw dtype) or as values (the value dtype).

    Anything else is refused with one line naming both accepted dtypes: no silent rounding.
    """
    import numpy as np
    f = _fmt(name)
    arr = np.asarray(array)
    rd = raw_dtype(f)
    if arr.dtype == rd:
        if f.bits == 4 and arr.size and int(arr.max()) > 15:
            raise LayoutsimError(f"{what} ({f.name}) raw bits must be 0..15 (the low 4 bits of "
                                 f"a uint8); got {int(arr.max())}")
        return arr
    vd = value_dtype(f)         # only now: importing ml_dtypes costs about 0.9 s
    if vd is not None and arr.dtype == vd:
        if f.bits == 4:
            lo, hi = (-8, 7) if f.kind == "int" else (0, 15)
            if arr.size and (int(arr.min()) < lo or int(arr.max()) > hi):
                raise LayoutsimError(f"{what} ({f.name}) values must lie in {lo}..{hi}; got "
                                     f"{int(arr.min())}..{int(arr.max())}")
            return (arr.astype(np.int16) & 0xF).astype(np.uint8)
        return arr.view(rd)
    valid = f"{rd} raw bits" + (f" or {vd} values" if vd is not None and vd != rd else "")
    raise LayoutsimError(f"{what} ({f.name}) has dtype {arr.dtype}; give {valid}")


def from_raw(name, raw):
    """Values (the value dtype) from raw bits."""
    import numpy as np
    f = _fmt(name)
    raw = np.asarray(raw, dtype=raw_dtype(f))
    if f.name == "s4":
        return ((raw.astype(np.int16) & 0xF) ^ 8).astype(np.int8) - np.int8(8)
    if f.name == "u4":
        return raw & np.uint8(0xF)
    vd = value_dtype(f)
    return raw if vd is None else raw.view(vd)


def fields(name, raw):
    """(sign, biased exponent, fraction) int64 arrays of a float format's raw bits."""
    import numpy as np
    f = _fmt(name)
    u = np.asarray(raw).astype(np.uint64) >> np.uint64(f.shift)
    frac = (u & np.uint64((1 << f.mbits) - 1)).astype(np.int64)
    exp = ((u >> np.uint64(f.mbits)) & np.uint64((1 << f.ebits) - 1)).astype(np.int64)
    sign = ((u >> np.uint64(f.mbits + f.ebits)) & np.uint64(1 if f.signed else 0)).astype(np.int64)
    return sign, exp, frac


def pack(name, sign, exp, frac):
    """Raw bits from (sign, biased exponent, fraction) fields."""
    import numpy as np
    f = _fmt(name)
    u = ((np.asarray(sign, np.uint64) << np.uint64(f.ebits + f.mbits))
         | (np.asarray(exp, np.uint64) << np.uint64(f.mbits)) | np.asarray(frac, np.uint64))
    return (u << np.uint64(f.shift)).astype(raw_dtype(f))


def classify(name, raw):
    """0 finite, 1 infinite, 2 NaN, per element."""
    import numpy as np
    f = _fmt(name)
    if f.kind != "float":
        return np.zeros(np.shape(raw), np.int8)
    sign, e, m = fields(f, raw)
    top = (1 << f.ebits) - 1
    if f.specials == "fnuz":
        return np.where((sign == 1) & (e == 0) & (m == 0), 2, 0).astype(np.int8)
    if f.specials == "fn":
        return np.where((e == top) & (m == (1 << f.mbits) - 1), 2, 0).astype(np.int8)
    if f.specials == "finite":
        return np.zeros(np.shape(e), np.int8)
    if f.specials == "e8m0":
        return np.where(e == top, 2, 0).astype(np.int8)
    return np.where(e == top, np.where(m != 0, 2, 1), 0).astype(np.int8)


def decode(name, raw):
    """Exact values of raw bits: float64 for float formats (NaN/Inf kept), int64 for integers."""
    import numpy as np
    f = _fmt(name)
    raw = np.asarray(raw)
    if f.kind in ("int", "uint", "raw"):
        v = from_raw(f, raw) if f.kind != "raw" else raw
        return np.asarray(v).astype(np.int64)
    if f.name == "f64":
        return raw.astype(np.uint64).view(np.float64).copy()
    s, e, m = fields(f, raw)
    normal = (e != 0) | (f.specials == "e8m0")     # E8M0 has no subnormals: 0x00 is 2**-127
    sig = np.where(normal, m | (1 << f.mbits), m).astype(np.float64)
    ex = np.where(normal, e - f.bias, f.emin) - f.mbits
    val = np.ldexp(sig, ex.astype(np.int32))
    cls = classify(f, raw)
    val = np.where(cls == 1, np.inf, np.where(cls == 2, np.nan, val))
    return np.where(s == 1, -val, val)


def encode_exact(name, values):
    """Raw bits of values that the format holds exactly; LayoutsimError if any would round,
    overflow or is not a number (the exactness a layout probe relies on)."""
    import numpy as np
    f = _fmt(name)
    v = np.asarray(values)
    raw = encode(f, v)
    if f.kind == "float" and not np.array_equal(decode(f, raw), v.astype(np.float64)):
        raise LayoutsimError(f"value not exact in {f.name}")
    return raw


def positive_normals(name, count):
    """Raw bits of the `count` smallest positive normal numbers of a float format, in order
    (consecutive bit patterns: the exponent field carries into the next binade)."""
    import numpy as np
    f = _fmt(name)
    available = ((1 << f.ebits) - 2) << f.mbits         # exponent fields 1 .. all-ones - 1
    if count > available:
        raise LayoutsimError(f"{f.name} has {available} positive normal numbers, not {count}")
    return pack(f, 0, 1, 0).astype(np.uint64) + np.arange(count, dtype=np.uint64)


def show(name, raw):
    """'0x41200000 (10.0)': one element's raw bits in hex and the value they encode."""
    import numpy as np
    f = _fmt(name)
    r = int(raw)
    value = decode(f, np.array([r & ((1 << f.bits) - 1)], dtype=raw_dtype(f)))[0]
    if f.kind != "float":
        text = repr(int(value))
    else:
        x = float(value)
        text = ("nan" if x != x else ("inf" if x > 0 else "-inf") if x in (float("inf"), float("-inf"))
                else f"{x:.1f}" if x == int(x) and abs(x) < 1e15 else f"{x:.9g}")
    return f"0x{r:0{max(1, (f.bits + 3) // 4)}x} ({text})"


ROUNDING = ("rn", "rna", "rz", "rm", "rp")


def encode(name, values, mode="rn"):
    """Raw bits of `values` (any real array), rounded by `mode`: "rn" nearest, ties to even
    (the default), "rna" nearest, ties away from zero, "rz" toward zero, "rm" toward -Inf,
    "rp" toward +Inf (IEEE 754-2008, 4.3). Overflow gives Inf, or the largest finite number
    where the mode rounds toward zero (NaN for e4m3, which has no Inf); integers must be in
    range (else LayoutsimError). Float inputs must be exact values (float64); a value rounded
    to odd with at least two bits more than the format also rounds correctly."""
    import numpy as np
    f = _fmt(name)
    if mode not in ROUNDING:
        raise LayoutsimError(f"unknown rounding mode {mode!r}; valid: {', '.join(ROUNDING)}")
    v = np.asarray(values)
    if f.kind in ("int", "uint"):
        w = 32 if f.name == "s32" else f.bits
        lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if f.kind == "int" else (0, (1 << w) - 1)
        iv = v.astype(np.int64)
        if v.size and (np.any(iv != v) or iv.min() < lo or iv.max() > hi):
            raise LayoutsimError(f"{f.name} values must be integers in {lo}..{hi}")
        return (iv & ((1 << w) - 1)).astype(raw_dtype(f))
    if f.kind == "raw":
        return v.astype(raw_dtype(f))
    if not f.signed:
        return _encode_unsigned(f, v, mode)
    d = np.asarray(v, dtype=np.float64)
    if f.name == "f64":
        return d.view(np.uint64).copy()
    u = d.view(np.uint64)
    sign = (u >> np.uint64(63)).astype(np.int64)
    de = ((u >> np.uint64(52)) & np.uint64(0x7FF)).astype(np.int64)
    dm = (u & np.uint64((1 << 52) - 1)).astype(np.int64)
    nan, inf = np.isnan(d), np.isinf(d)
    # exact value = M * 2**(q) with integer M (53-bit significand of the double)
    M = np.where(de != 0, dm | (1 << 52), dm)
    q = np.where(de != 0, de - 1075, -1074)
    nb = np.frexp(M.astype(np.float64))[1].astype(np.int64)   # bit length (M < 2**53: exact)
    lead = nb - 1 + q
    e_out = np.maximum(lead, f.emin)
    qo = e_out - f.mbits
    sh = qo - q                                   # > 0: bits to drop
    shp = np.clip(sh, 0, 62)
    R = np.where(sh <= 0, M << np.clip(-sh, 0, 62), M >> shp)
    rem = M - (R << shp)
    half = np.where(shp > 0, np.int64(1) << np.maximum(shp - 1, 0), 0)
    big = sh > 62                                 # everything dropped, below half an ulp
    R = np.where(big, 0, R)
    inexact = (sh > 0) & np.where(big, M != 0, rem != 0)
    if mode == "rn":
        up = (~big) & (sh > 0) & ((rem > half) | ((rem == half) & ((R & 1) == 1)))
    elif mode == "rna":
        up = (~big) & (sh > 0) & (rem >= half) & (rem > 0)
    elif mode == "rz":
        up = np.zeros_like(inexact)
    else:
        up = inexact & (sign == (0 if mode == "rp" else 1))
    R = R + up
    carry = R >> (f.mbits + 1)
    R = np.where(carry > 0, R >> 1, R)
    qo = qo + carry
    normal = R >= (1 << f.mbits)
    exp_field = np.where(normal, qo + f.mbits + f.bias, 0)
    frac = np.where(normal, R - (1 << f.mbits), R)
    top = (1 << f.ebits) - 1
    over = exp_field > (top - 1 if f.specials == "ieee" else top)
    if f.specials == "fnuz":     # no Inf, no -0: overflow, Inf and NaN give the NaN 0x80
        bad = over | inf | nan
        zero = (R == 0) & ~bad
        return pack(f, np.where(bad, 1, np.where(zero, 0, sign)), np.where(bad | zero, 0, exp_field),
                    np.where(bad | zero, 0, frac))
    if f.specials == "finite":   # FP6/FP4: out of range saturates (as ml_dtypes and NVIDIA's
        if nan.any():            # cvt .satfinite to e2m1/e2m3/e3m2 do); there is no NaN to give
            raise LayoutsimError(f"{f.name} has no NaN (OCP MX FP6/FP4): NaN cannot be encoded")
        bad = over | inf
        return pack(f, sign, np.where(bad, top, exp_field), np.where(bad, (1 << f.mbits) - 1, frac))
    if f.specials == "fn":       # e4m3: no Inf; overflow and NaN give NaN (a value that rounds
        #                          to S.1111.111 already has the NaN pattern)
        bad = over | inf | nan
        exp_field = np.where(bad, top, exp_field)
        frac = np.where(bad, (1 << f.mbits) - 1, frac)
    else:
        # overflow rounds to Inf, or to the largest finite number when the mode rounds toward 0
        to_max = over & ~inf & ((mode == "rz") | ((mode == "rp") & (sign == 1)) |
                                ((mode == "rm") & (sign == 0)))
        exp_field = np.where((over & ~to_max) | inf | nan, top, np.where(to_max, top - 1, exp_field))
        frac = np.where(nan, 1 << (f.mbits - 1), np.where(over & ~to_max | inf, 0,
                                                          np.where(to_max, (1 << f.mbits) - 1, frac)))
    return pack(f, sign, exp_field, frac)


def _encode_unsigned(f, values, mode):
    """ue4m3: e4m3's encoding of values >= 0 (a -0 gives +0). ue8m0: the power of two `mode`
    rounds to (rn ties to the even exponent field, as PTX cvt .ue8m0x2 offers .rz and .rp),
    saturated to 2**127 (0xFE) and 2**-127 (0x00) as cvt .satfinite does; NaN gives 0xFF."""
    import numpy as np
    d = np.asarray(values, dtype=np.float64)
    if d.size and np.any(d < 0):
        raise LayoutsimError(f"{f.name} is unsigned: values must be >= 0")
    if f.specials != "e8m0":
        return encode("e4m3", np.abs(d), mode)          # sign 0: the same low 7 bits
    if d.size and np.any(d == 0):
        raise LayoutsimError("ue8m0 has no zero (OCP MX v1.0 5.4.1): values must be > 0 or NaN")
    nan = np.isnan(d)
    safe = np.where(nan | np.isinf(d), 1.0, d)
    mant, ex = np.frexp(safe)                         # safe = mant * 2**ex, mant in [0.5, 1)
    lo = ex.astype(np.int64) - 1                      # 2**lo <= safe < 2**(lo+1)
    frac = mant * 2                                   # in [1, 2)
    field = lo + f.bias
    if mode in ("rp",):
        up = frac > 1
    elif mode in ("rz", "rm"):
        up = np.zeros(frac.shape, bool)
    elif mode == "rna":
        up = frac >= 1.5
    else:
        up = (frac > 1.5) | ((frac == 1.5) & (field % 2 == 1))
    field = np.clip(field + up, 0, 254)
    field = np.where(np.isinf(d), 254, field)
    return np.where(nan, 255, field).astype(np.uint8)


def _nan_bits(f, sign, frac):
    if f.kind != "float" or f.specials == "finite":
        raise LayoutsimError(f"{f.name} has no NaN; formats with one: "
                             f"{', '.join(n for n, g in FORMATS.items() if g.kind == 'float' and g.specials != 'finite')}")
    if f.specials == "fnuz":                  # one NaN, the pattern of -0 (0x80)
        return 1 << (f.bits - 1)
    return ((sign << (f.ebits + f.mbits)) | (((1 << f.ebits) - 1) << f.mbits) | frac) << f.shift


def canonical_nan(name):
    """Raw bits (an int) of the canonical NaN, the one NaN NVIDIA writes for a NaN result (PTX
    ISA 9.7.3 and 9.7.4 'canonical NaN'; MMA-Sim writes the same for CDNA): sign 0, exponent and
    fraction all ones. f32 0x7FFFFFFF, f16 and bf16 0x7FFF, e4m3 0x7F; the FNUZ formats' only
    NaN is 0x80; FP6/FP4 have none (LayoutsimError)."""
    f = _fmt(name)
    return _nan_bits(f, 0, (1 << f.mbits) - 1)


def quiet_nan(name, sign=0):
    """Raw bits (an int) of IEEE 754's default quiet NaN: exponent all ones, only the top fraction
    bit set (what `encode` writes for a NaN of that sign). f32 0x7FC00000, f16 0x7E00, f64
    0x7FF8000000000000; sign=1 is x86's default NaN (f64 0xFFF8000000000000). Only the IEEE-style
    formats have it: e4m3's one NaN is S.1111.111 (`canonical_nan`)."""
    f = _fmt(name)
    if f.kind == "float" and f.specials != "ieee":
        raise LayoutsimError(f"{f.name} has no quiet NaN apart from its one NaN pattern (canonical_nan)")
    return _nan_bits(f, int(sign), 1 << (f.mbits - 1))
