"""The discriminating part of a case set: the instances that separate each candidate
behaviour from the profile, chosen round robin until every separable candidate has its share."""
import numpy as np

from ..api import run
from ..plan import make_plan
from .pools import pool


def separation(plan, variants, A, B, C):
    """bool (candidates, instances): the candidate's D differs from the profile's somewhere."""
    n = len(A)
    base = run(plan, A, B, C).reshape(n, -1)
    sep = np.zeros((len(variants), n), bool)
    for v, (_, prof) in enumerate(variants):
        sep[v] = (run(make_plan(plan.inst, prof), A, B, C).reshape(n, -1) != base).any(axis=1)
    return sep


def select(plan, variants, size, want, rng):
    """The discriminating instances: an adaptive pool, then round robin over the candidates."""
    A, B, C, recipe_of = pool(plan, rng, size)
    sep = separation(plan, variants, A, B, C)
    share = max(1, want // max(1, len(variants)))
    for _ in range(3):      # top up the candidates that few instances separate
        count = sep.sum(axis=1)
        under = [v for v in range(len(variants)) if 0 < count[v] < share]
        if not under or plan.kind != "float":
            break
        good = sorted({recipe_of[i] for v in under for i in np.flatnonzero(sep[v])})
        A2, B2, C2, recipe2 = pool(plan, rng, max(32, size // 2), good)
        A, B, C = np.concatenate([A, A2]), np.concatenate([B, B2]), np.concatenate([C, C2])
        recipe_of = recipe_of + recipe2
        sep = np.concatenate([sep, separation(plan, variants, A2, B2, C2)], axis=1)
    order = rng.permutation(len(recipe_of))
    taken = np.zeros(len(recipe_of), bool)
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
    labels = [{"part": "discriminating", "recipe": recipe_of[i],
               "separates": [variants[v][0] for v in np.flatnonzero(sep[:, i])]} for i in chosen]
    return A[chosen], B[chosen], C[chosen], labels
