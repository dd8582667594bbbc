"""Correctly rounded float arithmetic for the PTX ALU, vectorized, with every rounding mode.

How exactness is reached with float64 hardware arithmetic:
  * A product of two f32 (or f16/bf16) values is exact in float64 (24+24 < 53 bits); a sum is
    made exact-or-rounded-to-odd by TwoSum (Knuth) plus one ulp step toward the lost part when
    the rounded sum is even. Rounding to odd with >= p+2 bits and then rounding to a p-bit
    format in any mode gives the correctly rounded result (Boldo & Melquiond, "Emulation of
    FMA and correctly rounded sums: proved algorithms using rounding to odd", IEEE TC 2008).
  * Division and square root of f32 values rounded to float64 and then to f32 are correctly
    rounded in every mode: the exact quotient/root of 24-bit numbers is never within 2**-53
    relative of a 24-bit boundary unless equal to it (Figueroa, "When is double rounding
    innocuous?", SIGNUM 1995, p >= 2q + 2).
  * float64 results: numpy's add/sub/mul/div/sqrt are IEEE round-to-nearest; fma.rn.f64 uses
    Boldo & Melquiond's fma emulation (TwoProd by Veltkamp/Dekker splitting); the directed
    modes of f64 and the lanes where those algorithms could under- or overflow take an exact
    integer path (slow, per element).
Rounding to a format from an exact or rounded-to-odd float64 is `layoutsim.formats.encode`.

NaN results (CUDA C++ Programming Guide, 'Floating-Point Standard'): single-precision
operations with a NaN result give the quiet NaN 0x7fffffff. Half precision: 0x7fff (PTX ISA
9.7.4 lists NaN results as canonical NaN). Double precision NaN payloads follow the x86
convention numpy has (the first NaN operand, quieted; 0xfff8000000000000 for an invalid
operation): NOT measured on a GPU.
"""
from fractions import Fraction

import numpy as np

from ..formats import canonical_nan, decode, encode, get_format, raw_dtype

U64 = np.uint64
CANON = {f: raw_dtype(f).type(canonical_nan(f)) for f in ("f32", "f16", "bf16")}
MIN_NORMAL = {f: 2.0 ** get_format(f).emin for f in ("f32", "f16", "bf16", "f64")}


def indices(mask):
    """The index tuples where mask is true, for arrays of any rank (0-d too: an operation on
    immediates computes on numpy scalars, where np.nonzero refuses)."""
    return [tuple(i) for i in np.argwhere(mask)]


# ---- exact and round-to-odd building blocks ------------------------------------------------------
def sum_odd(x, y):
    """x + y rounded to odd in float64 (exact when representable); inf/NaN as IEEE gives."""
    with np.errstate(all="ignore"):
        s = x + y
        bb = s - x
        err = (x - (s - bb)) + (y - bb)
        fix = np.isfinite(s) & (err != 0) & ((np.asarray(s).view(U64) & U64(1)) == 0)
        if np.any(fix):
            s = np.where(fix, np.nextafter(s, np.where(err > 0, np.inf, -np.inf)), s)
    return s


def rm_zero_sign(r, x, y, mode):
    """An exact zero sum is -0 under round-toward-minus unless both addends are +0 (IEEE 754
    6.3); float64's round-to-nearest sum gives the other modes' sign already."""
    if mode != "rm":
        return r
    neg = np.signbit(x) | np.signbit(y)
    return np.where((r == 0) & neg, -0.0, r)


def flush(x, fmt):
    """Subnormal values to zero of the same sign (.ftz on inputs and results)."""
    tiny = (x != 0) & (np.abs(x) < MIN_NORMAL[fmt])
    return np.where(tiny, np.copysign(0.0, x), x) if np.any(tiny) else x


