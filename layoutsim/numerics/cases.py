"""Test cases for the GPU run: a discriminating set, then random cases from several distributions.

    a, b, c = generate("mma.m16n8k16.f32.f16.f16.f32", n=3000, seed=1)

returns raw-bit arrays a (n, M, K), b (n, K, N), c (n, M, N) (uint16 f16/bf16, uint32
tf32/f32/s32, uint8 fp8/s8/u8, uint8 low nibble s4/u4, uint64 f64), deterministic for
(instruction, n, seed, arch): numpy PCG64 seeded with `seed`, no other source of randomness.

The discriminating part is chosen, not just drawn: a pool of structured dot products
(cancellations around the alignment boundary, ties of the final rounding, tiny products
with C = 0, subnormal inputs, overflow, NaN/Inf, ...) is run through the arch's profile and
through every candidate behaviour (`candidates`: one profile parameter changed at a time),
and the instances that separate each candidate from the profile are kept, round robin, until
every separable candidate has its share. Each instance carries min(M, N) designed dot
products on its diagonal (A row t, B column t, C[t, t]); the other outputs are free extras.
`labels(...)` says which family each instance came from and which candidates it separates;
`coverage(...)` counts, per candidate, the instances that separate it.

    python -m layoutsim.numerics.cases INSTRUCTION [--n 3000] [--seed 1] [--arch sm_90]
"""
import itertools
import math

import numpy as np

from ..formats import decode, encode, get_format, raw_dtype
from .api import resolve, run
from .plan import FP8, make_plan

RANDOM_FLOAT = ("normal", "wide", "cancel", "subnormal", "mixed_scale", "c_dominant", "raw_bits")
RANDOM_INT = ("uniform", "extremes", "sparse", "c_edge")
RANDOM_F64 = ("normal", "wide", "cancel", "subnormal", "raw_bits")


# ----------------------------------------------------------------------------- candidates
def candidates(plan):
    """[(label, Profile)]: the plan's profile with one behaviour changed, for every parameter
    the instruction's result depends on (values: the other published or plausible ones)."""
    p = plan.profile
    alt = {
        "block_16bit": [2, 4, 8, 16, 32], "block_tf32": [2, 4, 8, 16], "block_fp8": [8, 16, 32],
        "extra_bits": [p.extra_bits - 1, p.extra_bits + 1, p.extra_bits + 3],
        "fp8_align_bits": [p.fp8_align_bits - 1, p.fp8_align_bits + 1, 25],
        "fp8_f32_bits": [p.fp8_f32_bits - 1, p.fp8_f32_bits + 1, 23],
        "fp32_rounding": ["rz", "rne", "rd", "ru"], "fp16_rounding": ["rne", "rz", "rd", "ru"],
        "emax_floor_f32": [None, -126, (p.emax_floor_f32 or -133) - 1, (p.emax_floor_f32 or -133) + 1],
        "emax_floor_f16": [None, -14, -15, (p.emax_floor_f16 or -21) - 1, (p.emax_floor_f16 or -21) + 1],
        "c_zero": ["skip", "emin"], "product_exponent": ["sum", "normalized", "true"],
        "subnormal_inputs": ["keep", "flush"], "subnormal_outputs": ["keep", "flush"],
        "tf32_inputs": ["truncate", "round"], "overflow": ["inf", "ieee"],
        "specials": ["per_block", "upfront"], "zero_sign": ["positive", "signed"],
        "fp8_mma_sync": ["f16", "native"], "fp8_f16_split": ["halves", "pairs"],
        "fp8_f16_c": ["first", "late"], "int_saturation": ["final", "each_product"],
        "f64": ["fma_chain", "fma_chain_reversed", "mul_add"],
        "nan_f32": [0x7FFFFFFF, 0x7FC00000], "nan_f16": [0x7FFF, 0x7E00],
        "nan_f64": [0xFFF8000000000000, 0x7FF8000000000000],
        "nan_f64_rule": ["propagate", "canonical"],
        "nan_f64_order": ["".join(o) for o in itertools.permutations("ABC")],
        "nan_f64_snan_first": [False, True],
    }
    inst = plan.inst
    out, seen = [], set()
    for param in plan.uses:
        base = getattr(p, param)
        for v in alt.get(param, []):
            if v == base:
                continue
            var = p.with_(**{param: v})
            vp = make_plan(inst, var)
            key = (vp.block, vp.align_bits, vp.floor, vp.rounding, vp.keep_bits, vp.k_order,
                   vp.late_c, vp.arith_a, param if param not in ("block_16bit", "block_tf32",
                                                                  "block_fp8", "extra_bits",
                                                                  "fp8_align_bits") else "", v)
            if vp.kind == "float" and key in seen:
                continue
            seen.add(key)
            if vp.kind == "float" and vp.block == plan.block and param.startswith("block"):
                continue
            out.append((f"{param}={_show(v)}", var))
    return out


