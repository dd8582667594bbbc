"""Measure the coalescing corpus with Nsight Compute and fit the counting rules to it.

    export PATH=/usr/local/cuda/bin:$PATH
    python -m gpu_check.coalesce_probe.measure --out DIR            # on the GPU machine
    python -m gpu_check.coalesce_probe.measure --out DIR --dry-run  # no GPU: the model plays the GPU
    python -m gpu_check.coalesce_probe.measure --out DIR --complete tests/data/coalescing/coalesce_corpus.json \
        --max-seconds 240                                          # what that corpus lacks (plan.py)

Steps: generate the corpus (corpus.py) -> compile probe.cu (nvcc -O3 -arch=sm_90) -> SASS of
every probe kernel (cuobjdump: exactly one global instruction of the op's kind, plus the sink
store of load kernels; whether ptxas predicated the instruction or branched around it) -> one
plain run of every pattern (fails fast on a bad launch) -> the metrics ncu offers for this GPU
(`ncu --query-metrics`) -> ncu in chunks of launches, each chunk an ncu process whose first
launch is the control kernel (no memory instruction):
    ncu --csv --print-units base --clock-control none --cache-control all
        --kernel-name regex:^coalesce_probe_ --metrics ...
Three metric sets: CORE (requests, sectors, wavefronts of every global op: l1tex__t_*) for every
pattern, FULL (CORE plus every L1TEX/L2/instruction/source metric about global accesses that
this ncu knows, and the SASS-patched ideal sectors) for as many patterns as the time budget
allows, decided from the measured cost per launch of each set (calibration chunks first), and
IDEAL (CORE plus the SASS-patched ideal sectors) for the patterns of the "ideal" family.
`--ids FILE` measures only the listed pattern ids, in that order, with CORE (and IDEAL for the
"ideal" family) and no FULL calibration. `--complete CORPUS` measures what CORPUS lacks
(plan.py): IDEAL for the patterns that settle the ideal-sector rule, BYPASS (CORE, every
counter ncu offers about LDGSTS, shared-memory writes and the miss/fill stages, and the ideal
sectors) for cp.async.cg, CORE for the rest; it logs the plan and its time estimate first. Both
price their chunks from the first H200 run's costs (FIRST_RUN_COSTS), not calibration chunks.
Metrics ncu refuses are dropped and the chunk is retried. Patterns are measured round-robin
over the ops, so a cut-short run still covers every op.
Writes DIR/coalesce_corpus.json (every pattern with its raw counters, the chunks and their
control counts, the SASS, the environment, the fit), DIR/summary.txt, DIR/ncu.csv (raw),
DIR/sass.txt, DIR/metrics.txt (the metric names ncu offered), and prints the summary last.
Exit status: 0 when the corpus was measured and written, 2 when the measurement failed.
"""
import json
import math
import os
import re
import shutil
import sys
import tempfile
import time
from collections import Counter

from gpu_check import needs
from gpu_check.bank_probe import common, ncu_csv
from gpu_check.bank_probe.common import environment, log, measurement_order, run_cmd
from layoutsim import sass as SASS

from . import corpus, fit, plan

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "probe.cu")
OPS = ("ld", "st", "atom", "red")         # cp.async counts under _op_ld (there is no _op_ldgsts counter)
CORE = tuple(f"l1tex__t_{q}_pipe_lsu_mem_global_op_{op}.sum"
             for op in OPS for q in ("requests", "sectors", "output_wavefronts"))
SASS_PATCHED = ("memory_l2_theoretical_sectors_global", "memory_l2_theoretical_sectors_global_ideal",
                "smsp__sass_sectors_mem_global_ideal.sum", "smsp__sass_sectors_mem_global.sum")