# ---- rounding to the destination --------------------------------------------------------------
def round_to(x, fmt, mode="rn", ftz=False, sat=False, canonical=True):
    """float64 (exact or rounded to odd) -> raw bits of fmt ("f32", "f16", "bf16", ...)."""
    x = np.asarray(x, np.float64)
    if sat:   # clamp to [+0.0, 1.0] (CUDA Math API __saturatef): NaN and -0.0 give +0.0
        x = np.where(np.isnan(x) | (x <= 0), 0.0, np.minimum(x, 1.0))
    if fmt == "f32" and mode == "rn":
        with np.errstate(all="ignore"):
            out = x.astype(np.float32).view(np.uint32)
    elif fmt == "f16" and mode == "rn" and canonical:
        # numpy rounds float64 to float16 once, to nearest even, as encode does (its NaN
        # payloads differ: canonical replaces them below); tests/ptx/test_fround_f16.py
        with np.errstate(all="ignore"):
            out = x.astype(np.float16).view(np.uint16)
    else:
        out = encode(fmt, x, mode)
    if ftz and np.count_nonzero((x != 0) & (np.abs(x) < MIN_NORMAL[fmt])):
        # (a value of magnitude at least the smallest normal rounds to a normal: none to flush)
        # Tininess as IEEE 754 defines it after rounding: the result rounded to the format's
        # precision with an unbounded exponent is below the smallest normal. FMUL.FTZ on sm_90
        # (tests/data/sfu, measured on an H100): 0x00ffffff * 0.5 (exact 2^-126 (1 - 2^-24), a
        # tie the subnormal grid rounds up to 0x00800000) gives +0; 0x00800001 * 0x3f7ffffe
        # (2^-126 (1 - 2^-46)) gives 0x00800000. Scaling is exact and puts the values
        # that matter in the normal range, where rounding has the full precision: scaled by
        # 1 / MIN_NORMAL (exact, a power of two), the smallest normal is 1.
        with np.errstate(all="ignore"):
            wide = decode_raw(round_to(x / MIN_NORMAL[fmt], fmt, mode, canonical=False), fmt)
            tiny = (x != 0) & (np.abs(wide) < 1)
        if np.any(tiny):
            sign_bit = out.dtype.type(1 << (out.dtype.itemsize * 8 - 1))
            out = np.where(tiny, out & sign_bit, out).astype(out.dtype)
    if canonical and fmt in CANON:
        out = np.where(np.isnan(x), CANON[fmt], out).astype(out.dtype)
    return out


def decode_raw(raw, fmt):
    """Raw bits -> float64 values (exact)."""
    raw = np.asarray(raw)
    if fmt == "f32":
        return raw.astype(np.uint32).view(np.float32).astype(np.float64)
    if fmt == "f64":
        return raw.astype(U64).view(np.float64)
    if fmt == "f16":
        return raw.astype(np.uint16).view(np.float16).astype(np.float64)
    return decode(fmt, raw)


def f32(x, mode="rn", ftz=False, sat=False):
    """float64 -> f32 values (float32 array) with PTX's result rules."""
    return round_to(x, "f32", mode, ftz, sat).view(np.float32)


# ---- float64 results ------------------------------------------------------------------------------
def _split(a):
    c = a * 134217729.0                     # 2**27 + 1 (Veltkamp)
    hi = c - (c - a)
    return hi, a - hi


def two_prod(a, b):
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, e


def _safe(*xs, lo=-900, hi=900):
    """Lanes whose operands are finite, and zero or of moderate exponent (no under/overflow in
    the error-free transformations)."""
    ok = np.ones(np.broadcast(*xs).shape, bool)
    for x in xs:
        x = np.broadcast_to(x, ok.shape)
        e = np.frexp(x)[1]
        ok &= np.isfinite(x) & ((x == 0) | ((e > lo) & (e < hi)))
    return ok


