"""The random part of a case set: instances drawn from several distributions per kind."""
import numpy as np

from ...formats import decode, encode, get_format, raw_dtype
from .pools import int_range
from .values import Fmt

RANDOM_FLOAT = ("normal", "wide", "cancel", "subnormal", "mixed_scale", "c_dominant", "raw_bits")
RANDOM_INT = ("uniform", "extremes", "sparse", "c_edge")
RANDOM_F64 = ("normal", "wide", "cancel", "subnormal", "raw_bits")


def _random_float(plan, rng, dist, n):
    """n instances of one distribution: raw (n, M, K), (n, K, N), (n, M, N)."""
    M, N, K = plan.shape
    fa, fb, fc = Fmt(plan.a), Fmt(plan.b), Fmt(plan.c)
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
    la, ha = int_range(plan.a)
    lb, hb = int_range(plan.b)
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


# plan kind -> (distribution names, the function drawing n instances of one)
BY_KIND = {"float": (RANDOM_FLOAT, _random_float), "int": (RANDOM_INT, _random_int),
           "f64": (RANDOM_F64, _random_f64)}


def draw(plan, rng, n):
    """n random instances cycling through the plan kind's distributions: raw A, B, C, labels."""
    dists, maker = BY_KIND[plan.kind]
    M, N, K = plan.shape
    which = np.arange(n) % len(dists)
    out = [np.empty((n,) + shape, raw_dtype(f)) for f, shape in
           ((plan.a, (M, K)), (plan.b, (K, N)), (plan.c, (M, N)))]
    for d, dist in enumerate(dists):
        idx = np.flatnonzero(which == d)
        if len(idx):
            for arr, part in zip(out, maker(plan, rng, dist, len(idx))):
                arr[idx] = part
    return (*out, [{"part": "random", "recipe": dists[w], "separates": []} for w in which])
