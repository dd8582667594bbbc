"""What a run that completes an earlier coalescing corpus measures, and with which metric set.

    python -m gpu_check.coalesce_probe.measure --out DIR --complete tests/data/coalescing/coalesce_corpus.json

The earlier corpus (one run, or runs merged by merge.py) says which patterns have counts. The
plan, in this order (each group round-robin over the ops, so a cut-short group covers every op):

  ideal   CORE + the SASS-patched ideal sectors, for every pattern not measured yet that can tell
          the ideal-sector candidates apart (nvidia.IDEAL: the candidates predict different
          numbers, i.e. repeated addresses) or runs a partial warp (some lanes masked off), and
          for the whole `ideal` family
  bypass  CORE + what ncu offers about LDGSTS, the shared-memory writes it makes and the
          miss/fill stages (measure.BYPASS_DISCOVER) + the ideal sectors, for every cp.async.cg
          pattern, measured before or not (no candidate explains its wavefronts:
          nvidia.NOT_MODELLED), and the cp.async.ca.16 strides beside them for comparison
  core    CORE, for every other pattern not measured yet
  ideal   CORE + ideal sectors again, for patterns measured before with CORE only that tell
          the ideal candidates apart or run a partial warp: last, so the time budget cuts these
          first (merge.py keeps the later measurement of a pattern measured twice)

A pattern measured before with more than CORE (the first run's FULL patterns) is not measured
again: merge.py keeps one measurement per pattern, and theirs is the richer one.
"""
import math
from dataclasses import replace

from gpu_check.bank_probe.common import measurement_order
from layoutsim.memory import nvidia, parse_op

from . import corpus, fit

CORE_ONLY = 12            # metrics of the CORE set: a measurement with more has the ideal metric or FULL's


def _ideal_names():
    return set(fit.QUANTITIES["ideal_sectors"][0])


def check_earlier(patterns, earlier):
    """One line naming the first pattern of `earlier` (a corpus dict) that is not the generator's
    pattern of that id, or None."""
    for p in earlier.get("patterns", []):
        i = p.get("id")
        if not isinstance(i, int) or not 0 <= i < len(patterns):
            return f"pattern id {i!r} is not in the corpus generator's 0..{len(patterns) - 1}"
        g = patterns[i]
        if any(p.get(k) != g[k] for k in ("op", "offsets", "active")):
            return (f"pattern {i} ({p.get('op')}) differs from corpus.py's ({g['op']}): the corpus comes from "
                    f"another corpus.py version")
    return None


def ideal_deciding(patterns):
    """Ids of the patterns whose ideal sectors the candidates (nvidia.IDEAL) predict differently,
    or whose warp is partial (neither every lane nor none active)."""
    preds = [corpus.predictions(patterns, replace(nvidia.DEFAULT, ideal=v))["ideal_sectors"] for v in nvidia.IDEAL]
    out = set()
    for i, p in enumerate(patterns):
        if len({pr[i] for pr in preds}) > 1 or p["active"] not in (0, corpus.FULL):
            out.add(p["id"])
    return out


def complete(patterns, earlier):
    """[(pattern, set name)] to measure, in order, so that `earlier` plus this run hold every
    pattern of `patterns` (the generator's) and the ideal and LDGSTS counters above."""
    done = {p["id"]: p for p in earlier.get("patterns", []) if p.get("metrics")}
    rich = {i for i, p in done.items() if len(p["metrics"]) > CORE_ONLY}
    with_ideal = {i for i, p in done.items() if _ideal_names() & set(p["metrics"])}
    deciding = ideal_deciding(patterns)
    fam = {p["id"]: parse_op(p["op"]).family for p in patterns}
    bypass = [p for p in patterns if p["id"] not in rich and (
        fam[p["id"]] == "cp.async.cg"
        or (p["op"] == "cp.async.ca.shared.global.16" and p["family"] == "stride"))]
    taken = {p["id"] for p in bypass}
    first = [p for p in patterns if p["id"] not in done and p["id"] not in taken
             and (p["family"] == "ideal" or p["id"] in deciding)]
    taken |= {p["id"] for p in first}
    core = [p for p in patterns if p["id"] not in done and p["id"] not in taken]
    again = [p for p in patterns if p["id"] in done and p["id"] not in taken and p["id"] not in rich
             and p["id"] not in with_ideal and p["id"] in deciding]
    return ([(p, "ideal") for p in measurement_order(first)] + [(p, "bypass") for p in measurement_order(bypass)]
            + [(p, "core") for p in measurement_order(core)] + [(p, "ideal") for p in measurement_order(again)])


def groups(plan):
    """[(set name, number of patterns)] of consecutive plan entries with one set."""
    out = []
    for _, name in plan:
        if out and out[-1][0] == name:
            out[-1][1] += 1
        else:
            out.append([name, 1])
    return [tuple(g) for g in out]


def estimate(plan, budget, chunk):
    """Seconds under ncu the plan takes at `budget`'s costs (a measure.Budget): per group,
    ceil(n / chunk) ncu processes, each a start-up plus its launches (the control among them)."""
    total = 0.0
    for name, n in groups(plan):
        procs = math.ceil(n / chunk)
        total += procs * budget.startup() + (n + procs) * budget.per_launch(name)
    return total


def describe(plan, budget, chunk, max_seconds):
    """The log line of a plan: its groups, and the estimate against the budget."""
    parts = ", ".join(f"{n} {name}" for name, n in groups(plan))
    est = estimate(plan, budget, chunk)
    return (f"plan: {len(plan)} patterns ({parts}); about {est:.0f} s under ncu at the costs known "
            f"(a set never run is priced as FULL, an upper bound), budget {max_seconds:.0f} s")