# Base names (from `ncu --query-metrics`) worth recording for global accesses (asked as NAME.sum).
DISCOVER = (r"^l1tex__t_[a-z_]*pipe_lsu_mem_global_op_(ld|st|atom|red|ldgsts)[a-z_]*$",
            r"^l1tex__t_(requests|sectors)(_pipe_lsu(_mem_global)?)?$",
            r"^l1tex__data_pipe_lsu_wavefronts(_mem_(lg|lgds|shared)[a-z_]*)?$",
            r"^l1tex__data_bank_conflicts_pipe_lsu(_mem_(gds|global)[a-z_]*)?$",
            r"^l1tex__m_(xbar2l1tex_read_sectors|l1tex2xbar_write_sectors|l1tex2xbar_req)[a-z_]*$",
            r"^lts__t_(requests|sectors)_srcunit_tex(_op_(read|write|atom|red))?$",
            r"^smsp__inst_executed_op_(global|ldgsts)[a-z_]*$",
            r"^smsp__sass_(inst_executed_op_(global|ldgsts)|sectors_mem_global)[a-z_]*$",
            r"^sm__sass_inst_executed_op_ldgsts[a-z_]*$")
# Counters (base names) that may explain LDGSTS.BYPASS wavefronts, most specific first: every
# L1TEX counter of LDGSTS, its instruction counts, the shared-memory writes it makes, the data
# banks, the miss and fill stages, LSU-in requests, L2 sectors from L1TEX (the BYPASS set).
BYPASS_DISCOVER = (r"^l1tex__[a-z0-9_]*ldgsts[a-z0-9_]*$",
                   r"^(smsp|sm)__(sass_)?inst_executed_op_ldgsts[a-z_]*$",
                   r"^l1tex__data_pipe_lsu_wavefronts(_mem_(lgds|shared)[a-z_]*)?$",
                   r"^l1tex__data_bank_(conflicts|reads|writes)[a-z_]*$",
                   r"^l1tex__(f|m)_[a-z0-9_]*(wavefronts|sectors|requests)[a-z0-9_]*$",
                   r"^l1tex__lsuin_requests[a-z_]*$",
                   r"^lts__t_(requests|sectors)_srcunit_tex[a-z_]*$")
# (launches, seconds) of ncu processes in the first H200 run (2026-12-01, the chunks of
# tests/data/coalescing/coalesce_corpus.json): --ids and --complete runs start their chunk sizing
# from them instead of spending time on calibration chunks (a set never run costs as FULL).
FIRST_RUN_COSTS = {"core": [(21, 5.13), (151, 25.08)], "full": [(5, 4.32), (21, 10.78)]}
MAX_FULL = 96                     # metrics in the FULL set at most
MARGIN = 6.0                      # seconds kept free at the end of the ncu budget


# ---- build and SASS --------------------------------------------------------------------------
def compile_probe(nvcc, work, arch):
    return common.compile_probe(nvcc, SOURCE, os.path.join(work, "coalesce_probe"), arch)


def sass_global_ops(text):
    """{function: [(opcode, predicated)]} of global-memory instructions in `cuobjdump -sass` text."""
    funcs = {}
    for f, codes in common.sass_functions(text).items():
        funcs[f] = []
        for code in codes:
            m = SASS.GLOBAL.search(code)
            if m and not code.startswith(SASS.GLOBAL_BARRIER):      # cp.async's barrier moves no data
                funcs[f].append((m.group(1) + m.group(2), code.startswith("@P")))
    return funcs


def sass_check(op, ops):
    """(ok, predicated): one instruction of the op's SASS family, plus only the sink store."""
    from layoutsim.memory import parse_op
    spec = parse_op(op)
    mine = [(o, pr) for o, pr in ops if o.split(".")[0] == spec.sass]
    if spec.kind == "st":
        return len(ops) == 1 and len(mine) == 1, mine[0][1] if mine else None
    sinks = [o for o, _ in ops if o.split(".")[0] == "STG"]
    return len(mine) == 1 and len(sinks) + 1 == len(ops), mine[0][1] if mine else None


# ---- metrics ---------------------------------------------------------------------------------
def query_metrics(ncu, work):
    """Metric names (with `.sum`) ncu offers on this GPU, from --query-metrics-mode suffix (only
    names it prints can be asked for); base names plus `.sum` when that mode prints none;
    empty when the query fails (then ncu's refusals prune the sets)."""
    found = set()
    for mode, seconds in (("suffix", 30), ("base", 20)):
        rc, out, err = run_cmd([ncu, "--query-metrics", "--query-metrics-mode", mode], timeout=seconds)
        with open(os.path.join(work, f"query_metrics_{mode}.txt"), "w") as f:
            f.write(out + err)
        if rc != 0:
            continue
        if mode == "suffix":
            found = set(re.findall(r"\b([a-z0-9]+__[a-z0-9_]+\.sum)\b", out))
        else:
            found = {m.group(1) + ".sum" for m in re.finditer(r"^([a-z0-9]+__[a-z0-9_]+)\s", out, re.M)
                     if not re.search(r"(rate|pct|ratio|per_|_peak|throughput|utilization)", m.group(1))}
        if found:
            return sorted(found)
    return []


