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
import itertools

from gpu_check.bank_probe.common import verdict
from layoutsim.memory import nvidia, parse_op

from . import corpus

QUANTITIES = {
    "requests": (("l1tex__t_requests_pipe_lsu_mem_global_op_{op}.sum",), ("requests", "empty_request")),
    "sectors": (("l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum",), ("requests", "sectors", "replay")),
    "wavefronts": (("l1tex__t_output_wavefronts_pipe_lsu_mem_global_op_{op}.sum",),
                   ("requests", "wavefronts", "replay", "line_pass")),
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


def _settings(knobs):
    """Every combination of the candidate values of `knobs` (the other fields at their defaults)."""
    from dataclasses import replace
    values = [sorted({getattr(r, k) for r in nvidia.candidates()}, key=str) for k in knobs]
    return [replace(nvidia.DEFAULT, **dict(zip(knobs, combo))) for combo in itertools.product(*values)]


def fit(patterns, chunks=None, candidates=None):
    """Per op family: {quantity: {knob settings: [mismatching pattern ids]}} and the candidate
    rule sets that match every measured quantity of the family. `chunks` holds the control
    counts of each ncu process (pattern["chunk"] indexes it). Each quantity is predicted once per
    setting of the knobs it depends on (QUANTITIES), so the search stays small.

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
        per_q = {}
        for q in have:
            knobs = QUANTITIES[q][1]
            per_q[q] = {}
            for r in _settings(knobs):
                pred = predict(pats, r)[q]
                per_q[q][_project(r, knobs)] = [p["id"] for p, v, m in zip(pats, pred, values[q])
                                                if m is not None and v != m]
        matching = [r for r in candidates
                    if all(not per_q[q].get(_project(r, QUANTITIES[q][1]), [None]) for q in have)]
        out[fam] = {"patterns": len(pats), "per_quantity": per_q, "matching": matching}
    return out


def tag_bank_hashes(patterns, chunks=None, bits=10):
    """Every 2-bit XOR hash of line-address bits 0..bits-1 under which `wavefronts = lines in the
    fullest of 4 tag banks` reproduces the measured wavefronts of every single-round pattern
    (loads, stores, cp.async.ca, atomics without repeated addresses; not atom.cas, not
    LDGSTS.BYPASS): an exhaustive search, as sets of the three nonzero masks of the hash's
    row space (a hash and its relabelings of the banks are one answer)."""
    import numpy as np
    patterns = [p for p in patterns if p.get("metrics")]
    rows = []
    for p, c in zip(patterns, controls_of(patterns, chunks)):
        spec = parse_op(p["op"])
        got = measured(p, "wavefronts", c)
        offs = [o for lane, o in enumerate(p["offsets"]) if p["active"] >> lane & 1]
        if got is None or not offs or spec.operands > 1 or spec.family == "cp.async.cg" \
                or (spec.kind in ("atom", "red") and len(set(offs)) < len(offs)):
            continue
        rows.append((sorted({o // nvidia.LINE for o in offs}), got))
    rows.sort(key=lambda r: -len(r[0]))               # the most lines prune the most
    masks = np.arange(1, 1 << bits)
    line_bits = max(max(max(ls) for ls, _ in rows).bit_length(), 1)
    lines = np.arange(1 << max(bits, line_bits))
    parity = nvidia.parity(lines[:, None] & masks[None, :]).astype(np.int8)
    found = set()
    for i, m0 in enumerate(masks):
        alive = np.flatnonzero(masks > m0)
        for ls, want in rows:
            bank = parity[ls, i][:, None] * 2 + parity[ls][:, alive]
            fullest = np.stack([(bank == b).sum(axis=0) for b in range(4)]).max(axis=0)
            alive = alive[fullest == want]
            if not alive.size:
                break
        for j in alive:
            found.add(tuple(sorted((int(m0), int(masks[j]), int(m0 ^ masks[j])))))
    return sorted(found)


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


def report(result):
    """Text lines: per family and quantity the fitting settings (or the closest), and what to adopt."""
    lines = []
    for fam, info in result.items():
        lines.append(f"{fam} ({info['patterns']} patterns measured):")
        for q, table in info["per_quantity"].items():
            lines.append(f"  {q:<14} " + verdict(
                table, "fits: {}", "NONE fits; closest {key}: {n} mismatches (#{ids})", 10))
        if info["matching"]:
            lines.append(f"  to adopt: RULES[{fam!r}] = {info['matching'][0].python()}"
                         + (f"  ({len(info['matching'])} candidates fit)" if len(info["matching"]) > 1 else ""))
        else:
            lines.append("  no candidate rule set fits every quantity: state a new rule from the raw "
                         "counters (tests/data/coalescing/coalesce_corpus.json) and add it as a candidate")
    return lines
