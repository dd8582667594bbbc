"""Do wgmma operand reads and TMA writes show up in the shared-memory counters? Measured by
difference: the same probe launched with `repeat` 1 and 5 under Nsight Compute; (m5 - m1) / 4 is
what one wgmma (or one TMA box) adds to counter m, whatever the kernel's own fill traffic.

    ncu --csv --clock-control none --cache-control none --kernel-name regex:^desc_probe_
        --metrics <chosen> python -m gpu_check.descriptors.counters --target CUBIN BASE

The metrics: the bank probe's LSU wavefront counters plus every .sum counter `ncu --query-metrics
--query-metrics-mode all` lists whose name says shared memory, banks, TMA or GMMA (the raw list
is kept in the output), at most MAX_METRICS; if ncu rejects that set, the LSU counters alone.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

import numpy as np

from ..bank_probe import ncu_csv

FIXED = (ncu_csv.LD, ncu_csv.ST, ncu_csv.ALL,
         "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
         "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
         "l1tex__data_bank_reads.sum", "l1tex__data_bank_writes.sum",
         "smsp__inst_executed_op_shared_ld.sum", "smsp__inst_executed_op_shared_st.sum")
PATTERN = re.compile(r"(shared|smem|bank|tma|gmma|utm|dsmem|lsu_wavefronts)", re.I)
MAX_METRICS = 32
REPEATS = (1, 5)


def launches():
    """(label, wgmma entry or None for TMA, operand under test, swizzle, major, repeat), in the
    order the target launches them."""
    from layoutsim import smem
    out = []
    for name in smem.MODES:
        for major in ("K", "MN"):
            for r in REPEATS:
                out.append(("wgmma B (RS)", "wgmma.m64n128k16.f32.f16.f16", "B", name, major, r))
    for name in ("none", "128B"):
        for r in REPEATS:
            out.append(("wgmma A+B (SS)", "wgmma.m64n16k16.f32.f16.f16", "A", name, "K", r))
    for name in smem.MODES:
        for r in REPEATS:
            out.append(("TMA 2-D box, 64 rows", None, None, name, "box", r))
    return out


def target(cubin_path, base):
    """Run under ncu: every launch of launches(), one case, one block."""
    import layoutsim.smem as smem
    from ..backends.cuda import CudaBackend
    from . import plan, run
    from .kernels import Probe
    from .lab import CudaLab
    lab = CudaLab(CudaBackend(), open(cubin_path, "rb").read())
    for label, entry, under, swz, major, rep in launches():
        if entry is None:
            span = smem.mode(swz).span if swz != "none" else 128
            case = plan.TmaCase((span // 2, 64), 2, swz, 0, (0, 0), (span // 2, 64))
            g = np.arange(int(np.prod(case.gdims)), dtype=np.uint16).reshape(case.gdims[::-1])
            lab.tma(case, g, run.tma_region(case), repeat=rep)
            continue
        probe = Probe(entry, under, major == "MN")
        mn, k = (probe.instr.shape[1] if under == "B" else 64), probe.instr.shape[2]
        d = smem.Descriptor.dense(base + 8192, mn, k, 16, swz, major).encode()
        pairs = run.desc_pairs(probe, base, [d])
        lab._wgmma(probe, pairs, run.image(probe, 0, base), run.a_registers(probe), 1, rep, 1)
    print("COUNTERS_TARGET done", flush=True)


def _query(ncu):
    """`ncu --query-metrics-mode all` output (full names with rollups), '' if ncu cannot list them."""
    for extra in ([], ["--chip", "gh100"]):
        try:
            r = subprocess.run([ncu, "--query-metrics", "--query-metrics-mode", "all", *extra],
                               capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if r.returncode == 0 and "__" in r.stdout:
            return r.stdout
    return ""


def choose_metrics(query):
    """The metrics to collect: FIXED ones the query lists (all of them if there is no list), then
    the listed .sum counters whose names match PATTERN, GMMA/TMA first, at most MAX_METRICS."""
    listed = set(re.findall(r"\b(\w+__[\w.]+\.sum)\b", query))
    fixed = [m for m in FIXED if not listed or m in listed]
    found = sorted(m for m in listed if PATTERN.search(m) and m not in fixed)
    found.sort(key=lambda m: (not re.search(r"gmma|tma|utm", m, re.I), m))
    return fixed + found[:MAX_METRICS - len(fixed)]


def per_op(rows, metrics):
    """{"launches": rows labelled by launches(), "per_op": [(m[5] - m[1]) / 4 per label, nonzero
    counters only]} from ncu_csv.parse rows (launch order = launches() order)."""
    out = {"launches": [], "per_op": []}
    for (label, entry, _, swz, major, rep), row in zip(launches(), rows):
        out["launches"].append({"label": label, "entry": entry, "swizzle": swz, "major": major, "repeat": rep,
                                "kernel": row["kernel"], "metrics": row["metrics"]})
    by = {}
    for x in out["launches"]:
        by.setdefault((x["label"], x["swizzle"], x["major"]), {})[x["repeat"]] = x["metrics"]
    lo, hi = REPEATS
    for (label, swz, major), reps in by.items():
        if lo in reps and hi in reps:
            diff = {m: (None if reps[hi].get(m) is None or reps[lo].get(m) is None
                        else (reps[hi][m] - reps[lo][m]) / (hi - lo)) for m in metrics}
            out["per_op"].append({"label": label, "swizzle": swz, "major": major,
                                  "per_op": {k: v for k, v in diff.items() if v}})
    return out


def measure(cubin_path, base, out_dir, ncu="ncu", seconds=60, log=print):
    """Run the target under ncu; writes counters.json (per launch, and the per-op differences)."""
    t0 = time.time()
    query = _query(ncu)
    metrics = choose_metrics(query)
    log(f"counters: {len(metrics)} metrics ({'from ncu --query-metrics' if query else 'fixed list: no query'})")
    with open(os.path.join(out_dir, "ncu_query_metrics.txt"), "w") as f:
        f.write(query)
    csv_path = os.path.join(out_dir, "counters_ncu.csv")
    rows, rc, err = [], 0, ""
    for attempt in (metrics, [ncu_csv.LD, ncu_csv.ST, ncu_csv.ALL]):
        left = seconds - (time.time() - t0)
        if left < 10:
            break
        cmd = [ncu, "--csv", "--clock-control", "none", "--cache-control", "none",
               "--kernel-name", "regex:^desc_probe_", "--metrics", ",".join(attempt), "--log-file", csv_path,
               sys.executable, "-m", "gpu_check.descriptors.counters", "--target", cubin_path, str(base)]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=left)
            rc, err = p.returncode, (p.stdout + p.stderr)[-3000:]
        except subprocess.TimeoutExpired:
            rc, err = 124, "timed out"
        text = open(csv_path).read() if os.path.exists(csv_path) else ""
        rows = ncu_csv.parse(text)
        log(f"counters: ncu with {len(attempt)} metrics: exit {rc}, {len(rows)} launches "
            f"({time.time() - t0:.0f} s)")
        if rows:
            metrics = attempt
            break
    result = {"command": "ncu ... " + " ".join(metrics[:3]) + " ...", "metrics": metrics, "exit": rc,
              "log_tail": err, **per_op(rows, metrics)}
    with open(os.path.join(out_dir, "counters.json"), "w") as f:
        json.dump(result, f, indent=1)
    for x in result["per_op"]:
        shown = ", ".join(f"{k.split('__')[1][:40]}={v:g}" for k, v in list(x["per_op"].items())[:6])
        log(f"counters: {x['label']} {x['swizzle']} {x['major']}: per op {shown or 'no counter moves'}")
    return result


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m gpu_check.descriptors.counters")
    ap.add_argument("--target", nargs=2, metavar=("CUBIN", "BASE"), required=True)
    a = ap.parse_args(argv)
    target(a.target[0], int(a.target[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
