"""Measure the bank-probe corpus with Nsight Compute and compare it with the bank model.

    export PATH=/usr/local/cuda/bin:$PATH
    python -m gpu_check.bank_probe.measure --out DIR            # on the GPU machine
    python -m gpu_check.bank_probe.measure --out DIR --dry-run  # no GPU: the model plays the GPU

Steps: generate the corpus (corpus.py) -> compile probe.cu with nvcc -arch=sm_90 -> check the
SASS (cuobjdump: exactly one LDS/STS/LDSM/STSM of the expected width per kernel) -> one plain
run of every pattern (fails fast on a bad launch) -> ncu in chunks of launches:
    ncu --csv --clock-control none --cache-control none --kernel-name regex:^bank_probe_
        --metrics l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,..._op_st.sum[,..._shared.sum]
-> DIR/bank_corpus.json (every pattern, its measured wavefronts, the environment), DIR/summary.txt,
DIR/ncu.csv (raw), DIR/sass.txt; the summary (model vs measured, mismatches, and which candidate
merge rules of layoutsim/banks/nvidia.py fit every measurement) is printed last.

Exit status: 0 when the corpus was measured and written (mismatches or not; --strict makes a
mismatch exit 1), 2 when the measurement itself failed (no nvcc/ncu/GPU, a launch error).
At most --max-seconds (default 140) are spent under ncu: the first two chunks measure ncu's
start-up and per-launch cost, later chunks are sized to the time left, and patterns left over
are recorded as not measured. Patterns are measured round-robin over the ops, so a
cut-short run still covers all. Four extra launches measure nvcuda::wmma fragment loads of the
worked example in docs/banks.md (SASS and wavefronts; recorded in the environment, not modelled).
"""
import json
import os
import re
import shutil
import sys
import tempfile
import time

from layoutsim import sass as SASS
from layoutsim.files import make_dir, write_atomic

from .. import needs
from . import common, corpus, ncu_csv
from .common import environment, log, measurement_order, run_cmd

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "probe.cu")


# ---- build and SASS --------------------------------------------------------------------------
def compile_probe(nvcc, work, arch):
    return common.compile_probe(nvcc, SOURCE, os.path.join(work, "bank_probe"), arch)


def sass_ops(text):
    """{function name: [shared-memory SASS opcodes]} from `cuobjdump -sass` output."""
    return {f: [op for code in codes for op in SASS.SHARED.findall(code)]
            for f, codes in common.sass_functions(text).items()}


def sass_matches(spec, ops):
    """Does the kernel hold exactly one shared op of spec's kind and width?"""
    return len(ops) == 1 and SASS.shared_op(ops[0]) == (spec.direction, spec.width, spec.matrices, spec.trans)


# ---- measuring -------------------------------------------------------------------------------
def cost_model(timings):
    """(start-up seconds, seconds per profiled launch) of ncu from [(launches, seconds)] so far:
    a line through the last two chunks of different sizes, else a guess from the first."""
    pts = [t for t in timings if t[0] > 0]
    for (n1, t1), (n2, t2) in zip(pts[-2::-1], pts[:0:-1]):
        if n1 != n2:
            per = (t2 - t1) / (n2 - n1)
            if per > 0:
                return min(max(t1 - per * n1, 0.0), 30.0), max(per, 0.005)
    n, t = pts[-1]
    startup = min(5.0, t / 2)
    return startup, max((t - startup) / n, 0.005)


def run_ncu(ncu, exe, pattern_file, first, count, metrics, work, timeout):
    logfile = os.path.join(work, f"ncu_{os.path.basename(pattern_file)}_{first}.csv")
    if os.path.exists(logfile):
        os.remove(logfile)
    cmd = [ncu, "--csv", "--clock-control", "none", "--cache-control", "none",
           "--kernel-name", "regex:^bank_probe_", "--metrics", ",".join(metrics),
           "--log-file", logfile, exe, pattern_file, str(first), str(count)]
    rc, out, err = run_cmd(cmd, timeout=timeout)
    text = open(logfile).read() if os.path.exists(logfile) else ""
    launches = ncu_csv.parse(text) or ncu_csv.parse(out)
    return rc, launches, text or out, " ".join(cmd) + "\n" + out[-4000:] + err[-4000:]


