"""The recipes of the discriminating pool: structured dot products, one function per recipe.

Each instance of a float pool carries min(M, N) designed dot products on its diagonal (A row
t, B column t, C[t, t]); a recipe fills one of them (a `Slot`) so that the candidate
behaviours (`candidates`) give different results: cancellations around the alignment boundary,
ties of the final rounding, tiny products with C = 0, subnormal inputs, overflow, NaN/Inf...
`slot(plan, rng, recipe)` draws the context every recipe shares (the random order of k, the
base exponent) and runs one.
"""
import numpy as np

from ...formats import get_format
from ..plan import FP8
from .values import Fmt, Slot


class Context:
    """What every recipe of one slot shares; the random draws happen here, in a fixed order.."""

    def __init__(self, plan, rng):
        self.plan, self.rng = plan, rng
        M, N, K = plan.shape
        self.K = K
        self.fa, self.fb, self.fc = Fmt(plan.a), Fmt(plan.b), Fmt(plan.c)
        self.F = plan.align_bits
        self.pe_min = self.fa.emin + self.fb.emin
        self.pe_max = self.fa.emax + self.fb.emax
        pe_min, pe_max, F = self.pe_min, self.pe_max, self.F
        self.s = Slot(K)
        self.ks = rng.permutation(K)
        self.keep = plan.keep_bits
        base = int(rng.integers(max(pe_min, -8), min(pe_max, 8) + 1)) if pe_max > pe_min else 0
        self.base = int(np.clip(base, pe_min + F + 4, pe_max - 2)) if pe_max - pe_min > F + 8 else base

    def cval(self, e, sign=None):
        return self.fc.value(self.rng, e, sign)


def _sparse(c):
    s, rng, fa, fb, F, ks, base, cval = c.s, c.rng, c.fa, c.fb, c.F, c.ks, c.base, c.cval
    for t in range(int(rng.integers(1, 5))):
        s.put(rng, fa, fb, ks[t], base - int(rng.integers(0, F + 6)))
    if rng.random() < 0.5:
        s.c = cval(base - int(rng.integers(-2, F + 6)))


def _cancel_tiny(c):
    s, rng, fa, fb, F, ks, base, cval = c.s, c.rng, c.fa, c.fb, c.F, c.ks, c.base, c.cval
    k1, k2, k3 = ks[:3]
    s.put(rng, fa, fb, k1, base, sign=0)
    s.a[k2], s.b[k2] = -s.a[k1], s.b[k1]
    s.put(rng, fa, fb, k3, base - F + int(rng.integers(-3, 4)))
    r = rng.random()
    s.c = 0.0 if r < 0.4 else cval(base - int(rng.integers(0, F + 4))) if r < 0.8 else \
        cval(base, int(rng.integers(0, 2)))


def _boundary(c):
    s, rng, fa, fb, F, ks, base, cval = c.s, c.rng, c.fa, c.fb, c.F, c.ks, c.base, c.cval
    k1, k2 = ks[:2]
    s.put(rng, fa, fb, k1, base, sa=2.0 - 2.0 ** -fa.mb, sb=2.0 - 2.0 ** -fb.mb)
    s.put(rng, fa, fb, k2, base - F + int(rng.integers(-2, 3)))
    if rng.random() < 0.5:
        s.c = cval(base - int(rng.integers(-1, 3)))


def _ties(c):
    """Sum = X + half an ulp of the result (+ or - a tiny rest): RNE/RZ/RD/RU and F apart."""
    s, rng, fa, fb, fc, F, ks, base, keep = c.s, c.rng, c.fa, c.fb, c.fc, c.F, c.ks, c.base, c.keep
    k1, k2, k3 = ks[:3]
    e = base
    s.put(rng, fa, fb, k1, e, sign=int(rng.integers(0, 2)), sa=1.0,
          sb=1.0 + (rng.integers(0, 2) / 2 ** fb.mb))
    sign = 0 if s.a[k1] > 0 else 1
    s.put(rng, fa, fb, k2, e - keep - 1, sign=sign, sa=1.0, sb=1.0)
    r = rng.random()
    if r < 0.6:
        s.put(rng, fa, fb, k3, e - keep - 1 - int(rng.integers(1, F - keep + 4)),
              sign=int(rng.integers(0, 2)), sa=1.0, sb=1.0)
    if rng.random() < 0.3 and e - keep - 1 >= fc.sub_min:
        s.c = fc.value(rng, e - keep - 1, sign, 1.0)


def _c_role(c):
    """C alone, C with one small product, C = -0, C subnormal, tiny products."""
    s, rng, fa, fb, fc, F, ks, base, cval = c.s, c.rng, c.fa, c.fb, c.fc, c.F, c.ks, c.base, c.cval
    r = rng.random()
    s.c = cval(int(rng.integers(fc.sub_min, fc.emin + 4))) if r < 0.3 else \
        (-0.0 if r < 0.45 else cval(base))
    for t in range(int(rng.integers(0, 3))):
        s.put(rng, fa, fb, ks[t], int(np.log2(abs(s.c)) if s.c else base) - int(rng.integers(0, F + 6)))