def _show(v):
    return hex(v) if isinstance(v, int) and v > 0xFF else str(v)


# ----------------------------------------------------------------------------- helpers
class _Fmt:
    """Value-space helpers for one float format."""

    def __init__(self, name):
        self.f = get_format(name)
        self.name = name
        self.mb = self.f.mbits
        self.emin = self.f.emin
        self.emax = self.f.emax
        self.sub_min = self.emin - self.mb      # exponent of the smallest subnormal

    def sig(self, rng, size=None, bits=None):
        """Random significand in [1, 2) with at most `bits` (default mb) fraction bits."""
        b = self.mb if bits is None else min(bits, self.mb)
        return 1.0 + rng.integers(0, 1 << b, size) / float(1 << b)

    def value(self, rng, e, sign=None, sig=None):
        """A representable value near 2**e (clamped into the format's range)."""
        e = min(max(int(e), self.sub_min), self.emax)
        s = self.sig(rng) if sig is None else sig
        if e < self.emin:       # subnormal: keep only the bits that exist
            step = 2.0 ** self.sub_min
            v = max(math.floor(s * 2.0 ** e / step) * step, step)
        else:
            v = s * 2.0 ** e
            if e == self.emax and self.f.specials == "fn":
                v = min(v, 448.0)
        if sign is None:
            sign = rng.integers(0, 2)
        return -v if sign else v

    def values(self, rng, shape, lo, hi):
        """Random representable values, exponents uniform in [lo, hi] (clamped to the range)."""
        lo, hi = max(lo, self.sub_min), min(hi, self.emax)
        e = rng.integers(lo, hi + 1, shape)
        v = self.sig(rng, shape) * np.exp2(e)
        step = 2.0 ** self.sub_min
        v = np.where(e < self.emin, np.maximum(np.floor(v / step), 1) * step, v)
        if self.f.specials == "fn":
            v = np.minimum(v, 448.0)
        return np.where(rng.integers(0, 2, shape) == 1, -v, v)