def assign(chunk, launches, results, metrics):
    """Put one chunk's ncu rows onto its patterns (launch order = pattern order); returns problems."""
    problems = []
    if len(launches) != len(chunk):
        problems.append(f"ncu reported {len(launches)} launches for {len(chunk)} patterns")
    for p, row in zip(chunk, launches):
        want = corpus.kernel_name(p["op"])
        if row["kernel"] and row["kernel"].split("(")[0].strip() != want:
            problems.append(f"launch {row['id']}: kernel {row['kernel']!r}, expected {want}")
            return problems
        m = row["metrics"]
        mine = ncu_csv.LD if p["op"].startswith(("ld.", "ldmatrix")) else ncu_csv.ST
        other = ncu_csv.ST if mine == ncu_csv.LD else ncu_csv.LD
        if m.get(mine) is None:
            problems.append(f"pattern {p['id']}: no {mine} value")
            continue
        results[p["id"]] = {"measured": int(m[mine]), "metrics": {k: m.get(k) for k in metrics}}
        if m.get(other):
            problems.append(f"pattern {p['id']}: {other} = {m.get(other)} (expected 0: other shared traffic?)")
    return problems


# ---- extras: nvcuda::wmma fragment loads (docs/banks.md's worked example) --------------------------
# (kernel, byte offset of the fragment's (0,0), ldm, what it is, (model op, tile rows, cols, pad, row, col))
EXTRAS = [
    ("bank_probe_wmma_load_a_row", (16 * 40 + 16) * 2, 40, "wmma matrix_a row_major at (16,16) of As[64][32+8]",
     ("ldmatrix.x4", 64, 32, 8, 16, 16)),
    ("bank_probe_wmma_load_a_row", (16 * 32 + 16) * 2, 32, "wmma matrix_a row_major at (16,16) of As[64][32]",
     ("ldmatrix.x4", 64, 32, 0, 16, 16)),
    ("bank_probe_wmma_load_b_row", (16 * 72 + 16) * 2, 72, "wmma matrix_b row_major at (16,16) of Bs[32][64+8]",
     ("ldmatrix.x4.trans", 32, 64, 8, 16, 16)),
    ("bank_probe_wmma_load_b_row", (16 * 64 + 16) * 2, 64, "wmma matrix_b row_major at (16,16) of Bs[32][64]",
     ("ldmatrix.x4.trans", 32, 64, 0, 16, 16)),
]


def extras_model(spec):
    from layoutsim import address, banks
    op, rows, cols, pad, r, c = spec
    offs = banks.block_offsets(address.Tile(rows, cols, "f16", pad=pad), op, r, c)
    return op, banks.wavefronts(op, offs)


def measure_extras(ncu, exe, work, metrics, left, env, raw):
    """One ncu run over the wmma extras; results go to env["wmma_extras"] (not part of the corpus)."""
    if left < 15:
        log("wmma extras: skipped (time budget spent)")
        return []
    path = os.path.join(work, "extras.txt")
    write_atomic(path, f"bank_probe v1\n{len(EXTRAS)}\n" + "".join(
        f"{name} ffffffff {offset} {ldm} " + " ".join(["0"] * 30) + "\n" for name, offset, ldm, _, _ in EXTRAS))
    rc, launches, text, _ = run_ncu(ncu, exe, path, 0, len(EXTRAS), metrics, work, min(left, 60))
    raw.append(text)
    out = []
    for (name, offset, ldm, what, spec), row in zip(EXTRAS, launches):
        op, model = extras_model(spec)
        out.append({"kernel": name, "offset": offset, "ldm": ldm, "what": what,
                    "measured": row["metrics"].get(ncu_csv.LD), "metrics": row["metrics"],
                    "sass": env.get("sass", {}).get(name), f"model_{op}_same_block": model})
    env["wmma_extras"] = out
    return out


