"""Do wgmma operand reads and TMA writes show up in the shared-memory counters? Measured by
difference: the same probe launched with `repeat` 1 and 33 under Nsight Compute; (m33 - m1) / 32
is what one wgmma (or one TMA box) adds to counter m, whatever the kernel's own fill traffic.

    ncu --csv --clock-control none --cache-control all --kernel-name regex:^desc_probe_
        --metrics <METRICS> python -m gpu_check.descriptors.counters --target CUBIN BASE [--ops tma]

The first H200 run (2026-12-01, repeats 1 and 5) showed why the difference must be large and come
with its noise: ncu collects many metrics over several replays of a launch, and the fill's
shared-memory store wavefronts (l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st) varied from
replay to replay (2086..2263 for the same 454 STS.128, whose addresses cannot conflict) while the
instruction counts stayed fixed -- conflicts beyond the addresses (arbitration with the fill's
global loads in the L1 data banks is the suspect: l1tex__data_bank_conflicts_type_arbitration is
collected now). So every per-op value comes with `noise`: the spread of that counter over the
repeat-1 launches of its kind, divided by the repeat difference; `moves` says the value exceeds it.

The metrics (all listed by ncu 2025.3 --query-metrics for GH100): the bank probe's LSU counters,
the GMMA ones (wavefronts, conflicts, bytes), the TMA ones (instructions, bytes read from global,
pipe activity), the bank reads/writes of the L1 data array, and the arbitration conflicts.

The second run (2026-12-01 08:19 UTC) measured the four 2-D TMA boxes (64 rows of the swizzle
span, 2 B elements, at (0, 0)): per box exactly one TMA instruction, the box's bytes read from
global (and bytes / 32 sectors), 2 TMA pipe cycles, l1tex__data_bank_writes = box bytes / 4, and
nothing in any LSU shared-memory wavefront counter. TMA_BOXES adds a 1-byte box with an odd row
count, a 3-D box and a 128B box at a nonzero innermost coordinate, to see whether that holds
beyond them.
"""
import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import asdict

import numpy as np

from layoutsim.files import write_atomic

from ..bank_probe import ncu_csv

METRICS = (ncu_csv.LD, ncu_csv.ST, ncu_csv.ALL,
           "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
           "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
           "l1tex__data_bank_reads.sum", "l1tex__data_bank_writes.sum",
           "smsp__inst_executed_op_shared_ld.sum", "smsp__inst_executed_op_shared_st.sum",
           "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma.sum",
           "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_gmma.sum",
           "l1tex__lsuin_requests_op_gmma.sum",
           "smsp__sass_data_bytes_mem_shared_op_gmma.sum",
           "l1tex__data_pipe_lsu_wavefronts_mem_shared_cmd_read.sum",
           "l1tex__data_pipe_lsu_wavefronts_mem_shared_cmd_write.sum",
           "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_misc.sum",
           "l1tex__data_bank_conflicts_type_arbitration.sum",
           "smsp__inst_executed_op_tma_ld.sum",
           "l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld.sum",
           "l1tex__m_xbar2l1tex_read_sectors_pipe_tma.sum",
           "sm__pipe_tma_cycles_active.sum")
REPEATS = (1, 33)
OPS = ("all", "tma")


