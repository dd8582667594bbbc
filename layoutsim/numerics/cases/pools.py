"""The pools the discriminating cases are chosen from: float instances built from recipes,
integer instances at the edges (wrap, clamp), f64 instances (cancellation, subnormals, specials,
NaNs meeting in one fma step)."""
import numpy as np

from ...formats import encode, get_format
from .recipes import recipes, slot
from .values import Fmt


def _float_pool(plan, rng, size, only=None):
    """`size` instances, each with min(M, N) designed dot products on its diagonal, the recipes
    (all that can matter, or `only`) taking turns."""
    M, N, K = plan.shape
    S = min(M, N)
    names = list(only or recipes(plan))
    fa, fb, fc = Fmt(plan.a), Fmt(plan.b), Fmt(plan.c)
    A = fa.values(rng, (size, M, K), -4, 4)
    B = fb.values(rng, (size, K, N), -4, 4)
    C = fc.values(rng, (size, M, N), -4, 4)
    raw = []
    recipe_of = []
    for i in range(size):
        recipe = names[i % len(names)]
        for t in range(S):
            sl = slot(plan, rng, recipe)
            A[i, t] = sl.a
            B[i, :, t] = sl.b
            C[i, t, t] = sl.c
            raw += [("a", i, t, k, r) for k, r in sl.raw_a.items()]
            raw += [("b", i, k, t, r) for k, r in sl.raw_b.items()]
            if sl.raw_c is not None:
                raw.append(("c", i, t, t, sl.raw_c))
        recipe_of.append(recipe)
    A, B, C = encode(plan.a, A), encode(plan.b, B), encode(plan.c, C)
    for which, i, r_, c_, bits in raw:
        {"a": A, "b": B, "c": C}[which][i, r_, c_] = bits
    return A, B, C, recipe_of


def int_range(fmt):
    f = get_format(fmt)
    w = 32 if fmt == "s32" else f.bits
    return (-(1 << (w - 1)), (1 << (w - 1)) - 1) if f.kind == "int" else (0, (1 << w) - 1)


def _int_pool(plan, rng, size):
    M, N, K = plan.shape
    la, ha = int_range(plan.a)
    lb, hb = int_range(plan.b)
    lo, hi = -(1 << 31), (1 << 31) - 1
    A = rng.integers(la, ha + 1, (size, M, K))
    B = rng.integers(lb, hb + 1, (size, K, N))
    C = rng.integers(lo, hi + 1, (size, M, N))
    recipe_of = []
    for i in range(size):
        r = i % 5
        if r == 0:      # extremes everywhere, C at the edges: wrap / clamp
            A[i] = rng.choice([la, ha], (M, K))
            B[i] = rng.choice([lb, hb], (K, N))
            C[i] = rng.choice([lo, hi, lo + 1, hi - 1, 0], (M, N))
            recipe_of.append("extremes")
        elif r == 1:    # C at the limit, positive products first then negative ones
            A[i] = ha
            B[i, : K // 2] = hb
            B[i, K // 2:] = lb if lb < 0 else 0
            if la < 0:
                A[i, :, K // 2:] = la
            C[i] = hi - rng.integers(0, 1 << 12, (M, N))
            recipe_of.append("saturate_then_return")
        elif r == 2:
            A[i] = la if la < 0 else ha
            B[i] = hb
            C[i] = lo + rng.integers(0, 1 << 12, (M, N))
            recipe_of.append("c_at_min")
        elif r == 3:
            A[i] = rng.integers(la, ha + 1, (M, K)) * (rng.random((M, K)) < 0.2)
            C[i] = rng.choice([hi, lo, 0, -1, 1], (M, N))
            recipe_of.append("sparse_edges")
        else:
            recipe_of.append("uniform")
    enc = lambda f, v: encode(f, v)  # noqa: E731
    return enc(plan.a, A), enc(plan.b, B), enc(plan.c, C), recipe_of


def _f64_pool(plan, rng, size):
    M, N, K = plan.shape
    A = rng.standard_normal((size, M, K))
    B = rng.standard_normal((size, K, N))
    C = rng.standard_normal((size, M, N))
    recipe_of = []
    contest = []
    for i in range(size):
        r = i % 5
        if r == 4:          # NaNs meeting in one fma step: set below, in raw bits
            contest.append(i)
            recipe_of.append("nan_contest")
            continue
        if r == 0:      # catastrophic cancellation: the order of the fmas shows
            A[i] = np.round(rng.standard_normal((M, K)) * 4) * 2.0 ** rng.integers(-30, 30, (M, K))
            B[i] = 1.0 + rng.integers(0, 1 << 20, (K, N)) * 2.0 ** -52
            C[i] = -A[i].sum(axis=1)[:, None] * (1 + 2.0 ** -40)
            recipe_of.append("cancel")
        elif r == 1:
            A[i] = rng.standard_normal((M, K)) * 2.0 ** rng.integers(-1060, -1000, (M, K))
            B[i] = rng.standard_normal((K, N)) * 2.0 ** rng.integers(-20, 20, (K, N))
            C[i] = rng.standard_normal((M, N)) * 2.0 ** -1070
            recipe_of.append("subnormal")
        elif r == 2:
            A[i, :, 0] = np.inf
            B[i, 0, :] = rng.choice([0.0, 1.0, -1.0], N)
            A[i, :, 1] = rng.choice([np.nan, 1.0, -np.inf], M)
            C[i] = rng.choice([np.inf, -np.inf, 0.0, -0.0], (M, N))
            recipe_of.append("specials")
        else:
            A[i] = A[i] * 2.0 ** rng.integers(-60, 60, (M, K))
            recipe_of.append("wide")
    ra, rb, rc = encode("f64", A), encode("f64", B), encode("f64", C)
    for i in contest:
        _nan_contest(rng, ra[i], rb[i], rc[i])
    return ra, rb, rc, recipe_of


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


def pool(plan, rng, size, only=None):
    """(A, B, C raw bits, the recipe of each instance) of `size` instances of a plan's kind
    (`only`: float recipes to draw from)."""
    if plan.kind == "int":
        return _int_pool(plan, rng, size)
    if plan.kind == "f64":
        return _f64_pool(plan, rng, size)
    return _float_pool(plan, rng, size, only)