# ---- comparing ---------------------------------------------------------------------------------
def summarize(patterns, results, env, elapsed, problems, sass_bad):
    """The printed report: model (default rules) vs measured, mismatches, and which candidate
    merge rules fit. Returns (text, mismatching patterns, fitting nvidia.Rules)."""
    from layoutsim.banks import nvidia
    measured = {pid: r["measured"] for pid, r in results.items()}
    lines = []
    lines.append(f"bank_probe: {len(patterns)} patterns, {len(measured)} measured on {env.get('gpu', '?')} "
                 f"(driver {env.get('driver') or '-'}, CUDA {env.get('cuda', '-')}, ncu {env.get('ncu') or '-'}) "
                 f"in {elapsed:.0f} s")
    if env.get("dry_run"):
        lines.append("DRY RUN: no GPU was used; the 'measured' values come from the model"
                     + (f" ({env['simulated_rules']})" if env.get("simulated_rules") else ""))
    for p in problems[:20]:
        lines.append(f"problem: {p}")
    for k, ops in sass_bad[:20]:
        lines.append(f"SASS check failed: {k} holds {ops or 'no shared-memory instruction'}")
    for x in env.get("wmma_extras", []):
        model = next(v for k, v in x.items() if k.startswith("model_"))
        lines.append(f"extra: {x['what']}: measured {x['measured']} wavefronts (SASS {' '.join(x['sass'] or ['?'])}); "
                     f"the model's {next(k for k in x if k.startswith('model_'))[6:]}: {model}")
    if not measured:
        return "\n".join(lines), [], []
    done = [p for p in patterns if p["id"] in measured]
    pred = dict(zip([p["id"] for p in done], corpus.predictions(done, nvidia.DEFAULT)))
    mism = [p for p in done if pred[p["id"]] != measured[p["id"]]]
    lines.append(f"model with the default rules ({nvidia.DEFAULT.label()}): "
                 f"{len(done) - len(mism)} match, {len(mism)} mismatch")
    lines.append(f"  {'op':<20} {'patterns':>8} {'match':>6} {'mismatch':>8}")
    for op in dict.fromkeys(p["op"] for p in patterns):
        n = sum(1 for p in done if p["op"] == op)
        bad = sum(1 for p in mism if p["op"] == op)
        lines.append(f"  {op:<20} {n:>8} {n - bad:>6} {bad:>8}")
    if mism:
        lines.append("mismatches (model vs measured):")
        for p in mism:
            act = "" if p["active"] == corpus.FULL else f" active={p['active']:#010x}"
            lines.append(f"  #{p['id']:<4} {p['op']:<18} {p['tag']!r}: model {pred[p['id']]}, "
                         f"measured {measured[p['id']]}{act}; offsets {','.join(map(str, p['offsets']))}")
    per_family, matching = corpus.fit(patterns, measured)
    lines.append("per family, the candidate settings with no mismatch:")
    for name, table in per_family.items():
        if not table:
            continue
        lines.append(f"  {name:<34} " + common.verdict(
            table, "{}", "NONE fits; closest: {key} ({n} mismatches: #{ids})", 8))
    lines.append(f"candidate rule sets matching every measured pattern: {len(matching)}")
    for r in matching[:8]:
        lines.append(f"  {r.python()}")
    if len(matching) > 8:
        lines.append(f"  ... ({len(matching) - 8} more, differing only where no pattern can tell)")
    if mism and matching:
        lines.append(f"to adopt: in layoutsim/banks/nvidia.py set DEFAULT = {matching[0].python()}")
    if not env.get("dry_run"):
        lines.append(f"record: MEASURED = \"{env.get('gpu')}, driver {env.get('driver')}, CUDA {env.get('cuda')}, "
                     f"{env.get('date', '')[:10]}: {len(results)} access patterns measured with ncu, "
                     f"{'all matched' if not mism else f'{len(mism)} differ'} (repeat: gpu-check run --group banks)\" "
                     f"in nvidia.py, and copy bank_corpus.json to tests/data/banks/")
    return "\n".join(lines), mism, matching


def write_json(path, obj):
    write_atomic(path, json.dumps(obj, indent=1) + "\n", "bank corpus")