def _discover(available, patterns, skip):
    """Names of `available` matching `patterns` (regexes on the base name), pattern by pattern."""
    out = []
    for rx in patterns:
        out += [n for n in available if re.match(rx, n[:-4]) and n not in skip and n not in out]
    return out


def metric_sets(available):
    """{"core", "full", "ideal", "bypass"} metric lists; with no query result the fixed lists (ncu
    prunes)."""
    core = [m for m in CORE if not available or m in available]
    skip = set(core) | set(SASS_PATCHED)
    room = MAX_FULL - len(core) - len(SASS_PATCHED)
    extra = [n for n in available if any(re.match(rx, n[:-4]) for rx in DISCOVER) and n not in skip]
    full = core + extra[:room] + list(SASS_PATCHED)
    bypass = core + _discover(available, BYPASS_DISCOVER, skip)[:room] + list(SASS_PATCHED)
    core = core or list(CORE)
    return {"core": core, "full": full, "ideal": core + list(SASS_PATCHED),
            "bypass": bypass if available else core + list(SASS_PATCHED)}


def refused(text, metrics):
    """Metrics an ncu error output names (they are dropped and the chunk is retried)."""
    bad = [m for m in dict.fromkeys(metrics) if m in text or m.split(".")[0] in text]
    return [m for m in bad if re.search(r"(ERROR|rror).{0,200}" + re.escape(m.split(".")[0]), text, re.S)]


# ---- running ---------------------------------------------------------------------------------
NCU_FLAGS = ["--csv", "--print-units", "base", "--clock-control", "none", "--cache-control", "all",
             "--kernel-name", "regex:^coalesce_probe_"]


def run_ncu(ncu, exe, chunk_file, metrics, work, timeout, flags=None):
    logfile = chunk_file + ".csv"
    if os.path.exists(logfile):
        os.remove(logfile)
    cmd = [ncu] + (flags or NCU_FLAGS) + ["--metrics", ",".join(metrics), "--log-file", logfile, exe, chunk_file]
    rc, out, err = run_cmd(cmd, timeout=max(5, timeout))
    text = open(logfile).read() if os.path.exists(logfile) else ""
    launches = ncu_csv.parse(text) or ncu_csv.parse(out)
    return rc, launches, text or out, out[-3000:] + err[-3000:]


def assign(chunk, launches, metrics, results, chunk_index):
    """Put one chunk's rows (control first) onto its patterns; returns (control metrics, problems)."""
    problems = []
    if len(launches) != len(chunk) + 1:
        problems.append(f"chunk {chunk_index}: ncu reported {len(launches)} launches for {len(chunk)} patterns + control")
    if not launches:
        return {}, problems
    if launches[0]["kernel"].split("(")[0].strip() != corpus.CONTROL:
        return {}, problems + [f"chunk {chunk_index}: first launch is {launches[0]['kernel']!r}, not the control"]
    control = launches[0]["metrics"]
    for p, row in zip(chunk, launches[1:]):
        want = corpus.kernel_name(p["op"])
        if row["kernel"].split("(")[0].strip() != want:
            problems.append(f"chunk {chunk_index}: launch {row['id']} is {row['kernel']!r}, expected {want}")
            break
        results[p["id"]] = {"metrics": {k: row["metrics"].get(k) for k in metrics}, "chunk": chunk_index}
    return control, problems


