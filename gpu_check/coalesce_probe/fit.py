"""Which candidate counting rules (layoutsim/memory/nvidia.py) reproduce the measured counts.

Nothing is fitted by hand: every candidate rule set predicts every measured pattern through
layoutsim.memory.coalesce_batch, and a rule set fits an op family when it reproduces every
measured value of that family exactly. Three exhaustive searches:

  fit                every rule set of nvidia.candidates(), per family and quantity
  tag_bank_hashes    every 2-bit XOR hash of the line address as the tag bank, under the rules
  bypass_schedules   every scheduler of SCHEDULES for the LDGSTS.BYPASS (cp.async.cg) wavefronts,
                     which no candidate rule reproduces (nvidia.NOT_MODELLED)

Each measured quantity is compared separately, so the summary says which knob settings each
quantity allows:

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
                   ("requests", "wavefronts", "replay", "line_pass", "passes")),
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


def predict(patterns, rules, tag_masks=None):
    """{quantity: [prediction]} with the branch-around rule for empty warps applied."""
    pred = corpus.predictions(patterns, rules, tag_masks=tag_masks)
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


def _lines(p):
    return [o // nvidia.LINE for lane, o in enumerate(p["offsets"]) if p["active"] >> lane & 1]


def tag_bank_hashes(patterns, chunks=None, bits=nvidia.TAG_BANK_BITS, rules=None):
    """Every 2-bit XOR hash of line-address bits 0..bits-1 under which `rules` (default the
    model's, nvidia.RULES) reproduce every measured wavefront count (all families but those whose
    wavefronts are nvidia.NOT_MODELLED; replayed atomics and atom.cas included). Exhaustive: the
    hash is chosen bit by bit (each line bit adds a column, one of the 4 values of a 2-bit bank),
    and a partial hash of bits 0..b is kept only if it reproduces every pattern whose lines are
    all below 2^(b+1) (their counts read no higher bit). Returns the hashes as sorted sets of the
    three nonzero masks of their row space (a hash and its relabelings of the banks are one)."""
    rules = rules or nvidia.RULES
    pats = [p for p in patterns if p.get("metrics")]
    levels = {}
    for p, c in zip(pats, controls_of(pats, chunks)):
        got, lines = measured(p, "wavefronts", c), _lines(p)
        if got is None or (parse_op(p["op"]).family, "wavefronts") in nvidia.NOT_MODELLED:
            continue
        level = max(max(lines, default=0).bit_length() - 1, 0)
        if level < bits:
            levels.setdefault(level, []).append((p, got))

    def fits(columns):
        masks = tuple(sum((c >> k & 1) << b for b, c in enumerate(columns)) for k in (0, 1))
        rows = levels.get(len(columns) - 1, [])
        pred = predict([p for p, _ in rows], rules, masks)["wavefronts"] if rows else []
        return all(v == want for v, (_, want) in zip(pred, rows))

    found, stack = set(), [[]]
    while stack:
        columns = stack.pop()
        if len(columns) == bits:
            m0, m1 = (sum((c >> k & 1) << b for b, c in enumerate(columns)) for k in (0, 1))
            found.add(tuple(sorted((m0, m1, m0 ^ m1))))
            continue
        stack += [columns + [c] for c in range(nvidia.TAG_BANKS) if fits(columns + [c])]
    return sorted(found)


# LDGSTS.BYPASS wavefronts: the schedulers searched (nvidia.NOT_MODELLED). The lanes are cut into
# groups of G consecutive lanes; a lookup is a (group, line) pair, taken in lane or address order;
# each wavefront takes lookups while they keep to its limits: at most one line per tag bank (or no
# such limit), at most one lookup per group (or any), at most N lines; a lookup of a line the
# wavefront holds already joins it; in order (the first lookup that does not fit closes the
# wavefront) or greedily (it waits for a later wavefront). G = 32 without limits but the banks is
# the cached loads' rule.
SCHEDULES = [dict(group=g, order=o, banks=b, one_per_group=q, max_lines=n, in_order=i)
             for g in (1, 2, 4, 8, 16, 32) for o in ("lane", "address") for b in (True, False)
             for q in (True, False) for n in (1, 2, 4, None) for i in (True, False)]


def schedule_wavefronts(offsets, active, group, order, banks, one_per_group, max_lines, in_order):
    """Wavefronts of one warp access under one of SCHEDULES."""
    looks = []
    for lane, o in enumerate(offsets):
        key = (lane // group, o // nvidia.LINE)
        if active >> lane & 1 and key not in looks:
            looks.append(key)
    if order == "address":
        looks.sort(key=lambda k: (k[1], k[0]))
    waves = 0
    while looks:
        waves += 1
        held, groups, rest, closed = {}, set(), [], False
        for g, line in looks:
            bank = int(nvidia.tag_bank(line)) if banks else 0
            ok = not closed and (line in held.values() and not (one_per_group and g in groups) or (
                not (banks and bank in held) and not (one_per_group and g in groups)
                and (max_lines is None or len(set(held.values())) < max_lines)))
            if ok:
                held.setdefault(bank if banks else len(held), line)
                groups.add(g)
            else:
                rest.append((g, line))
                closed = closed or in_order
        looks = rest
    return waves


def bypass_schedules(patterns, chunks=None, family="cp.async.cg"):
    """[(mismatching pattern ids, schedule)] for every schedule of SCHEDULES against the measured
    wavefronts of `family`, the closest first."""
    pats = [p for p in patterns if p.get("metrics") and parse_op(p["op"]).family == family]
    want = [measured(p, "wavefronts", c) for p, c in zip(pats, controls_of(pats, chunks))]
    out = []
    for s in SCHEDULES:
        bad = [p["id"] for p, w in zip(pats, want)
               if w is not None and schedule_wavefronts(p["offsets"], p["active"], **s) != w]
        out.append((bad, s))
    return sorted(out, key=lambda r: len(r[0]))


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
