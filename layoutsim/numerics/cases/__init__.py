"""Test cases for the GPU run: a discriminating set, then random cases from several distributions.

    a, b, c = generate("mma.m16n8k16.f32.f16.f16.f32", n=3000, seed=1)

returns raw-bit arrays a (n, M, K), b (n, K, N), c (n, M, N) (uint16 f16/bf16, uint32
tf32/f32/s32, uint8 fp8/s8/u8, uint8 low nibble s4/u4, uint64 f64), deterministic for
(instruction, n, seed, arch): numpy PCG64 seeded with `seed`, no other source of randomness.

The discriminating part is chosen, not just drawn: a pool of structured dot products
(`recipes`: cancellations around the alignment boundary, ties of the final rounding, tiny
products with C = 0, subnormal inputs, overflow, NaN/Inf, ...; `pools`) is run through the
arch's profile and through every candidate behaviour (`candidates`: one profile parameter
changed at a time), and the instances that separate each candidate from the profile are kept,
round robin, until every separable candidate has its share (`select`). Each instance carries
min(M, N) designed dot products on its diagonal (A row t, B column t, C[t, t]); the other
outputs are free extras. The random part cycles through `distributions`. `labels(...)` says
which recipe (or distribution) each case came from and which candidates it separates;
`coverage(...)` counts, per candidate, the cases that separate it.

    python -m layoutsim.numerics.cases INSTRUCTION [--n 3000] [--seed 1] [--arch sm_90]
"""
import numpy as np

from ..api import resolve, run
from ..plan import make_plan
from .candidates import candidates
from .distributions import RANDOM_F64, RANDOM_FLOAT, RANDOM_INT, draw
from .select import select

__all__ = ["generate", "labels", "coverage", "candidates", "RANDOM_FLOAT", "RANDOM_INT", "RANDOM_F64"]


def _discriminating_count(n):
    return min(n, max(32, n // 5))


def _generate(instr, n, seed, arch):
    inst, prof = resolve(instr, arch)
    plan = make_plan(inst, prof)
    rng = np.random.Generator(np.random.PCG64(int(seed)))
    M, N, K = plan.shape
    want = _discriminating_count(int(n))
    pool_size = int(np.clip(400_000 // (M * N * max(1, K // 8)), 64, max(64, 4 * want)))
    variants = candidates(plan)
    A, B, C, labels = select(plan, variants, pool_size, want, rng)
    n_rand = int(n) - len(labels)
    if n_rand > 0:
        ra, rb, rc, rand_labels = draw(plan, rng, n_rand)
        labels += rand_labels
        A, B, C = np.concatenate([A, ra]), np.concatenate([B, rb]), np.concatenate([C, rc])
    return (A[:n], B[:n], C[:n]), labels[:n], plan, variants


def generate(instr, n, seed, arch="sm_90", *, return_labels=False):
    """(a, b, c) raw bits of n cases for one instruction: the discriminating set first
    (about n/5, at least 32), then random cases cycling through the distributions."""
    (a, b, c), labels, _, _ = _generate(instr, n, seed, arch)
    return (a, b, c, labels) if return_labels else (a, b, c)


def labels(instr, n, seed, arch="sm_90"):
    """Per case: {"part", "recipe", "separates": [candidate labels]} ("recipe": the recipe or
    the distribution it was drawn from)."""
    return _generate(instr, n, seed, arch)[1]


def coverage(instr, n, seed, arch="sm_90"):
    """{candidate label: number of generated cases whose D differs from the profile's}."""
    (a, b, c), _, plan, variants = _generate(instr, n, seed, arch)
    base = run(plan, a, b, c)
    out = {}
    for label, prof in variants:
        d = run(make_plan(plan.inst, prof), a, b, c)
        out[label] = int((d != base).reshape(len(a), -1).any(axis=1).sum())
    return out