def _split(rng, fa, fb, e):
    """Exponents (ea, eb) with ea + eb = e: two normal inputs where that is possible, else
    (products below the smallest normal product) subnormal ones."""
    lo = max(fa.emin, e - fb.emax)
    hi = min(fa.emax, e - fb.emin)
    if lo > hi:
        lo = max(fa.sub_min, e - fb.emax)
        hi = min(fa.emax, e - fb.sub_min)
    if lo > hi:
        ea = min(max(e // 2, fa.sub_min), fa.emax)
    else:
        ea = int(rng.integers(lo, hi + 1))
    return ea, min(max(e - ea, fb.sub_min), fb.emax)


class _Slot:
    def __init__(self, K):
        self.a = np.zeros(K)
        self.b = np.zeros(K)
        self.c = 0.0
        self.raw_a = {}     # k -> raw bits overriding the value (specials with payloads)
        self.raw_b = {}
        self.raw_c = None

    def put(self, rng, fa, fb, k, e, sign=None, sa=None, sb=None):
        """Product a[k]*b[k] near 2**e (inputs normal where possible)."""
        ea, eb = _split(rng, fa, fb, e)
        self.a[k] = fa.value(rng, ea, sign, sa)
        self.b[k] = abs(fb.value(rng, eb, 0, sb))


def _ctx(plan):
    M, N, K = plan.shape
    fa, fb, fc = _Fmt(plan.a), _Fmt(plan.b), _Fmt(plan.c)
    F = plan.align_bits
    L = max(1, plan.block)
    pe_min = fa.emin + fb.emin
    pe_max = fa.emax + fb.emax
    return M, N, K, fa, fb, fc, F, L, pe_min, pe_max


# ----------------------------------------------------------------------------- float slots
def _float_slot(plan, rng, family):
    M, N, K, fa, fb, fc, F, L, pe_min, pe_max = _ctx(plan)
    s = _Slot(K)
    ks = rng.permutation(K)
    keep = plan.keep_bits
    base = int(rng.integers(max(pe_min, -8), min(pe_max, 8) + 1)) if pe_max > pe_min else 0
    base = int(np.clip(base, pe_min + F + 4, pe_max - 2)) if pe_max - pe_min > F + 8 else base

    def cval(e, sign=None):
        return fc.value(rng, e, sign)

    if family == "sparse":
        for t in range(int(rng.integers(1, 5))):
            s.put(rng, fa, fb, ks[t], base - int(rng.integers(0, F + 6)))
        if rng.random() < 0.5:
            s.c = cval(base - int(rng.integers(-2, F + 6)))
    elif family == "cancel_tiny":
        k1, k2, k3 = ks[:3]
        s.put(rng, fa, fb, k1, base, sign=0)
        s.a[k2], s.b[k2] = -s.a[k1], s.b[k1]
        s.put(rng, fa, fb, k3, base - F + int(rng.integers(-3, 4)))
        r = rng.random()
        s.c = 0.0 if r < 0.4 else cval(base - int(rng.integers(0, F + 4))) if r < 0.8 else \
            cval(base, int(rng.integers(0, 2)))
    elif family == "boundary":
        k1, k2 = ks[:2]
        s.put(rng, fa, fb, k1, base, sa=2.0 - 2.0 ** -fa.mb, sb=2.0 - 2.0 ** -fb.mb)
        s.put(rng, fa, fb, k2, base - F + int(rng.integers(-2, 3)))
        if rng.random() < 0.5:
            s.c = cval(base - int(rng.integers(-1, 3)))
    elif family == "ties":
        # sum = X + half an ulp of the result (+ or - a tiny rest): RNE/RZ/RD/RU and F apart
        k1, k2, k3 = ks[:3]
        e = base
        s.put(rng, fa, fb, k1, e, sign=int(rng.integers(0, 2)), sa=1.0, sb=1.0 + (rng.integers(0, 2) / 2 ** fb.mb))
        sign = 0 if s.a[k1] > 0 else 1
        s.put(rng, fa, fb, k2, e - keep - 1, sign=sign, sa=1.0, sb=1.0)
        r = rng.random()
        if r < 0.6:
            s.put(rng, fa, fb, k3, e - keep - 1 - int(rng.integers(1, F - keep + 4)),
                  sign=int(rng.integers(0, 2)), sa=1.0, sb=1.0)
        if rng.random() < 0.3 and e - keep - 1 >= fc.sub_min:
            s.c = fc.value(rng, e - keep - 1, sign, 1.0)
    elif family == "c_role":
        # C alone, C with one small product, C = -0, C subnormal, tiny products
        r = rng.random()
        s.c = cval(int(rng.integers(fc.sub_min, fc.emin + 4))) if r < 0.3 else \
            (-0.0 if r < 0.45 else cval(base))
        for t in range(int(rng.integers(0, 3))):
            s.put(rng, fa, fb, ks[t], int(np.log2(abs(s.c)) if s.c else base) - int(rng.integers(0, F + 6)))
    elif family == "tiny":
        # a product X just above the exponent floor and a term of the other sign near the
        # alignment grid below it, C = 0 (or tiny): where the floor and a zero C act
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
    elif family == "floor_tie":
        # a product exactly half-way between two subnormal results, plus a term just below the
        # alignment grid of the exponent floor: it decides the rounding only when the floor
        # does not truncate it (the floor's own test, e.g. the fp16-result floor)
        fd = _Fmt(plan.d)
        q = fd.emin - keep                       # quantum of subnormal results
        odd = int(rng.integers(0, 16)) * 2 + 1
        n = odd.bit_length() - 1
        sign = int(rng.integers(0, 2))
        k1, k2 = ks[:2]
        s.put(rng, fa, fb, k1, q - 1 + n, sign=sign, sa=odd / 2.0 ** n, sb=1.0)
        top = max(q - 1 + n, plan.floor if plan.floor is not None else pe_min)
        ey = max(top - F + int(rng.integers(-3, 9)), pe_min - fa.mb - fb.mb)
        s.put(rng, fa, fb, k2, ey, sign=sign if rng.random() < 0.7 else 1 - sign, sa=1.0, sb=1.0)
    elif family == "subnormal":
        # subnormal input times a large one (its exponent counts as emin), next to a normal term
        k1, k2 = ks[:2]
        s.a[k1] = fa.value(rng, int(rng.integers(fa.sub_min, fa.emin)))
        s.b[k1] = abs(fb.value(rng, int(rng.integers(max(fb.emin, 0), fb.emax + 1)), 0))
        ep = int(np.floor(np.log2(abs(s.a[k1] * s.b[k1]))))
        s.put(rng, fa, fb, k2, ep - int(rng.integers(-2, F + 4)))
        if rng.random() < 0.3:
            s.c = cval(ep - int(rng.integers(0, F)))
    elif family == "sig_ge_2":
        # largest product with significand >= 2 (product exponent ea+eb vs its true exponent)
        k1, k2 = ks[:2]
        s.put(rng, fa, fb, k1, base, sa=1.5 + rng.integers(0, 2) / 4, sb=1.5 + rng.integers(0, 2) / 4)
        s.put(rng, fa, fb, k2, base - F + int(rng.integers(-1, 3)))
    elif family == "overflow":
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
    elif family == "specials":
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
    elif family == "zero_sign":
        r = rng.random()
        k1, k2 = ks[:2]
        s.put(rng, fa, fb, k1, base)
        s.a[k2], s.b[k2] = -s.a[k1], s.b[k1]
        s.c = -0.0 if r < 0.5 else 0.0
        if r > 0.7:     # negative sum below the smallest result: rounds to zero
            s.a[:] = 0.0
            e = int(rng.integers(pe_min - fa.mb - fb.mb, pe_min + 2))
            s.put(rng, fa, fb, k1, max(e, (plan.floor or -999) - F + 2), sign=1)
    elif family == "fp8_split":
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
    elif family == "carries":
        # many large products of one sign: the sum carries far above the largest exponent
        for t in range(K):
            s.put(rng, fa, fb, ks[t], base - int(rng.integers(0, 2)), sign=0,
                  sa=2.0 - 2.0 ** -fa.mb, sb=2.0 - 2.0 ** -fb.mb)
        s.put(rng, fa, fb, ks[0], base - F - int(rng.integers(0, 4)))
    else:
        raise ValueError(family)
    return s


def _nan_payload(fmt, rng):
    f = get_format(fmt)
    if f.specials == "fn":
        return int(rng.choice([0x7F, 0xFF]))
    choices = {"f16": [0x7C01, 0xFFFF, 0x7D00, 0xFE00], "bf16": [0x7F81, 0xFFC0, 0xFFFF],
               "e5m2": [0x7D, 0xFF, 0x7E], "f32": [0x7F800001, 0xFFFFFFFF, 0x7FA00000],
               "tf32": [0x7F800001, 0x7F802000, 0xFFC00000]}
    return int(rng.choice(choices.get(fmt, [0])))


FLOAT_FAMILIES = ("sparse", "cancel_tiny", "boundary", "ties", "c_role", "tiny", "floor_tie",
                  "subnormal", "sig_ge_2", "overflow", "specials", "zero_sign", "carries")


def _families(plan):
    fam = list(FLOAT_FAMILIES)
    if plan.a in FP8 and plan.shape[2] >= 32:
        fam.append("fp8_split")
    return fam


# ----------------------------------------------------------------------------- instances
def _fill_float(fmt, rng, shape, lo=-4, hi=4):
    return encode(fmt, _Fmt(fmt).values(rng, shape, lo, hi))


def _float_pool(plan, rng, size, fams=None):
    """`size` instances, each with min(M, N) designed dot products on its diagonal."""
    M, N, K = plan.shape
    S = min(M, N)
    fams = list(fams or _families(plan))
    fa, fb, fc = _Fmt(plan.a), _Fmt(plan.b), _Fmt(plan.c)
    A = fa.values(rng, (size, M, K), -4, 4)
    B = fb.values(rng, (size, K, N), -4, 4)
    C = fc.values(rng, (size, M, N), -4, 4)
    raw = []
    fam_of = []
    for i in range(size):
        fam = fams[i % len(fams)]
        for t in range(S):
            sl = _float_slot(plan, rng, fam)
            A[i, t] = sl.a
            B[i, :, t] = sl.b
            C[i, t, t] = sl.c
            raw += [("a", i, t, k, r) for k, r in sl.raw_a.items()]
            raw += [("b", i, k, t, r) for k, r in sl.raw_b.items()]
            if sl.raw_c is not None:
                raw.append(("c", i, t, t, sl.raw_c))
        fam_of.append(fam)
    A, B, C = encode(plan.a, A), encode(plan.b, B), encode(plan.c, C)
    for which, i, r_, c_, bits in raw:
        {"a": A, "b": B, "c": C}[which][i, r_, c_] = bits
    return A, B, C, fam_of


def _int_range(fmt):
    f = get_format(fmt)
    w = 32 if fmt == "s32" else f.bits
    return (-(1 << (w - 1)), (1 << (w - 1)) - 1) if f.kind == "int" else (0, (1 << w) - 1)


def _int_pool(plan, rng, size, fams=None):
    M, N, K = plan.shape
    la, ha = _int_range(plan.a)
    lb, hb = _int_range(plan.b)
    lo, hi = -(1 << 31), (1 << 31) - 1
    A = rng.integers(la, ha + 1, (size, M, K))
    B = rng.integers(lb, hb + 1, (size, K, N))
    C = rng.integers(lo, hi + 1, (size, M, N))
    fam = []
    for i in range(size):
        r = i % 5
        if r == 0:      # extremes everywhere, C at the edges: wrap / clamp
            A[i] = rng.choice([la, ha], (M, K))
            B[i] = rng.choice([lb, hb], (K, N))
            C[i] = rng.choice([lo, hi, lo + 1, hi - 1, 0], (M, N))
            fam.append("extremes")
        elif r == 1:    # C at the limit, positive products first then negative ones
            A[i] = ha
            B[i, : K // 2] = hb
            B[i, K // 2:] = lb if lb < 0 else 0
            if la < 0:
                A[i, :, K // 2:] = la
            C[i] = hi - rng.integers(0, 1 << 12, (M, N))
            fam.append("saturate_then_return")
        elif r == 2:
            A[i] = la if la < 0 else ha
            B[i] = hb
            C[i] = lo + rng.integers(0, 1 << 12, (M, N))
            fam.append("c_at_min")
        elif r == 3:
            A[i] = rng.integers(la, ha + 1, (M, K)) * (rng.random((M, K)) < 0.2)
            C[i] = rng.choice([hi, lo, 0, -1, 1], (M, N))
            fam.append("sparse_edges")
        else:
            fam.append("uniform")
    enc = lambda f, v: encode(f, v)  # noqa: E731
    return enc(plan.a, A), enc(plan.b, B), enc(plan.c, C), fam


def _f64_pool(plan, rng, size, fams=None):
    M, N, K = plan.shape
    A = rng.standard_normal((size, M, K))
    B = rng.standard_normal((size, K, N))
    C = rng.standard_normal((size, M, N))
    fam = []
    contest = []
    for i in range(size):
        r = i % 5
        if r == 4:          # NaNs meeting in one fma step: set below, in raw bits
            contest.append(i)
            fam.append("nan_contest")
            continue
        if r == 0:      # catastrophic cancellation: the order of the fmas shows
            A[i] = np.round(rng.standard_normal((M, K)) * 4) * 2.0 ** rng.integers(-30, 30, (M, K))
            B[i] = 1.0 + rng.integers(0, 1 << 20, (K, N)) * 2.0 ** -52
            C[i] = -A[i].sum(axis=1)[:, None] * (1 + 2.0 ** -40)
            fam.append("cancel")
        elif r == 1:
            A[i] = rng.standard_normal((M, K)) * 2.0 ** rng.integers(-1060, -1000, (M, K))
            B[i] = rng.standard_normal((K, N)) * 2.0 ** rng.integers(-20, 20, (K, N))
            C[i] = rng.standard_normal((M, N)) * 2.0 ** -1070
            fam.append("subnormal")
        elif r == 2:
            A[i, :, 0] = np.inf
            B[i, 0, :] = rng.choice([0.0, 1.0, -1.0], N)
            A[i, :, 1] = rng.choice([np.nan, 1.0, -np.inf], M)
            C[i] = rng.choice([np.inf, -np.inf, 0.0, -0.0], (M, N))
            fam.append("specials")
        else:
            A[i] = A[i] * 2.0 ** rng.integers(-60, 60, (M, K))
            fam.append("wide")
    ra, rb, rc = encode("f64", A), encode("f64", B), encode("f64", C)
    for i in contest:
        _nan_contest(rng, ra[i], rb[i], rc[i])
    return ra, rb, rc, fam


def _nan_bits(rng, kind, shape):
    """Raw f64 NaNs of a kind ("q" quiet, "s" signaling), random sign and payload."""
    payload = rng.integers(1, 1 << 51, shape, dtype=np.uint64)
    sign = rng.integers(0, 2, shape, dtype=np.uint64) << np.uint64(63)
    quiet = np.uint64(1 << 51) if kind == "q" else np.uint64(0)
    return sign | np.uint64(0x7FF << 52) | quiet | payload


def _nan_contest(rng, a, b, c):
    """One f64 instance in which NaNs of both kinds meet in one fma step: at step k0 each row
    of A, each column of B and each C (or, for some rows, the accumulator made NaN by an
    earlier step k1) is a normal number, a quiet NaN or a signaling NaN, with distinct payloads,
    so every output shows which operand's NaN went on."""
    M, K = a.shape
    k0 = int(rng.integers(0, K))
    kinds = np.array(["n", "q", "s"])
    for arr, idx in ((a, (slice(None), k0)), (b, (k0, slice(None))), (c, (slice(None), slice(None)))):
        view = arr[idx]
        pick = kinds[rng.integers(0, 3, view.shape)]
        for kind in "qs":
            where = pick == kind
            view[where] = _nan_bits(rng, kind, int(where.sum()))
    if k0 > 0:                   # some rows: the accumulator is already NaN when step k0 comes
        k1 = int(rng.integers(0, k0))
        rows = rng.random(M) < 0.5
        a[rows, k1] = _nan_bits(rng, "q", int(rows.sum()))


def _pool(plan, rng, size, fams=None):
    if plan.kind == "int":
        return _int_pool(plan, rng, size)
    if plan.kind == "f64":
        return _f64_pool(plan, rng, size)
    return _float_pool(plan, rng, size, fams)


def _separation(plan, variants, A, B, C):
    """bool (candidates, instances): the candidate's D differs from the profile's somewhere."""
    n = len(A)
    base = run(plan, A, B, C).reshape(n, -1)
    sep = np.zeros((len(variants), n), bool)
    for v, (_, prof) in enumerate(variants):
        sep[v] = (run(make_plan(plan.inst, prof), A, B, C).reshape(n, -1) != base).any(axis=1)
    return sep


def _select(plan, variants, size, want, rng):
    """The discriminating instances: an adaptive pool, then round robin over the candidates."""
    A, B, C, fam = _pool(plan, rng, size)
    sep = _separation(plan, variants, A, B, C)
    share = max(1, want // max(1, len(variants)))
    for _ in range(3):      # top up the candidates that few instances separate
        count = sep.sum(axis=1)
        under = [v for v in range(len(variants)) if 0 < count[v] < share]
        if not under or plan.kind != "float":
            break
        good = sorted({fam[i] for v in under for i in np.flatnonzero(sep[v])})
        A2, B2, C2, fam2 = _pool(plan, rng, max(32, size // 2), good)
        A, B, C = np.concatenate([A, A2]), np.concatenate([B, B2]), np.concatenate([C, C2])
        fam = fam + fam2
        sep = np.concatenate([sep, _separation(plan, variants, A2, B2, C2)], axis=1)
    order = rng.permutation(len(fam))
    taken = np.zeros(len(fam), bool)
    chosen = []
    cover = np.zeros(len(variants), int)
    progress = True
    while len(chosen) < want and progress:
        progress = False
        for v in range(len(variants)):
            if len(chosen) >= want or cover[v] >= share:
                continue
            for i in order:
                if not taken[i] and sep[v, i]:
                    taken[i] = True
                    chosen.append(i)
                    cover += sep[:, i]
                    progress = True
                    break
    if len(chosen) < want:      # then the instances that separate the most candidates
        rest = [i for i in order if not taken[i]]
        rest.sort(key=lambda i: -int(sep[:, i].sum()))
        chosen += rest[: want - len(chosen)]
    chosen = np.array(chosen, dtype=int)
    labels = [{"part": "discriminating", "family": fam[i],
               "separates": [variants[v][0] for v in np.flatnonzero(sep[:, i])]} for i in chosen]
    return A[chosen], B[chosen], C[chosen], labels


def _instruction(plan):
    return plan.inst


# ----------------------------------------------------------------------------- random part
def _random_float(plan, rng, dist, n):
    """n instances of one distribution: raw (n, M, K), (n, K, N), (n, M, N)."""
    M, N, K = plan.shape
    fa, fb, fc = _Fmt(plan.a), _Fmt(plan.b), _Fmt(plan.c)
    sa, sb, sc = (n, M, K), (n, K, N), (n, M, N)
    pe_lo, pe_hi = fa.sub_min + fb.sub_min, fa.emax + fb.emax
    if dist == "raw_bits":
        return tuple(rng.integers(0, 1 << get_format(f).bits, sh, dtype=np.uint64).astype(raw_dtype(f))
                     for f, sh in ((plan.a, sa), (plan.b, sb), (plan.c, sc)))
    if dist == "normal":
        a, b, c = fa.values(rng, sa, -4, 4), fb.values(rng, sb, -4, 4), fc.values(rng, sc, -4, 4)
    elif dist == "wide":
        a = fa.values(rng, sa, fa.sub_min, fa.emax)
        b = fb.values(rng, sb, fb.sub_min, fb.emax)
        c = fc.values(rng, sc, pe_lo - 10, pe_hi + 10)
    elif dist == "subnormal":
        a = fa.values(rng, sa, fa.sub_min, fa.emin + 1)
        b = fb.values(rng, sb, fb.sub_min, fb.emax)
        c = fc.values(rng, sc, fc.sub_min, fc.emin + 2) * (rng.random(sc) < 0.5)
    elif dist == "mixed_scale":
        spread = rng.integers(1, 4, (n, 1, 1))
        e0 = rng.integers(fa.emin, max(fa.emin + 1, fa.emax - 3 * K // 2), (n, 1, 1))
        ea = np.clip(e0 + spread * np.arange(K) - rng.integers(0, 2, sa), fa.sub_min, fa.emax)
        a = fa.sig(rng, sa) * np.exp2(ea) * rng.choice([-1, 1], sa)
        step = 2.0 ** fa.sub_min
        a = np.where(ea < fa.emin, np.sign(a) * np.maximum(np.floor(np.abs(a) / step), 1) * step, a)
        b, c = fb.values(rng, sb, -2, 2), fc.values(rng, sc, -2, 2)
    elif dist == "cancel":      # products in pairs that nearly cancel
        a, b = fa.values(rng, sa, -4, 4), fb.values(rng, sb, -4, 4)
        h = K // 2
        a[:, :, 1:2 * h:2] = a[:, :, 0:2 * h:2]
        b[:, 1:2 * h:2] = decode(plan.b, encode(plan.b, -b[:, 0:2 * h:2] * (1 + 2.0 ** -rng.integers(1, 12, (n, h, N)))))
        c = fc.values(rng, sc, -20, -6)
    elif dist == "c_dominant":
        a, b = fa.values(rng, sa, -3, 3), fb.values(rng, sb, -3, 3)
        e = min(int(plan.align_bits) + int(rng.integers(-4, 5)), fc.emax - 1)
        c = fc.values(rng, sc, e, e + 1)
    else:
        raise ValueError(dist)
    return encode(plan.a, a), encode(plan.b, b), encode(plan.c, c)


def _random_int(plan, rng, dist, n):
    M, N, K = plan.shape
    sa, sb, sc = (n, M, K), (n, K, N), (n, M, N)
    la, ha = _int_range(plan.a)
    lb, hb = _int_range(plan.b)
    lo, hi = -(1 << 31), (1 << 31) - 1
    if dist == "uniform":
        A, B, C = rng.integers(la, ha + 1, sa), rng.integers(lb, hb + 1, sb), rng.integers(lo, hi + 1, sc)
    elif dist == "extremes":
        A, B, C = rng.choice([la, ha], sa), rng.choice([lb, hb], sb), rng.choice([lo, hi, 0], sc)
    elif dist == "sparse":
        A = rng.integers(la, ha + 1, sa) * (rng.random(sa) < 0.25)
        B, C = rng.integers(lb, hb + 1, sb), rng.integers(-1000, 1000, sc)
    else:   # c_edge
        A, B = rng.integers(la, ha + 1, sa), rng.integers(lb, hb + 1, sb)
        C = np.where(rng.random(sc) < 0.5, hi, lo) - rng.integers(-(1 << 16), 1 << 16, sc)
        C = np.clip(C, lo, hi)
    return encode(plan.a, A), encode(plan.b, B), encode(plan.c, C)


def _random_f64(plan, rng, dist, n):
    M, N, K = plan.shape
    sa, sb, sc = (n, M, K), (n, K, N), (n, M, N)
    if dist == "raw_bits":
        return tuple(rng.integers(0, 1 << 63, sh, dtype=np.uint64)
                     | (rng.integers(0, 2, sh, dtype=np.uint64) << np.uint64(63)) for sh in (sa, sb, sc))
    A, B, C = rng.standard_normal(sa), rng.standard_normal(sb), rng.standard_normal(sc)
    if dist == "wide":
        A *= 2.0 ** rng.integers(-500, 500, sa)
        B *= 2.0 ** rng.integers(-500, 500, sb)
        C *= 2.0 ** rng.integers(-600, 600, sc)
    elif dist == "cancel":
        h = K // 2
        B[:, 1:2 * h:2] = -B[:, 0:2 * h:2] * (1 + 2.0 ** -rng.integers(20, 52, (n, h, N)))
        A[:, :, 1:2 * h:2] = A[:, :, 0:2 * h:2]
    elif dist == "subnormal":
        A *= 2.0 ** -1050
        C *= 2.0 ** -1070
    return encode("f64", A), encode("f64", B), encode("f64", C)


# ----------------------------------------------------------------------------- public
def _disc_count(n):
    return min(n, max(32, n // 5))


def _generate(instr, n, seed, arch):
    inst, prof = resolve(instr, arch)
    plan = make_plan(inst, prof)
    rng = np.random.Generator(np.random.PCG64(int(seed)))
    M, N, K = plan.shape
    want = _disc_count(int(n))
    pool_size = int(np.clip(400_000 // (M * N * max(1, K // 8)), 64, max(64, 4 * want)))
    variants = candidates(plan)
    A, B, C, labels = _select(plan, variants, pool_size, want, rng)
    dists = RANDOM_INT if plan.kind == "int" else RANDOM_F64 if plan.kind == "f64" else RANDOM_FLOAT
    maker = _random_int if plan.kind == "int" else _random_f64 if plan.kind == "f64" else _random_float
    n_rand = int(n) - len(labels)
    if n_rand > 0:
        which = np.arange(n_rand) % len(dists)
        ra = np.empty((n_rand,) + A.shape[1:], A.dtype)
        rb = np.empty((n_rand,) + B.shape[1:], B.dtype)
        rc = np.empty((n_rand,) + C.shape[1:], C.dtype)
        for d, dist in enumerate(dists):
            idx = np.flatnonzero(which == d)
            if len(idx):
                ra[idx], rb[idx], rc[idx] = maker(plan, rng, dist, len(idx))
        labels += [{"part": "random", "family": dists[w], "separates": []} for w in which]
        A, B, C = np.concatenate([A, ra]), np.concatenate([B, rb]), np.concatenate([C, rc])
    dt = (raw_dtype(plan.a), raw_dtype(plan.b), raw_dtype(plan.c))
    return (A[:n].astype(dt[0]), B[:n].astype(dt[1]), C[:n].astype(dt[2])), labels[:n], plan, variants


def generate(instr, n, seed, arch="sm_90", *, return_labels=False):
    """(a, b, c) raw bits of n cases for one instruction: the discriminating set first
    (about n/5, at least 32), then random cases cycling through the distributions."""
    (a, b, c), labels, _, _ = _generate(instr, n, seed, arch)
    return (a, b, c, labels) if return_labels else (a, b, c)


def labels(instr, n, seed, arch="sm_90"):
    """Per case: {"part", "family", "separates": [candidate labels]}."""
    return _generate(instr, n, seed, arch)[1]


def coverage(instr, n, seed, arch="sm_90"):
    """{candidate label: number of generated cases whose D differs from the profile's}."""
    (a, b, c), _, plan, variants = _generate(instr, n, seed, arch)
    base = run(plan, a, b, c)
    inst = _instruction(plan)
    out = {}
    for label, prof in variants:
        d = run(make_plan(inst, prof), a, b, c)
        out[label] = int((d != base).reshape(len(a), -1).any(axis=1).sum())
    return out


def main(argv=None):
    from ..cli import Parser
    ap = Parser(prog="python -m layoutsim.numerics.cases", description="coverage of the generated cases")
    ap.add_argument("instruction")
    ap.add_argument("--n", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--arch", default="sm_90")
    args = ap.parse_args(argv)
    inst, prof = resolve(args.instruction, args.arch)
    print(make_plan(inst, prof).describe())
    cov = coverage(args.instruction, args.n, args.seed, args.arch)
    print(f"{args.n} cases, seed {args.seed}: cases that separate each candidate from the profile")
    for label, count in cov.items():
        print(f"  {label:32s} {count:6d}" + ("   (cannot matter here)" if count == 0 else ""))
    return 0


if __name__ == "__main__":
    from ..cli import run_script
    raise SystemExit(run_script(main, "python -m layoutsim.numerics.cases"))
