"""A slow, independent reference of the block-FMA model, written from the published text with
Python Fractions (no code shared with layoutsim.numerics.kernel):

  "A block of products and C are aligned to the largest exponent; each term is truncated
   (toward zero, in magnitude) to a fixed number of bits below that exponent; the truncated
   terms are added exactly; the sum is normalised once and rounded."  (issue 4, after
   Khattak & Mikaitis 2025, Fasi et al. 2021, MMA-Sim 2025)

Only the published defaults are modelled (no candidate switches), which is what the kernel
is checked against.
"""
import math
from fractions import Fraction

import numpy as np

from layoutsim.formats import decode, encode, get_format, raw_dtype


def nominal_exponent(x, fmt):
    """floor(log2|x|), or the format's emin for subnormals."""
    f = get_format(fmt)
    if x == 0:
        return f.emin
    e = math.floor(math.log2(abs(x)))
    if Fraction(2) ** e > abs(Fraction(x)):       # guard float log2 rounding
        e -= 1
    if Fraction(2) ** (e + 1) <= abs(Fraction(x)):
        e += 1
    return max(e, f.emin)


def round_to(value, fmt, mode, keep=None):
    """Raw bits of Fraction `value` rounded to fmt ('rz' or 'rne'), `keep` fraction bits."""
    f = get_format(fmt)
    keep = f.mbits if keep is None else keep
    if value == 0:
        return int(encode(fmt, np.array([0.0]))[0])
    neg = value < 0
    mag = -value if neg else value
    e = math.floor(math.log2(mag.numerator)) - math.floor(math.log2(mag.denominator))
    while Fraction(2) ** e > mag:
        e -= 1
    while Fraction(2) ** (e + 1) <= mag:
        e += 1
    quantum = Fraction(2) ** (max(e, f.emin) - keep)
    r = mag / quantum
    n = math.floor(r) if mode == "rz" else round(r)      # round(): ties to even
    out = n * quantum
    if out == 0:
        return int(encode(fmt, np.array([0.0]))[0])
    if out >= Fraction(2) ** (f.emax + 1):
        v = math.inf
    else:
        v = float(out)
    return int(encode(fmt, np.array([-v if neg else v]))[0])


def _no_late(plan):
    from dataclasses import replace
    return replace(plan, late_c=False)


def dot(a_raw, b_raw, c_raw, plan):
    """One output element: a_raw, b_raw (K,) raw bits of the arithmetic formats (after the
    instruction's conversions), c_raw scalar raw bits of the C format."""
    fa, fb, fc, fd = plan.arith_a, plan.arith_b, plan.c, plan.d
    av, bv = decode(fa, a_raw), decode(fb, b_raw)
    cfmt, craw = fc, c_raw
    p = plan.profile
    nan_bits = p.nan_f32 if fd == "f32" else p.nan_f16
    order = list(plan.k_order) or list(range(len(av)))
    if plan.late_c:     # products first (C = 0), then one IEEE addition of C, to nearest
        c_saved = c_raw
        plan0 = _no_late(plan)
        zero = 0
        p_raw = dot(a_raw, b_raw, zero, plan0)
        fdd = fd
        pv = float(decode(fdd, np.array([p_raw], dtype=raw_dtype(fdd)))[0])
        cv = float(decode(fc, np.array([c_saved], dtype=raw_dtype(fc)))[0])
        p = plan.profile
        nan_bits = p.nan_f32 if fd == "f32" else p.nan_f16
        if math.isnan(pv) or math.isnan(cv) or (math.isinf(pv) and math.isinf(cv) and pv != cv):
            return nan_bits
        if math.isinf(pv) or math.isinf(cv):
            return int(encode(fd, np.array([pv if math.isinf(pv) else cv]))[0])
        return round_to(Fraction(pv) + Fraction(cv), fd, "rne")
    for k0 in range(0, len(order), plan.block):
        ks = order[k0:k0 + plan.block]
        c = float(decode(cfmt, np.array([craw], dtype=raw_dtype(cfmt)))[0])
        prods = [(av[k], bv[k]) for k in ks]
        vals = [x * y if not (math.isinf(x) or math.isinf(y)) else None for x, y in prods]
        if math.isnan(c) or any(math.isnan(x) or math.isnan(y) for x, y in prods):
            craw, cfmt = nan_bits, fd
            continue
        infs = []
        for x, y in prods:
            if math.isinf(x) or math.isinf(y):
                if x == 0 or y == 0:
                    infs.append(0)
                else:
                    infs.append(math.copysign(1, x) * math.copysign(1, y))
        if math.isinf(c):
            infs.append(math.copysign(1, c))
        if infs:
            if 0 in infs or (1 in infs and -1 in infs):
                craw = nan_bits
            else:
                craw = int(encode(fd, np.array([math.inf * infs[0]]))[0])
            cfmt = fd
            continue
        terms = []
        for (x, y), v in zip(prods, vals):
            if x != 0 and y != 0:
                terms.append((Fraction(x) * Fraction(y),
                              nominal_exponent(x, fa) + nominal_exponent(y, fb)))
        if c != 0:
            terms.append((Fraction(c), nominal_exponent(c, cfmt)))
        if not terms:
            craw, cfmt = int(encode(fd, np.array([0.0]))[0]), fd
            continue
        emax = max(e for _, e in terms)
        if plan.floor is not None:
            emax = max(emax, plan.floor)
        grid = Fraction(2) ** (emax - plan.align_bits)
        S = sum(int(t / grid) for t, _ in terms)          # int() truncates toward zero
        craw = round_to(S * grid, fd, plan.rounding, plan.keep_bits)
        cfmt = fd
    return craw