def _tiny(c):
    """A product X just above the exponent floor and a term of the other sign near the alignment
    grid below it, C = 0 (or tiny): where the floor and a zero C act."""
    s, rng, plan, fa, fb, fc, F, ks = c.s, c.rng, c.plan, c.fa, c.fb, c.fc, c.F, c.ks
    pe_min, cval = c.pe_min, c.cval
    floor = plan.floor if plan.floor is not None else pe_min
    top = max(floor, pe_min)
    ex = int(rng.integers(max(pe_min, top - F + 2), top + 10))
    k1, k2, k3 = ks[:3]
    s.put(rng, fa, fb, k1, ex, sign=0)
    ey = max(ex, floor) - F + int(rng.integers(-4, 5))
    s.put(rng, fa, fb, k2, max(ey, pe_min - fa.mb - fb.mb), sign=1 if rng.random() < 0.7 else 0)
    if rng.random() < 0.4:   # a subnormal input somewhere in the block
        s.a[k3] = fa.value(rng, int(rng.integers(fa.sub_min, fa.emin)))
        s.b[k3] = abs(fb.value(rng, int(np.clip(ex - fa.emin, fb.emin, fb.emax)), 0))
    r = rng.random()
    s.c = 0.0 if r < 0.6 else (-0.0 if r < 0.7 else cval(int(rng.integers(fc.sub_min, fc.emin + 2))))


def _floor_tie(c):
    """A product exactly half-way between two subnormal results, plus a term just below the
    alignment grid of the exponent floor: it decides the rounding only when the floor does not
    truncate it (the floor's own test, e.g. the fp16-result floor)."""
    s, rng, plan, fa, fb, F, ks, keep, pe_min = c.s, c.rng, c.plan, c.fa, c.fb, c.F, c.ks, c.keep, c.pe_min
    fd = Fmt(plan.d)
    q = fd.emin - keep                       # quantum of subnormal results
    odd = int(rng.integers(0, 16)) * 2 + 1
    n = odd.bit_length() - 1
    sign = int(rng.integers(0, 2))
    k1, k2 = ks[:2]
    s.put(rng, fa, fb, k1, q - 1 + n, sign=sign, sa=odd / 2.0 ** n, sb=1.0)
    top = max(q - 1 + n, plan.floor if plan.floor is not None else pe_min)
    ey = max(top - F + int(rng.integers(-3, 9)), pe_min - fa.mb - fb.mb)
    s.put(rng, fa, fb, k2, ey, sign=sign if rng.random() < 0.7 else 1 - sign, sa=1.0, sb=1.0)


def _subnormal(c):
    """Subnormal input times a large one (its exponent counts as emin), next to a normal term."""
    s, rng, fa, fb, F, ks, cval = c.s, c.rng, c.fa, c.fb, c.F, c.ks, c.cval
    k1, k2 = ks[:2]
    s.a[k1] = fa.value(rng, int(rng.integers(fa.sub_min, fa.emin)))
    s.b[k1] = abs(fb.value(rng, int(rng.integers(max(fb.emin, 0), fb.emax + 1)), 0))
    ep = int(np.floor(np.log2(abs(s.a[k1] * s.b[k1]))))
    s.put(rng, fa, fb, k2, ep - int(rng.integers(-2, F + 4)))
    if rng.random() < 0.3:
        s.c = cval(ep - int(rng.integers(0, F)))


def _sig_ge_2(c):
    """Largest product with significand >= 2 (product exponent ea+eb vs its true exponent)."""
    s, rng, fa, fb, F, ks, base = c.s, c.rng, c.fa, c.fb, c.F, c.ks, c.base
    k1, k2 = ks[:2]
    s.put(rng, fa, fb, k1, base, sa=1.5 + rng.integers(0, 2) / 4, sb=1.5 + rng.integers(0, 2) / 4)
    s.put(rng, fa, fb, k2, base - F + int(rng.integers(-1, 3)))


def _overflow(c):
    s, rng, plan, fa, fb, fc, ks, pe_max = c.s, c.rng, c.plan, c.fa, c.fb, c.fc, c.ks, c.pe_max
    top = min(pe_max, fc.emax + 2) if plan.d == "f32" else 16
    for t in range(int(rng.integers(2, 5))):
        s.put(rng, fa, fb, ks[t], top - int(rng.integers(0, 3)), sign=0)
    if rng.random() < 0.5:
        s.c = fc.value(rng, fc.emax, 0)
    if rng.random() < 0.5:    # a -Inf or NaN in a later block
        k = ks[-1]
        s.a[k] = -np.inf if rng.random() < 0.5 else np.nan
        s.b[k] = 1.0
    if rng.random() < 0.5:
        s.a, s.c = -s.a, -s.c