def tma_boxes():
    """(label, plan.TmaCase) of the TMA launches: the second run's four 2-D boxes, then three more
    shapes (innermost coordinates on 16 bytes, plan.COORD_ALIGN)."""
    from layoutsim import smem
    from .plan import TmaCase
    out = []
    for name in smem.MODES:
        span = smem.mode(name).span if name != "none" else 128
        out.append(("TMA 2-D box, 64 rows", TmaCase((span // 2, 64), 2, name, 0, (0, 0), (span // 2, 64))))
    out.append(("TMA 2-D box, 1 B, 13 rows", TmaCase((32, 13), 1, "32B", 0, (16, 3), (48, 20))))
    out.append(("TMA 3-D box", TmaCase((32, 5, 3), 2, "64B", 0, (0, 1, 2), (40, 9, 6))))
    out.append(("TMA 2-D box, 128B, inner offset", TmaCase((64, 16), 2, "128B", 0, (8, 4), (72, 24))))
    return out


def launches(ops="all"):
    """(label, wgmma entry or None for TMA, operand under test (the TmaCase for TMA), swizzle,
    major, repeat), in the order the target launches them; `ops` "tma": the TMA ones only."""
    from layoutsim import smem
    out = []
    if ops == "all":
        for name in smem.MODES:
            for major in ("K", "MN"):
                for r in REPEATS:
                    out.append(("wgmma B (RS)", "wgmma.m64n128k16.f32.f16.f16", "B", name, major, r))
        for name in ("none", "128B"):
            for r in REPEATS:
                out.append(("wgmma A+B (SS)", "wgmma.m64n16k16.f32.f16.f16", "A", name, "K", r))
    for label, case in tma_boxes():
        for r in REPEATS:
            out.append((label, None, case, case.swizzle, "box", r))
    return out


def target(cubin_path, base, ops="all"):
    """Run under ncu: every launch of launches(ops), one case, one block."""
    import layoutsim.smem as smem
    from ..backends.cuda import CudaBackend
    from . import run
    from .kernels import Probe
    from .lab import CudaLab
    lab = CudaLab(CudaBackend(), open(cubin_path, "rb").read())
    for label, entry, under, swz, major, rep in launches(ops):
        if entry is None:
            case = under
            g = (np.arange(int(np.prod(case.gdims)), dtype=np.uint32) % (1 << 8 * case.elem_bytes)).astype(
                f"<u{case.elem_bytes}").reshape(case.gdims[::-1])
            lab.tma(case, g, run.tma_region(case), repeat=rep)
            continue
        probe = Probe(entry, under, major == "MN")
        mn, k = (probe.instr.shape[1] if under == "B" else 64), probe.instr.shape[2]
        d = smem.Descriptor.dense(base + 8192, mn, k, 16, swz, major).encode()
        pairs = run.desc_pairs(probe, base, [d])
        lab._wgmma(probe, pairs, run.image(probe, 0, base), run.a_registers(probe), 1, rep, 1)
    print("COUNTERS_TARGET done", flush=True)


def per_op(rows, metrics, ops="all"):
    """{"launches": rows labelled by launches(), "per_op": [{label, swizzle, major, per_op: {metric:
    {"value": (m[hi] - m[lo]) / (hi - lo), "noise": spread / (hi - lo), "moves": bool}}}]} from
    ncu_csv.parse rows (launch order = launches() order). The spread of a metric is max - min over
    the repeat-lo launches of the same kernel, which all do the same fill."""
    out = {"launches": [], "per_op": []}
    for (label, entry, under, swz, major, rep), row in zip(launches(ops), rows):
        out["launches"].append({"label": label, "entry": entry, "swizzle": swz, "major": major, "repeat": rep,
                                "kernel": row["kernel"], "metrics": row["metrics"]})
        if entry is None:                                   # the TMA box, as the plan records boxes
            out["launches"][-1]["box"] = asdict(under)
    lo, hi = REPEATS
    spread = {}
    for kernel in {x["kernel"] for x in out["launches"]}:
        base = [x["metrics"] for x in out["launches"] if x["repeat"] == lo and x["kernel"] == kernel]
        for m in metrics:
            vals = [b[m] for b in base if b.get(m) is not None and np.isfinite(b[m])]
            spread[kernel, m] = (max(vals) - min(vals)) if vals else 0.0
    by = {}
    for x in out["launches"]:
        by.setdefault((x["label"], x["swizzle"], x["major"]), {})[x["repeat"]] = x
    for (label, swz, major), reps in by.items():
        if lo not in reps or hi not in reps:
            continue
        kernel = reps[lo]["kernel"]
        reps = {r: x["metrics"] for r, x in reps.items()}
        diff = {}
        for m in metrics:
            a, b = reps[lo].get(m), reps[hi].get(m)
            if a is None or b is None or not (np.isfinite(a) and np.isfinite(b)):
                continue
            value, noise = (b - a) / (hi - lo), spread[kernel, m] / (hi - lo)
            diff[m] = {"value": value, "noise": noise, "moves": abs(value) > noise + 1e-9}
        out["per_op"].append({"label": label, "swizzle": swz, "major": major, "per_op": diff})
    return out


def measure(cubin_path, base, out_dir, ncu="ncu", seconds=60, log=print, ops="all"):
    """Run the target under ncu; writes counters.json (per launch, and the per-op differences)."""
    t0 = time.time()
    csv_path = os.path.join(out_dir, "counters_ncu.csv")
    rows, rc, err, metrics = [], 0, "", list(METRICS)
    for attempt in (list(METRICS), [ncu_csv.LD, ncu_csv.ST, ncu_csv.ALL]):
        left = seconds - (time.time() - t0)
        if left < 10:
            break
        cmd = [ncu, "--csv", "--clock-control", "none", "--cache-control", "all",
               "--kernel-name", "regex:^desc_probe_", "--metrics", ",".join(attempt), "--log-file", csv_path,
               sys.executable, "-m", "gpu_check.descriptors.counters", "--target", cubin_path, str(base),
               "--ops", ops]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=left)
            rc, err = p.returncode, (p.stdout + p.stderr)[-3000:]
        except subprocess.TimeoutExpired:
            rc, err = 124, "timed out"
        text = open(csv_path).read() if os.path.exists(csv_path) else ""
        rows = ncu_csv.parse(text)
        log(f"counters: ncu with {len(attempt)} metrics: exit {rc}, {len(rows)} of {len(launches(ops))} launches "
            f"({time.time() - t0:.0f} s)")
        if rows:
            metrics = attempt
            break
    result = {"command": " ".join(["ncu", "--csv", "--clock-control", "none", "--cache-control", "all",
                                   "--kernel-name", "regex:^desc_probe_", "--metrics", ",".join(metrics),
                                   "python", "-m", "gpu_check.descriptors.counters", "--target", "CUBIN", str(base),
                                   "--ops", ops]),
              "metrics": metrics, "repeats": list(REPEATS), "ops": ops, "exit": rc, "log_tail": err,
              **per_op(rows, metrics, ops)}
    write_atomic(os.path.join(out_dir, "counters.json"), json.dumps(result, indent=1), "counters")
    for line in summary(result):
        log(line)
    return result


def _short(x):
    if x["label"].startswith("TMA"):
        return f"[{x['label']}, {x['swizzle']}]"
    return f"{x['label'].split()[0]}{'(SS)' if 'SS' in x['label'] else ''} {x['swizzle']} {x['major']}"


def summary(result):
    """Log lines: per metric that moves anywhere, its per-op value per launch label."""
    lines = []
    for m in result["metrics"]:
        vals = [(x, x["per_op"][m]) for x in result["per_op"] if m in x["per_op"]]
        if not any(v["moves"] for _, v in vals):
            continue
        shown = ", ".join(f"{_short(x)}={v['value']:g}" for x, v in vals)
        lines.append(f"counters: {m}: per op {shown} (noise <= {max(v['noise'] for _, v in vals):.2g})")
    quiet = [m.split("__")[1] for m in result["metrics"]
             if not any(x["per_op"].get(m, {}).get("moves") for x in result["per_op"])]
    if result["per_op"]:
        lines.append(f"counters: within noise for every op: {', '.join(quiet) or 'none'}")
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m gpu_check.descriptors.counters")
    ap.add_argument("--target", nargs=2, metavar=("CUBIN", "BASE"), required=True)
    ap.add_argument("--ops", choices=OPS, default="all")
    a = ap.parse_args(argv)
    target(a.target[0], int(a.target[1]), a.ops)
    return 0


if __name__ == "__main__":
    sys.exit(main())