def fma64(a, b, c, mode="rn"):
    """fma.{rn,rz,rm,rp}.f64, correctly rounded."""
    a, b, c = np.broadcast_arrays(*(np.asarray(v, np.float64) for v in (a, b, c)))
    with np.errstate(all="ignore"):
        special = ~(np.isfinite(a) & np.isfinite(b) & np.isfinite(c))
        out = a * b + c                       # right for Inf/NaN operands (the product is exact)
        if mode == "rn":
            uh, ul = two_prod(a, b)
            th, tl = uh + c, None
            bb = th - uh
            tl = (uh - (th - bb)) + (c - bb)
            v = sum_odd(tl, ul)
            fast = th + v
            ok = _safe(a, b, c) & _safe(fast) & ~special
            out = np.where(ok, fast, out)
            slow = ~ok & ~special
        else:
            slow = ~special
    if np.any(slow):
        out = np.array(out, np.float64)         # a copy, and an array when 0-d
        for i in indices(slow):
            out[i] = _exact_f64(Fraction(float(a[i])) * Fraction(float(b[i])) + Fraction(float(c[i])),
                                mode, (np.signbit(a[i]) ^ np.signbit(b[i]), np.signbit(c[i])))
    return out


def arith64(op, a, b, mode):
    """add/sub/mul/div.{rz,rm,rp}.f64 (directed modes: exact integer path per element)."""
    a, b = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(b, np.float64))
    with np.errstate(all="ignore"):
        out = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}[op](a, b)
    if mode == "rn":
        return out
    fin = np.isfinite(a) & np.isfinite(b) & ~((op == "div") & (b == 0))
    out = np.array(out, np.float64)             # a copy, and an array when 0-d
    for i in indices(fin):
        x, y = Fraction(float(a[i])), Fraction(float(b[i]))
        if op == "add":
            v, signs = x + y, (np.signbit(a[i]), np.signbit(b[i]))
        elif op == "sub":
            v, signs = x - y, (np.signbit(a[i]), not np.signbit(b[i]))
        elif op == "mul":
            v, signs = x * y, None
        else:
            v, signs = x / y, None
        r = _exact_f64(v, mode, signs)
        if v == 0 and signs is None:
            r = -0.0 if np.signbit(a[i]) ^ np.signbit(b[i]) else 0.0
        out[i] = r
    return out


def sqrt64(a, mode):
    a = np.asarray(a, np.float64)
    with np.errstate(all="ignore"):
        r = np.sqrt(a)
    if mode == "rn":
        return r
    r = np.array(r, np.float64)
    for i in indices(np.isfinite(a) & (a > 0)):
        x, q = Fraction(float(a[i])), float(r[i])
        sq = Fraction(q) ** 2
        if sq == x:
            continue
        below = sq < x                        # the true root is above q
        if (mode == "rp" and below) or (mode in ("rz", "rm") and not below):
            q = float(np.nextafter(q, np.inf if below else -np.inf))
        r[i] = q
    return r


def _exact_f64(v, mode, zero_signs=None):
    """Fraction -> float64 rounded by mode (IEEE, with subnormals and overflow)."""
    if v == 0:
        if zero_signs is None:
            return 0.0
        sa, sb = bool(zero_signs[0]), bool(zero_signs[1])
        neg = (sa or sb) if mode == "rm" else (sa and sb)
        return -0.0 if neg else 0.0
    neg = v < 0
    m = -v if neg else v
    e = m.numerator.bit_length() - m.denominator.bit_length()
    if Fraction(2) ** e > m:
        e -= 1
    q = max(e, -1022) - 52                    # exponent of the last kept bit
    scaled = m / Fraction(2) ** q if q >= 0 else m * Fraction(2) ** (-q)
    n, rem = divmod(scaled.numerator, scaled.denominator)
    inexact = rem != 0
    if mode == "rn":
        twice = 2 * rem
        up = twice > scaled.denominator or (twice == scaled.denominator and n & 1)
    elif mode == "rz":
        up = False
    elif mode == "rp":
        up = inexact and not neg
    else:
        up = inexact and neg
    n += up
    if n >= 1 << 53:
        n >>= 1
        q += 1
    if q + 52 > 1023:                         # overflow
        to_max = mode == "rz" or (mode == "rp" and neg) or (mode == "rm" and not neg)
        r = float(np.finfo(np.float64).max) if to_max else float("inf")
    else:
        r = float(Fraction(n) * Fraction(2) ** q)
    return -r if neg else r