def _specials(c):
    s, rng, plan, fa, fb, ks, base = c.s, c.rng, c.plan, c.fa, c.fb, c.ks, c.base
    r = int(rng.integers(0, 9))
    s.put(rng, fa, fb, ks[0], base)
    k = ks[1]
    if r == 0:
        s.a[k], s.b[k] = np.inf, 0.0
    elif r == 1:
        s.a[k], s.b[k] = np.inf, 1.0
        s.a[ks[2]], s.b[ks[2]] = -np.inf, 1.0
    elif r == 2:
        s.a[k], s.b[k] = -np.inf, 2.0
    elif r == 3:
        s.c = np.inf * (1 if rng.random() < 0.5 else -1)
    elif r == 4:
        s.c = np.nan
    elif r == 5:
        s.a[k] = np.nan
    elif r == 6:
        s.a[k], s.b[k] = np.inf, 1.0
        s.c = -np.inf
    elif r == 7:     # NaN payloads: negative, signalling, low bits only
        s.raw_a[k] = _nan_payload(plan.a, rng)
    else:
        s.raw_c = _nan_payload(plan.c, rng)
    if plan.a == "e4m3":      # no Inf in e4m3: the overflow value is NaN
        s.a = np.where(np.isinf(s.a), np.copysign(448.0, s.a), s.a)


def _zero_sign(c):
    s, rng, plan, fa, fb, F, ks, base, pe_min = c.s, c.rng, c.plan, c.fa, c.fb, c.F, c.ks, c.base, c.pe_min
    r = rng.random()
    k1, k2 = ks[:2]
    s.put(rng, fa, fb, k1, base)
    s.a[k2], s.b[k2] = -s.a[k1], s.b[k1]
    s.c = -0.0 if r < 0.5 else 0.0
    if r > 0.7:     # negative sum below the smallest result: rounds to zero
        s.a[:] = 0.0
        e = int(rng.integers(pe_min - fa.mb - fb.mb, pe_min + 2))
        s.put(rng, fa, fb, k1, max(e, (plan.floor or -999) - F + 2), sign=1)


def _fp8_split(c):
    s, rng, fa, fb, F, base, K, cval = c.s, c.rng, c.fa, c.fb, c.F, c.base, c.K, c.cval
    half = K // 2
    first = [k for k in range(half) if k % 4 < 2]
    second = [k for k in range(half) if k % 4 >= 2]
    k1 = int(rng.choice(first))
    k2 = int(rng.integers(half, K))
    k3 = int(rng.choice(second if rng.random() < 0.5 else first))
    s.put(rng, fa, fb, k1, base, sign=0)
    s.a[k2], s.b[k2] = -s.a[k1], s.b[k1]
    if k3 not in (k1, k2):
        s.put(rng, fa, fb, k3, base - F + int(rng.integers(-2, 6)))
    if rng.random() < 0.5:
        s.c = cval(base - int(rng.integers(0, F)))


def _carries(c):
    """Many large products of one sign: the sum carries far above the largest exponent."""
    s, rng, fa, fb, F, ks, base, K = c.s, c.rng, c.fa, c.fb, c.F, c.ks, c.base, c.K
    for t in range(K):
        s.put(rng, fa, fb, ks[t], base - int(rng.integers(0, 2)), sign=0,
              sa=2.0 - 2.0 ** -fa.mb, sb=2.0 - 2.0 ** -fb.mb)
    s.put(rng, fa, fb, ks[0], base - F - int(rng.integers(0, 4)))


def _nan_payload(fmt, rng):
    f = get_format(fmt)
    if f.specials == "fn":
        return int(rng.choice([0x7F, 0xFF]))
    choices = {"f16": [0x7C01, 0xFFFF, 0x7D00, 0xFE00], "bf16": [0x7F81, 0xFFC0, 0xFFFF],
               "e5m2": [0x7D, 0xFF, 0x7E], "f32": [0x7F800001, 0xFFFFFFFF, 0x7FA00000],
               "tf32": [0x7F800001, 0x7F802000, 0xFFC00000]}
    return int(rng.choice(choices.get(fmt, [0])))


RECIPES = {"sparse": _sparse, "cancel_tiny": _cancel_tiny, "boundary": _boundary, "ties": _ties,
           "c_role": _c_role, "tiny": _tiny, "floor_tie": _floor_tie, "subnormal": _subnormal,
           "sig_ge_2": _sig_ge_2, "overflow": _overflow, "specials": _specials,
           "zero_sign": _zero_sign, "fp8_split": _fp8_split, "carries": _carries}
FLOAT_RECIPES = tuple(r for r in RECIPES if r != "fp8_split")


def recipes(plan):
    """The recipes that can matter for a plan (fp8_split: fp8 inputs with K >= 32).."""
    out = list(FLOAT_RECIPES)
    if plan.a in FP8 and plan.shape[2] >= 32:
        out.append("fp8_split")
    return out


def slot(plan, rng, recipe):
    """One designed dot product of a float pool instance.."""
    c = Context(plan, rng)
    RECIPES[recipe](c)
    return c.s
