"""An independent reference for IEEE float arithmetic: exact rationals (fractions.Fraction) rounded
to a binary format with integer arithmetic, in every mode, with PTX's special-value rules.

Written from IEEE 754-2008 (4.3 rounding, 6.3 signs of zero, 7.2 invalid operations) and the
PTX ISA / CUDA guide rules the executor claims (canonical NaN 0x7fffffff for f32, 0x7fff for
f16/bf16 results; .ftz flushes subnormal inputs and results to zero of the same sign; .sat
clamps to [0, 1] with NaN -> +0). Shares no code with layoutsim.
"""
from fractions import Fraction

FMT = {"f64": (11, 52), "f32": (8, 23), "f16": (5, 10), "bf16": (8, 7), "tf32": (8, 10),
       "e4m3": (4, 3), "e5m2": (5, 2)}
WIDTH = {"f64": 64, "f32": 32, "f16": 16, "bf16": 16, "tf32": 32, "e4m3": 8, "e5m2": 8}
CANON = {"f32": 0x7FFFFFFF, "f16": 0x7FFF, "bf16": 0x7FFF,
         # f64: the default NaN the H200's DMMA gives for an invalid operation (Inf * 0), assumed
         # for the scalar f64 unit too; f64 results from NaN inputs are not checked
         "f64": 0xFFF8000000000000}
NAN, INF = "nan", "inf"


class V:
    """A float value: ("num", Fraction, negative zero flag) or ("inf", sign) or ("nan",)."""

    def __init__(self, kind, value=None, neg=False):
        self.kind, self.value, self.neg = kind, value, neg

    @property
    def is_nan(self):
        return self.kind == NAN

    @property
    def is_inf(self):
        return self.kind == INF

    @property
    def sign(self):
        if self.kind == "num":
            return self.value < 0 or (self.value == 0 and self.neg)
        return self.neg

    def __repr__(self):
        return f"V({self.kind}, {self.value}, neg={self.neg})"


def decode(bits, fmt):
    e, m = FMT[fmt]
    w = WIDTH[fmt]
    if fmt == "tf32":
        bits >>= 13
        w = 19
    sign = (bits >> (w - 1)) & 1
    ex = (bits >> m) & ((1 << e) - 1)
    fr = bits & ((1 << m) - 1)
    bias = (1 << (e - 1)) - 1
    if fmt == "e4m3":
        if ex == (1 << e) - 1 and fr == (1 << m) - 1:
            return V(NAN)
    elif ex == (1 << e) - 1:
        return V(NAN) if fr else V(INF, neg=bool(sign))
    if ex == 0:
        val = Fraction(fr, 1 << m) * Fraction(2) ** (1 - bias)
    else:
        val = Fraction((1 << m) | fr, 1 << m) * Fraction(2) ** (ex - bias)
    return V("num", -val if sign else val, neg=bool(sign))


def encode(v, fmt, mode="rn", ftz=False, sat=False, canonical=True):
    """Bits of v rounded to fmt. v: V. mode rn/rna/rz/rm/rp."""
    e, m = FMT[fmt]
    bias = (1 << (e - 1)) - 1
    emin = 1 - bias
    top = (1 << e) - 1
    if sat:
        if v.is_nan:
            return 0
        if v.is_inf:
            return 0 if v.neg else _pack(fmt, 0, bias, 0)
        if v.value <= 0:
            return 0
        if v.value >= 1:
            return _pack(fmt, 0, bias, 0)
    if v.is_nan:
        if canonical and fmt in CANON:
            return CANON[fmt]
        return _pack(fmt, 0, top, 1 << (m - 1)) if fmt != "e4m3" else 0x7F
    if v.is_inf:
        return _pack(fmt, int(v.neg), top, 0) if fmt != "e4m3" else 0x7F | (int(v.neg) << 7)
    x = v.value
    neg = v.sign
    a = -x if x < 0 else x
    if a == 0:
        return _pack(fmt, int(neg), 0, 0)
    ex = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** ex > a:
        ex -= 1
    if ftz and ex < emin:
        # tininess after rounding with an unbounded exponent (IEEE 754; FMUL.FTZ on an H100,
        # tests/data/sfu): below the smallest normal once rounded to m bits at its own exponent
        q0 = Fraction(2) ** (ex - m)
        n0, r0 = divmod(a / q0, 1)
        if (int(n0) + int(_up(mode, r0, int(n0), neg))) * q0 < Fraction(2) ** emin:
            return _pack(fmt, int(neg), 0, 0)
    ex = max(ex, emin)
    q = Fraction(2) ** (ex - m)
    n, r = divmod(a / q, 1)
    n = int(n)
    n += int(_up(mode, r, n, neg))
    if n >> (m + 1):
        n >>= 1
        ex += 1
    if n == 0:
        return _pack(fmt, int(neg), 0, 0)
    normal = n >> m
    efield = ex + bias if normal else 0
    frac = n & ((1 << m) - 1)
    maxe = top - 1 if fmt != "e4m3" else top
    over = efield > maxe or (fmt == "e4m3" and efield == top and frac == (1 << m) - 1)
    if over:
        if fmt == "e4m3":
            return 0x7F | (int(neg) << 7)
        to_max = mode == "rz" or (mode == "rp" and neg) or (mode == "rm" and not neg)
        return _pack(fmt, int(neg), top - 1, (1 << m) - 1) if to_max else _pack(fmt, int(neg), top, 0)
    if ftz and efield == 0:
        return _pack(fmt, int(neg), 0, 0)
    return _pack(fmt, int(neg), efield, frac)


