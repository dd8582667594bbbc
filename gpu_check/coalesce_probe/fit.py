"""Which candidate counting rules (layoutsim/memory/nvidia.py) reproduce the measured counts.

Nothing is fitted by hand: every candidate rule set predicts every measured pattern through
layoutsim.memory.coalesce_batch, and a rule set fits an op family when it reproduces every
measured value of that family exactly. Each measured quantity is compared separately, so the
summary says which knob settings each quantity allows:

  requests       l1tex__t_requests_pipe_lsu_mem_global_op_{ld,st,atom,red}.sum (cp.async: _op_ld)
  sectors        l1tex__t_sectors_pipe_lsu_mem_global_op_*.sum
  wavefronts     l1tex__t_output_wavefronts_pipe_lsu_mem_global_op_*.sum
  ideal_sectors  memory_l2_theoretical_sectors_global_ideal (or smsp__sass_sectors_mem_global_ideal)

Measured values are the pattern's counter minus the control launch of the same ncu process
(a kernel with no memory instruction). A pattern whose warp has no active lane and whose SASS
branches around the instruction (ptxas turns many `@p` instructions into a branch) executes
nothing: its requests are 0 whatever `empty_request` says.
"""
from layoutsim.memory import nvidia, parse_op

from . import corpus

QUANTITIES = {
    "requests": (("l1tex__t_requests_pipe_lsu_mem_global_op_{op}.sum",), ("requests", "empty_request")),
    "sectors": (("l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum",), ("requests", "sectors")),
    "wavefronts": (("l1tex__t_output_wavefronts_pipe_lsu_mem_global_op_{op}.sum",), ("requests", "wavefronts")),
    "ideal_sectors": (("memory_l2_theoretical_sectors_global_ideal", "smsp__sass_sectors_mem_global_ideal.sum",
                       "smsp__sass_sectors_mem_global_ideal"), ("ideal",)),
}


def measured(pattern, quantity, control=None):
    """The measured value of one quantity for one pattern (the control's counts subtracted), or None."""
    metrics = pattern.get("metrics") or {}
    control = control or {}
    op = parse_op(pattern["op"]).metric_op
    for name in QUANTITIES[quantity][0]:
        name = name.format(op=op)
        if metrics.get(name) is not None:
            return metrics[name] - (control.get(name) or 0)
    return None


def _project(rules, knobs):
    return tuple((k, getattr(rules, k)) for k in knobs)


def predict(patterns, rules):
    """{quantity: [prediction]} with the branch-around rule for empty warps applied."""
    pred = corpus.predictions(patterns, rules)
    for i, p in enumerate(patterns):
        if p["active"] == 0 and p.get("predicated") is False:
            pred["requests"][i] = 0
    return pred


def controls_of(patterns, chunks):
    """The control counts of each pattern's ncu process ({} when unknown)."""
    return [(chunks[p["chunk"]].get("control") or {}) if chunks and p.get("chunk") is not None else {}
            for p in patterns]


def fit(patterns, chunks=None, candidates=None):
    """Per op family: {quantity: {knob settings: [mismatching pattern ids]}} and the candidate
    rule sets that match every measured quantity of the family. `chunks` holds the control
    counts of each ncu process (pattern["chunk"] indexes it).

    Returns {family: {"patterns": n, "per_quantity": {...}, "matching": [Rules]}}."""
    candidates = candidates or nvidia.candidates()
    patterns = [p for p in patterns if p.get("metrics")]
    control = {p["id"]: c for p, c in zip(patterns, controls_of(patterns, chunks))}
    out = {}
    families = {}
    for p in patterns:
        families.setdefault(parse_op(p["op"]).family, []).append(p)
    for fam, pats in families.items():
        values = {q: [measured(p, q, control[p["id"]]) for p in pats] for q in QUANTITIES}
        have = [q for q in QUANTITIES if any(v is not None for v in values[q])]
        per_q = {q: {} for q in have}
        bad_by_rules = {}
        for r in candidates:
            pred = predict(pats, r)
            bad_all = []
            for q in have:
                key = _project(r, QUANTITIES[q][1])
                bad = [p["id"] for p, v, m in zip(pats, pred[q], values[q]) if m is not None and v != m]
                per_q[q].setdefault(key, bad)
                bad_all += bad
            bad_by_rules[r] = bad_all
        out[fam] = {"patterns": len(pats), "per_quantity": per_q,
                    "matching": [r for r, bad in bad_by_rules.items() if not bad]}
    return out


def brief(result):
    """One line per family: which quantities some candidate reproduces (for a short log)."""
    lines = []
    for fam, info in result.items():
        parts = []
        for q, table in info["per_quantity"].items():
            best = min(len(bad) for bad in table.values())
            parts.append(f"{q} {'fits' if best == 0 else f'NONE ({best}+ mismatches)'}")
        lines.append(f"{fam} ({info['patterns']}): " + ", ".join(parts)
                     + ("; a rule set fits all" if info["matching"] else "; no rule set fits all"))
    return lines


def _show(key):
    return " ".join(f"{k}={v}" for k, v in key)


def report(result):
    """Text lines: per family and quantity the fitting settings (or the closest), and what to adopt."""
    lines = []
    for fam, info in result.items():
        lines.append(f"{fam} ({info['patterns']} patterns measured):")
        for q, table in info["per_quantity"].items():
            fits = [k for k, bad in table.items() if not bad]
            if fits:
                lines.append(f"  {q:<14} fits: " + " | ".join(_show(k) for k in fits))
            else:
                k, bad = min(table.items(), key=lambda kv: len(kv[1]))
                lines.append(f"  {q:<14} NONE fits; closest {_show(k)}: {len(bad)} mismatches "
                             f"(#{', #'.join(map(str, bad[:10]))})")
        if info["matching"]:
            lines.append(f"  to adopt: RULES[{fam!r}] = {info['matching'][0].python()}"
                         + (f"  ({len(info['matching'])} candidates fit)" if len(info["matching"]) > 1 else ""))
        else:
            lines.append("  no candidate rule set fits every quantity: state a new rule from the raw "
                         "counters (tests/data/coalescing/coalesce_corpus.json) and add it as a candidate")
    return lines