class Budget:
    """Seconds per ncu process start and per launch of each metric set, fitted to the chunks so
    far: a line t = start-up + n * per-launch through each set's runs (start-up shared)."""

    def __init__(self):
        self.runs = {}                       # set name -> [(launches, seconds)]

    def add(self, name, launches, seconds):
        self.runs.setdefault(name, []).append((launches, seconds))

    def _line(self, runs):
        if len({n for n, _ in runs}) < 2:
            return None
        mn = sum(n for n, _ in runs) / len(runs)
        mt = sum(t for _, t in runs) / len(runs)
        slope = sum((n - mn) * (t - mt) for n, t in runs) / sum((n - mn) ** 2 for n, _ in runs)
        return mt - slope * mn, slope

    def startup(self):
        lines = [ln for ln in (self._line(r) for r in self.runs.values()) if ln]
        if lines:
            return min(max(sorted(a for a, _ in lines)[len(lines) // 2], 0.5), 30.0)
        pts = [pt for r in self.runs.values() for pt in r]
        return min(max(min(pts, default=(1, 6.0))[1] / 2, 0.5), 30.0)

    def per_launch(self, name):
        runs = self.runs.get(name) or self.runs.get("full") or []   # no run of a set yet: FULL bounds it
        s = self.startup()
        spent = sum(max(t - s, 0.0) for _, t in runs)
        count = sum(n for n, _ in runs)
        return max(spent / count if count else 0.3, 0.005)


def plan_full(remaining, left, budget, chunk_max):
    """How many of the remaining patterns can take the FULL set, the rest taking CORE."""
    s, pf, pc = budget.startup(), budget.per_launch("full"), budget.per_launch("core")
    chunks = math.ceil(remaining / chunk_max) + 1
    room = left - MARGIN - chunks * s
    if room >= remaining * pf:
        return remaining
    if pf <= pc:
        return 0
    return max(0, min(remaining, int((room - remaining * pc) / (pf - pc))))


def fake_launches(chunk, metrics, rules):
    """Dry run: the model (under `rules`) as the GPU, in ncu's CSV form."""
    pred = fit.predict(chunk, rules) if chunk else {}
    from layoutsim.memory import parse_op
    rows = [(corpus.CONTROL, {})]
    for i, p in enumerate(chunk):
        op = parse_op(p["op"]).metric_op
        vals = {f"l1tex__t_requests_pipe_lsu_mem_global_op_{op}.sum": pred["requests"][i],
                f"l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum": pred["sectors"][i],
                f"l1tex__t_output_wavefronts_pipe_lsu_mem_global_op_{op}.sum": pred["wavefronts"][i],
                "memory_l2_theoretical_sectors_global_ideal": pred["ideal_sectors"][i]}
        rows.append((corpus.kernel_name(p["op"]), vals))
    return ncu_csv.parse(ncu_csv.synthesize(rows, metrics))


# ---- the run -----------------------------------------------------------------------------------
def seeded_budget():
    """A Budget holding the first H200 run's ncu costs (FIRST_RUN_COSTS)."""
    budget = Budget()
    for name, runs in FIRST_RUN_COSTS.items():
        for n, secs in runs:
            budget.add(name, n, secs)
    return budget


def _fixed_run(queue):
    """(set, length) of the leading entries of `queue` ((pattern, set) pairs) with one fixed set;
    (None, 0) when the first entry's set is left to the planner."""
    name = queue[0][1]
    if name is None:
        return None, 0
    return name, next((i for i, (_, s) in enumerate(queue) if s != name), len(queue))


def measure_on_gpu(args, exe, queue, env, work, problems, raw, budget=None):
    """Plain run, then ncu chunk by chunk within --max-seconds; returns (results, chunks).
    `queue`: (pattern, metric set) in measuring order, the set None where the planner picks FULL
    or CORE after calibration chunks (the first run); `budget`: costs known beforehand (then no
    calibration)."""
    t0 = time.time()
    order = [p for p, _ in queue]
    allfile = os.path.join(work, "all.txt")
    corpus.write_patterns(allfile, order)
    rc, out, err = run_cmd([exe, allfile], timeout=60)
    m = re.search(r'COALESCE_PROBE device="([^"]*)" cc=(\S+) driver_api=(\d+) runtime=(\d+) base=(\S+) l2=(\d+)', out)
    if m:
        env.update(device=m.group(1), cc=m.group(2), cuda_driver_api=int(m.group(3)),
                   cuda_runtime=int(m.group(4)), buffer_base=m.group(5), l2_bytes=int(m.group(6)))
    log(f"plain run of every pattern: {'ok' if rc == 0 else 'FAILED'} ({time.time() - t0:.0f} s)")
    if rc != 0:
        print((out + err)[-3000:])
        return None, []
    t_ncu = time.time()                       # the metric query counts against the ncu budget
    available = query_metrics(args.ncu, work)
    sets = metric_sets(available)
    env["metrics_offered"] = len(available)
    with open(os.path.join(args.out, "metrics.txt"), "w") as f:
        f.write("\n".join(available) + "\n")
    log(f"ncu offers {len(available)} metrics; CORE {len(sets['core'])}, FULL {len(sets['full'])}, "
        f"IDEAL {len(sets['ideal'])}, BYPASS {len(sets['bypass'])}")
    results, chunks, queue = {}, [], list(queue)
    full_left, failures, flags = None, 0, list(NCU_FLAGS)
    calibration = [] if budget else [("full", 4), ("full", 20), ("core", 20)]
    budget = budget or Budget()
    while queue:
        left = args.max_seconds - (time.time() - t_ncu)
        name, run_len = _fixed_run(queue)
        if name:
            fit_in = int((left - MARGIN - budget.startup()) / budget.per_launch(name))
            size = min(run_len, args.chunk,     # a set's first chunk: at least a calibration chunk's worth
                       fit_in if name in budget.runs else max(4, fit_in))
        elif calibration:
            name, size = calibration.pop(0)
        else:
            if full_left is None:
                full_left = plan_full(len(queue), left, budget, args.chunk)
                log(f"plan: {full_left} of {len(queue)} remaining patterns with FULL "
                    f"({budget.per_launch('full'):.3f} s/launch), the rest CORE "
                    f"({budget.per_launch('core'):.3f} s/launch), start-up {budget.startup():.1f} s")
            name = "full" if full_left > 0 else "core"
            size = int((left - MARGIN - budget.startup()) / budget.per_launch(name))
            size = min(size, args.chunk, full_left if name == "full" else args.chunk)
        if left < MARGIN + 2 or size < 1:
            rest = ", ".join(f"{n} {s or 'FULL/CORE'}" for s, n in plan.groups([(None, s) for _, s in queue]))
            problems.append(f"time budget ({args.max_seconds:.0f} s under ncu) spent: {len(queue)} patterns "
                            f"of the round-robin order not measured ({rest})")
            break
        chunk = [p for p, _ in queue[:size]]
        cfile = os.path.join(work, f"chunk{len(chunks)}.txt")
        corpus.write_patterns(cfile, chunk)
        for attempt in range(4):
            tc = time.time()
            remaining = args.max_seconds - (tc - t_ncu)      # a hung ncu never outlives the budget
            rc, launches, text, cmdlog = run_ncu(args.ncu, args.exe or exe, cfile, sets[name], work,
                                                 remaining, flags)
            if launches or attempt == 3 or args.max_seconds - (time.time() - t_ncu) < MARGIN + 2:
                break
            bad = refused(cmdlog, sets[name])
            if bad:
                log(f"ncu refused {', '.join(bad)}: dropped, retrying")
                problems.append(f"ncu refused metrics: {', '.join(bad)}")
                sets = {k: [x for x in v if x not in bad] for k, v in sets.items()}
            elif "--print-units" in flags:           # an ncu without the option: retry without it
                log("ncu failed: retrying without --print-units")
                problems.append("ncu failed with --print-units base: " + cmdlog[-300:])
                flags = [f for f in flags if f not in ("--print-units", "base")]
            elif name in ("full", "bypass"):
                fallback = "core" if name == "full" else "ideal"
                log(f"the {name.upper()} set failed: {fallback.upper()} instead from now on")
                problems.append(f"the {name.upper()} metric set failed: " + cmdlog[-400:])
                sets[name] = list(sets[fallback])
            else:
                break
        dt = time.time() - tc
        raw.append(text)
        control, probs = assign(chunk, launches, sets[name], results, len(chunks))
        if rc != 0:
            probs.insert(0, f"chunk {len(chunks)}: ncu exited {rc}: {cmdlog[-600:]}")
        problems += probs
        chunks.append({"set": name, "patterns": len(chunk), "launches": len(launches), "seconds": round(dt, 2),
                       "first_id": chunk[0]["id"], "control": control})
        budget.add(name, len(chunk) + 1, dt)
        log(f"ncu [{name}]: {max(len(launches) - 1, 0)}/{len(chunk)} patterns in {dt:.1f} s "
            f"({len(results)}/{len(order)} measured, {time.time() - t_ncu:.0f} s under ncu)")
        queue = queue[len(chunk):]
        if name == "full" and full_left is not None:
            full_left -= len(chunk)
        failures = 0 if launches else failures + 1
        if failures >= 2:
            problems.append("two ncu processes in a row measured nothing: stopped")
            break
    env["metric_sets"] = sets
    env["ncu_flags"] = flags
    env["ncu_seconds"] = round(time.time() - t_ncu, 1)
    return results, chunks


def summarize(patterns, entries, env, chunks, fitted, problems, elapsed):
    from layoutsim.memory import nvidia, parse_op
    done = [e for e in entries if e.get("metrics")]
    lines = [f"coalesce_probe: {len(patterns)} patterns, {len(done)} measured on {env.get('gpu', '?')} "
             f"(driver {env.get('driver') or '-'}, CUDA {env.get('cuda', '-')}, ncu {env.get('ncu') or '-'}) "
             f"in {elapsed:.0f} s; ncu processes: "
             + (", ".join(f"{n} {s.upper()}" for s, n in Counter(c["set"] for c in chunks).items()) or "none")]
    if env.get("dry_run"):
        lines.append("DRY RUN: no GPU was used; the 'measured' values come from the model"
                     + (f" ({env['simulated_rules']})" if env.get("simulated_rules") else ""))
    lines += [f"problem: {p}" for p in problems[:25]]
    controls = [c["control"] for c in chunks if any(v for v in (c.get("control") or {}).values())]
    if controls:
        lines.append(f"note: {len(controls)} control launches counted something (subtracted): {controls[0]}")
    lines.append(f"model (rules at measurement: {nvidia.DEFAULT.label()}) against the measurement:")
    lines.append(f"  {'op':<30} {'measured':>8} " + " ".join(f"{q:>13}" for q in fit.QUANTITIES))
    for op in dict.fromkeys(p["op"] for p in patterns):
        mine = [e for e in done if e["op"] == op]
        cells = []
        for q in fit.QUANTITIES:
            pairs = [(e["model_at_measurement"][q], fit.measured(e, q, (chunks[e["chunk"]]["control"] if chunks else {})))
                     for e in mine]
            pairs = [(a, b) for a, b in pairs if b is not None]
            cells.append(f"{sum(a == b for a, b in pairs):>5}/{len(pairs):<4} ok" if pairs else f"{'-':>13}")
        lines.append(f"  {op:<30} {len(mine):>8} " + " ".join(f"{c:>13}" for c in cells))
    lines.append("candidate rules (layoutsim/memory/nvidia.py) per family and quantity:")
    lines += ["  " + s for s in fit.report(fitted)]
    fams = {parse_op(p["op"]).family for p in patterns}
    lines.append(f"families with a fitting rule set: {sum(bool(fitted.get(f, {}).get('matching')) for f in fams)}/{len(fams)}")
    return "\n".join(lines)


def write_corpus(path, obj):
    """JSON with one pattern per line (readable diffs, small), written atomically."""
    head = {k: v for k, v in obj.items() if k != "patterns"}
    text = json.dumps(head, indent=1)[:-2] + ',\n "patterns": [\n'
    text += ",\n".join("  " + json.dumps(p, separators=(",", ":")) for p in obj["patterns"]) + "\n ]\n}\n"
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def main(argv=None):
    ap = common.driver_options("gpu_check.coalesce_probe.measure", __doc__, "coalesce_corpus.json",
                               simulate="requests=per_128B,ideal=unique", chunk=150, max_seconds=120.0,
                               chunk_help="most patterns per ncu process (default 150)")
    ap.add_argument("--ids", help="measure only the pattern ids listed in this file (whitespace-separated), "
                                  "in that order: CORE metrics, IDEAL for the ideal family, no FULL")
    ap.add_argument("--complete", metavar="CORPUS", help="measure what this coalesce_corpus.json (one run or "
                    "merged runs) lacks, with the metric sets of plan.py; then merge.py joins the two")
    ap.add_argument("--probe", dest="exe", help="a prebuilt probe executable instead of compiling probe.cu")
    ap.add_argument("--keep-work", action="store_true", help="keep the build directory (printed)")
    args = ap.parse_args(argv)
    if needs.refuse("python -m gpu_check.coalesce_probe.measure", args, ncu=args.ncu):   # before anything is compiled or written
        return 2
    from layoutsim.memory import nvidia

    t0 = time.time()
    os.makedirs(args.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="coalesce_probe_")
    patterns = corpus.generate()
    budget = None
    if args.ids and args.complete:
        log("coalesce_probe: --ids and --complete both choose the patterns: give one")
        return 2
    if args.complete:
        try:
            with open(args.complete) as f:
                earlier = json.load(f)
            why = plan.check_earlier(patterns, earlier)
        except (OSError, ValueError, AttributeError, TypeError) as e:
            why = f"cannot read it ({getattr(e, 'strerror', None) or e})"
        if why:
            log(f"coalesce_probe: --complete {args.complete}: {why}")
            return 2
        queue = plan.complete(patterns, earlier)
        budget = seeded_budget()
    elif args.ids:
        try:
            words = open(args.ids).read().split()
        except OSError as e:
            log(f"coalesce_probe: --ids {args.ids}: cannot read it ({e.strerror})")
            return 2
        bad = [w for w in words if not (w.isdigit() and int(w) < len(patterns))]
        if bad:
            log(f"coalesce_probe: --ids {args.ids}: no pattern {bad[0]!r} (ids are 0..{len(patterns) - 1})")
            return 2
        ids = [int(w) for w in words]
        queue = [(patterns[i], "ideal" if patterns[i]["family"] == "ideal" else "core") for i in dict.fromkeys(ids)]
        budget = seeded_budget()
    else:                                   # the ideal family first (IDEAL), then FULL/CORE as planned
        queue = [(p, "ideal") for p in patterns if p["family"] == "ideal"] + \
            [(p, None) for p in measurement_order([p for p in patterns if p["family"] != "ideal"])]
    queue = queue[:args.limit] if args.limit else queue
    order = [p for p, _ in queue]
    log(f"coalesce_probe: {len(patterns)} patterns over {len(corpus.OPS)} ops ({len(order)} to measure), work {work}")
    if budget:
        log(plan.describe(queue, budget, args.chunk, args.max_seconds))
    args.ncu = shutil.which(args.ncu) or args.ncu
    nvcc = shutil.which(args.nvcc)
    env = environment(nvcc or args.nvcc, args.ncu, args.dry_run)
    problems, raw, exe = [], [], args.exe
    if not exe and nvcc:
        rc, exe, build = compile_probe(nvcc, work, args.arch)
        with open(os.path.join(args.out, "build.log"), "w") as f:
            f.write(build)
        log(f"compile ({args.arch}): {'ok' if rc == 0 else 'FAILED'} in {time.time() - t0:.0f} s")
        if rc != 0:
            print(build[-3000:])
            return 2
    elif not exe and not args.dry_run:
        log(f"coalesce_probe: nvcc not found ({args.nvcc}); export PATH=/usr/local/cuda/bin:$PATH")
        return 2
    cuobjdump = shutil.which("cuobjdump")
    if exe and cuobjdump:
        rc, out, err = run_cmd([cuobjdump, "-sass", exe], timeout=120)
        funcs = {k: v for k, v in sass_global_ops(out).items() if k.startswith("coalesce_probe_")}
        with open(os.path.join(args.out, "sass.txt"), "w") as f:
            f.write(out)
        env["sass"] = {k: [o for o, _ in v] for k, v in sorted(funcs.items())}
        env["sass_predicated"] = {}
        for op in corpus.OPS:
            ok, pred = sass_check(op, funcs.get(corpus.kernel_name(op), []))
            env["sass_predicated"][corpus.kernel_name(op)] = pred
            if not ok:
                problems.append(f"SASS check failed: {corpus.kernel_name(op)} holds {funcs.get(corpus.kernel_name(op))}")
        log(f"SASS: {len(funcs)} kernels, {sum(p.startswith('SASS') for p in problems)} not as expected")

    if args.dry_run:
        rules = nvidia.parse_rules(args.simulate) if args.simulate else None
        env["simulated_rules"] = rules.label() if rules else "the model's own rules"
        results, chunks = {}, []
        metrics = list(CORE) + ["memory_l2_theoretical_sectors_global_ideal"]
        rest = list(queue)
        while rest:                         # chunks as the GPU run makes them, each set as planned
            name, run_len = _fixed_run(rest)
            chunk = [p for p, _ in rest[:min(run_len or len(rest), args.chunk)]]
            rest = rest[len(chunk):]
            launches = fake_launches(chunk, metrics, rules)
            raw.append(ncu_csv.synthesize([(r["kernel"], r["metrics"]) for r in launches], metrics))
            control, probs = assign(chunk, launches, metrics, results, len(chunks))
            problems += probs
            chunks.append({"set": name or "full", "patterns": len(chunk), "launches": len(launches),
                           "seconds": 0.0, "first_id": chunk[0]["id"], "control": control})
    else:
        if not shutil.which(args.ncu):
            log(f"coalesce_probe: ncu not found ({args.ncu}); export PATH=/usr/local/cuda/bin:$PATH")
            return 2
        results, chunks = measure_on_gpu(args, exe, queue, env, work, problems, raw, budget)
        if results is None:
            return 2
    env["command"] = " ".join(sys.argv)
    env["plan"] = [list(g) for g in plan.groups(queue)]
    if args.complete:
        env["completes"] = {"corpus": args.complete, "date": earlier.get("environment", {}).get("date"),
                            "measured": sum(1 for p in earlier["patterns"] if p.get("metrics"))}
    env["chunks"] = [{k: v for k, v in c.items() if k != "control"} for c in chunks]
    with open(os.path.join(args.out, "ncu.csv"), "w") as f:
        f.write("\n".join(raw))
    predicted = corpus.predictions(patterns)
    entries = []
    for i, p in enumerate(patterns):
        e = dict(p, kernel=corpus.kernel_name(p["op"]),
                 predicated=env.get("sass_predicated", {}).get(corpus.kernel_name(p["op"])),
                 model_at_measurement={q: predicted[q][i] for q in fit.QUANTITIES})
        r = results.get(p["id"])
        if r:
            e.update(metrics=r["metrics"], chunk=r["chunk"])
        entries.append(e)
    fitted = fit.fit(entries, chunks)
    elapsed = time.time() - t0
    text = summarize(patterns, entries, env, chunks, fitted, problems, elapsed)
    obj = {"schema": 1,
           "what": "L1TEX requests/sectors/wavefronts of single warp global accesses, measured with Nsight "
                   "Compute (one launch per pattern; the control launch of each ncu process first)",
           "environment": env,
           "chunks": chunks,
           "model_rules_at_measurement": {f: r.label() for f, r in nvidia.RULES.items()},
           "fit": {f: {"matching": [r.python() for r in info["matching"]],
                       "per_quantity": {q: {common.setting(key): bad[:50]
                                            for key, bad in table.items()}
                                        for q, table in info["per_quantity"].items()}}
                   for f, info in fitted.items()},
           "problems": problems,
           "patterns": entries}
    write_corpus(os.path.join(args.out, "coalesce_corpus.json"), obj)
    with open(os.path.join(args.out, "summary.txt"), "w") as f:
        f.write(text + "\n")
    if args.keep_work:
        log(f"work dir kept: {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    head = text.splitlines()[0]                   # stdout stays short: summary.txt has everything
    print("\n".join([head] + [f"problem: {p}" for p in problems[:5]] + fit.brief(fitted)))
    log(f"RESULT: {len(results)}/{len(patterns)} patterns measured; "
        f"{sum(bool(i['matching']) for i in fitted.values())}/{len(fitted)} families fitted"
        f"{'; DRY RUN' if args.dry_run else ''}")
    return 0 if results else 2


if __name__ == "__main__":
    sys.exit(main())