def _up(mode, r, n, neg):
    """Whether rounding the integer n with the remainder r (0 <= r < 1) goes up in magnitude."""
    half = Fraction(1, 2)
    if mode == "rn":
        return r > half or (r == half and n & 1)
    if mode == "rna":
        return r >= half
    if mode == "rz":
        return False
    if mode == "rp":
        return r > 0 and not neg
    return r > 0 and neg


def _pack(fmt, s, ex, fr):
    e, m = FMT[fmt]
    bits = (s << (e + m)) | (ex << m) | fr
    return bits << 13 if fmt == "tf32" else bits


def flush(v, fmt):
    """.ftz on an input: a subnormal becomes zero of the same sign."""
    if v.kind != "num" or v.value == 0:
        return v
    e, _ = FMT[fmt]
    if abs(v.value) < Fraction(2) ** (2 - (1 << (e - 1))):
        return V("num", Fraction(0), neg=v.value < 0)
    return v


# ---- operations on V --------------------------------------------------------------------------
def add(x, y, mode="rn"):
    if x.is_nan or y.is_nan:
        return V(NAN)
    if x.is_inf and y.is_inf:
        return V(NAN) if x.neg != y.neg else V(INF, neg=x.neg)
    if x.is_inf or y.is_inf:
        return x if x.is_inf else y
    s = x.value + y.value
    if s == 0:
        if x.value == 0 and y.value == 0:
            neg = (x.sign or y.sign) if mode == "rm" else (x.sign and y.sign)
        else:
            neg = mode == "rm"
        return V("num", Fraction(0), neg=neg)
    return V("num", s)


def neg(x):
    if x.kind == "num":
        return V("num", -x.value, neg=not x.sign)
    return V(x.kind, neg=not x.neg) if x.is_inf else x


def mul(x, y):
    if x.is_nan or y.is_nan:
        return V(NAN)
    sign = x.sign != y.sign
    if x.is_inf or y.is_inf:
        other = y if x.is_inf else x
        if other.kind == "num" and other.value == 0:
            return V(NAN)
        return V(INF, neg=sign)
    p = x.value * y.value
    return V("num", p, neg=sign and p == 0)


def fma(x, y, z, mode="rn"):
    p = mul(x, y)
    if p.is_nan or z.is_nan:
        return V(NAN)
    return add(p, z, mode)


def div(x, y):
    if x.is_nan or y.is_nan:
        return V(NAN)
    sign = x.sign != y.sign
    if x.is_inf and y.is_inf:
        return V(NAN)
    if x.is_inf:
        return V(INF, neg=sign)
    if y.is_inf:
        return V("num", Fraction(0), neg=sign)
    if y.value == 0:
        return V(NAN) if x.value == 0 else V(INF, neg=sign)
    q = x.value / y.value
    return V("num", q, neg=sign and q == 0)


def sqrt_bits(x, fmt, mode, ftz=False):
    """sqrt is not rational: find the correctly rounded result by comparing squares."""
    if x.is_nan or (x.sign and not (x.kind == "num" and x.value == 0)):
        return encode(V(NAN), fmt)
    if x.is_inf:
        return encode(x, fmt)
    if x.value == 0:
        return encode(x, fmt)
    # candidates: bisect over the format's positive finite values by bits (monotonic)
    lo, hi = 0, encode(V(INF), fmt)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        v = decode(mid, fmt).value
        if v * v <= x.value:
            lo = mid
        else:
            hi = mid
    exact = decode(lo, fmt).value ** 2 == x.value
    if exact:
        r = lo
    else:
        below, above = decode(lo, fmt).value, decode(hi, fmt)
        if mode in ("rz", "rm"):
            r = lo
        elif mode == "rp":
            r = hi
        else:
            mid = (below + (above.value if above.kind == "num" else below * 2)) / 2
            r = hi if mid * mid < x.value else (lo if mid * mid > x.value else (lo if lo % 2 == 0 else hi))
    if ftz and decode(r, fmt).value < Fraction(2) ** (2 - (1 << (FMT[fmt][0] - 1))):
        return 0
    return r


def minmax(x, y, is_min, nan_mode=False):
    if x.is_nan and y.is_nan:
        return V(NAN)
    if x.is_nan or y.is_nan:
        return V(NAN) if nan_mode else (y if x.is_nan else x)
    key = lambda v: (float("-inf") if v.is_inf and v.neg else float("inf") if v.is_inf else v.value,
                     0 if v.sign else 1)
    kx, ky = key(x), key(y)
    if is_min:
        return x if kx < ky else y
    return x if kx > ky else y