def main(argv=None):
    ap = common.driver_options("gpu_check.bank_probe.measure", __doc__, "bank_corpus.json",
                               simulate="wide_ld=one-phase,matrix=as-v4", chunk=200, max_seconds=140.0,
                               chunk_help="most launches per ncu process (default 200; the first is 32, "
                                          "the rest sized to the time left)")
    ap.add_argument("--strict", action="store_true", help="exit 1 when the model mismatches a measurement")
    ap.add_argument("--keep-work", action="store_true", help="keep the build directory (printed)")
    ap.add_argument("--probe", help="a prebuilt probe executable to use instead of compiling probe.cu")
    args = ap.parse_args(argv)
    if needs.refuse("python -m gpu_check.bank_probe.measure", args, ncu=args.ncu):   # before anything is compiled or written
        return 2

    t0 = time.time()
    make_dir(args.out, "--out folder")
    work = tempfile.mkdtemp(prefix="bank_probe_")
    patterns = corpus.generate()
    order = measurement_order(patterns)
    if args.limit:
        order = order[:args.limit]
    pattern_file = os.path.join(work, "patterns.txt")
    corpus.write_patterns(pattern_file, order)
    log(f"bank_probe: {len(patterns)} patterns ({len(order)} to measure), work dir {work}")

    nvcc = shutil.which(args.nvcc) or args.nvcc
    ncu = shutil.which(args.ncu) or args.ncu
    env = environment(nvcc, ncu, args.dry_run)
    problems, sass_bad, sass_text, build = [], [], "", ""
    have_nvcc = shutil.which(args.nvcc) is not None
    exe = None
    if args.probe:
        exe = os.path.abspath(args.probe)
        log(f"probe: using {exe} (not compiled here)")
    elif have_nvcc:
        rc, exe, build = compile_probe(nvcc, work, args.arch)
        log(f"compile ({args.arch}): {'ok' if rc == 0 else 'FAILED'} in {time.time() - t0:.0f} s")
        if rc != 0:
            print(build[-3000:])
            return 2
    elif not args.dry_run:
        log(f"bank_probe: nvcc not found ({args.nvcc}); export PATH=/usr/local/cuda/bin:$PATH")
        return 2
    else:
        log("compile: skipped (no nvcc here)")

    from layoutsim.banks.ops import parse as parse_op
    if exe and shutil.which("cuobjdump"):
        rc, out, err = run_cmd(["cuobjdump", "-sass", exe], timeout=120)
        if rc == 0:
            funcs = sass_ops(out)
            for op in sorted({p["op"] for p in patterns}):
                k = corpus.kernel_name(op)
                ops = funcs.get(k)
                if ops is None or not sass_matches(parse_op(op), ops):
                    sass_bad.append((k, ops))
            sass_text = "\n".join(f"{k}: {' '.join(v)}" for k, v in sorted(funcs.items()))
            write_atomic(os.path.join(args.out, "sass.txt"), sass_text + "\n")
            env["sass"] = {k: v for k, v in sorted(funcs.items())}
            log(f"SASS: {len(funcs)} kernels, {len(sass_bad)} not as expected")
        else:
            log(f"SASS: cuobjdump failed ({err.strip()[:200]})")

    results = {}
    metrics = list(ncu_csv.METRICS) + list(ncu_csv.OPTIONAL)
    raw = []
    if args.dry_run:
        from layoutsim.banks import nvidia
        rules = nvidia.parse_rules(args.simulate) if args.simulate else nvidia.DEFAULT
        env["simulated_rules"] = rules.label()
        pred = corpus.predictions(order, rules)
        fake = []
        for p, v in zip(order, pred):
            ld = p["op"].startswith(("ld.", "ldmatrix"))
            fake.append((corpus.kernel_name(p["op"]), {ncu_csv.LD: v if ld else 0, ncu_csv.ST: 0 if ld else v,
                                                      ncu_csv.ALL: v}))
        for first in range(0, len(order), args.chunk):
            chunk = order[first:first + args.chunk]
            text = ncu_csv.synthesize(fake[first:first + args.chunk])
            raw.append(text)
            problems += assign(chunk, ncu_csv.parse(text), results, metrics)
    else:
        rc, out, err = run_cmd([exe, pattern_file], timeout=120)
        m = re.search(r'BANK_PROBE device="([^"]*)" cc=(\S+) driver_api=(\d+) runtime=(\d+)', out)
        if m:
            env.update(device=m.group(1), cc=m.group(2), cuda_driver_api=int(m.group(3)),
                       cuda_runtime=int(m.group(4)))
        log(f"plain run of every pattern: {'ok' if rc == 0 else 'FAILED'} ({time.time() - t0:.0f} s)")
        if rc != 0:
            print((out + err)[-3000:])
            return 2
        if not shutil.which(args.ncu):
            log(f"bank_probe: ncu not found ({args.ncu}); export PATH=/usr/local/cuda/bin:$PATH")
            return 2
        t_ncu = time.time()
        first, size, timings = 0, min(args.chunk, 32), []
        while first < len(order):
            left = args.max_seconds - (time.time() - t_ncu)
            if timings:                          # size the chunk to what the budget still holds
                startup, per_launch = cost_model(timings)
                size = min(args.chunk, int((left - startup - 5) / per_launch))
            if left < 8 or size < 1:
                problems.append(f"time budget ({args.max_seconds:.0f} s under ncu) spent: {len(order) - first} "
                                f"patterns of the round-robin order not measured")
                break
            chunk = order[first:first + size]
            tc = time.time()
            rc, launches, text, cmdlog = run_ncu(ncu, exe, pattern_file, first, len(chunk), metrics, work, left)
            if rc != 0 and not launches and ncu_csv.ALL in metrics:
                metrics = list(ncu_csv.METRICS)          # retry without the optional metric
                rc, launches, text, cmdlog = run_ncu(ncu, exe, pattern_file, first, len(chunk), metrics, work, left)
            raw.append(text)
            probs = assign(chunk, launches, results, metrics)
            if rc != 0:
                probs.insert(0, f"ncu exited {rc} on patterns {first}..{first + len(chunk) - 1}: {cmdlog[-600:]}")
            problems += probs
            dt = time.time() - tc
            if launches:
                timings.append((len(launches), dt))
            log(f"ncu: {len(launches)}/{len(chunk)} launches in {dt:.1f} s "
                f"({len(results)}/{len(order)} measured, {time.time() - t_ncu:.0f} s under ncu)")
            if rc != 0 and not launches:
                break
            first += len(chunk)
        measure_extras(ncu, exe, work, metrics, args.max_seconds - (time.time() - t_ncu), env, raw)
    env["metrics"] = metrics
    env["command"] = " ".join(sys.argv)
    elapsed = time.time() - t0
    write_atomic(os.path.join(args.out, "ncu.csv"), "\n".join(raw))
    text, mism, matching = summarize(patterns, results, env, elapsed, problems, sass_bad)
    from layoutsim.banks import nvidia
    pred_default = corpus.predictions(patterns, nvidia.DEFAULT)
    out = {"schema": 1,
           "what": "shared-memory wavefronts of single warp accesses, measured with Nsight Compute "
                   "(l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld/_op_st.sum, one launch per pattern)",
           "environment": env,
           "model_rules_at_measurement": nvidia.DEFAULT.label(),
           "fitting_rules": [r.python() for r in matching],
           "problems": problems,
           "patterns": []}
    for p, model in zip(patterns, pred_default):
        entry = dict(p)
        entry["arch"] = "sm_90"
        entry["kernel"] = corpus.kernel_name(p["op"])
        r = results.get(p["id"])
        entry["measured"] = r["measured"] if r else None
        if r:
            entry["metrics"] = r["metrics"]
        entry["model_at_measurement"] = model
        out["patterns"].append(entry)
    write_json(os.path.join(args.out, "bank_corpus.json"), out)
    write_atomic(os.path.join(args.out, "summary.txt"), text + "\n")
    if not args.keep_work:
        shutil.rmtree(work, ignore_errors=True)
    shown, mism_lines = [], 0               # stdout: mismatch lines short and few (summary.txt has all)
    for line in text.splitlines():
        if line.startswith("  #"):
            mism_lines += 1
            if mism_lines > 30:
                continue
            line = line if len(line) <= 150 else line[:147] + "..."
        shown.append(line)
    if mism_lines > 30:
        at = next(i for i, line in enumerate(shown) if line.startswith("per family"))
        shown.insert(at, f"  ... {mism_lines - 30} more mismatches: see summary.txt")
    print("\n".join(shown))
    log(f"wrote {os.path.join(args.out, 'bank_corpus.json')} ({len(results)} measured) in {time.time() - t0:.0f} s")
    log(f"RESULT: {len(results)}/{len(patterns)} patterns measured; default rules: {len(results) - len(mism)} match, "
        f"{len(mism)} mismatch; candidate rule sets fitting every measurement: {len(matching)}"
        f"{'; DRY RUN' if args.dry_run else ''}")
    if not results:
        return 2
    return 1 if (args.strict and mism) else 0


if __name__ == "__main__":
    from layoutsim.script import run_script
    sys.exit(run_script(main, "python -m gpu_check.bank_probe.measure"))
