"""The encoding of shared::cta and shared::cluster addresses on the GPU (issues 24 and 27).

    python -m gpu_check.clusters.addresses --out DIR

Runs gpu_check/clusters/cluster_addr.sm_90.ptx (hand-written; what each of its 16 words is, in its
header) on the cluster shapes of CASES and writes DIR/addresses.npz (the 16 words of every CTA of
case NAME under NAME) and DIR/addresses.json (device, driver, date, the cases; each case's "errors"
maps a word that faulted, or was not run, to the error). Words 0-6 and 13-15 (mov/cvta/mapa/
getctarank/special registers) are one launch (sel = 0); each risky word w of 7-12 (loads through
addresses built by hand, the red at rank field 0) is a launch of its own (sel = 1 << w), since one of
them was an illegal instruction on an H100 and a fault kills the CUDA context: every launch runs in a
child process (`--child`, a fresh context), and a child that faults is replaced by a new one for the
launches left. The whole run stops launching after BUDGET_S seconds. The executor's replay
(tests/ptx/test_ptx_cluster_addr.py) must give the same bytes, and fault where the GPU faulted.
Commit the two files under tests/data/clusters/addresses/. The launch is measure.py's
(cuLaunchKernelEx with the cluster attribute); nothing else is needed but pycuda and the driver.
"""
import argparse
import datetime
import json
import os
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from layoutsim.files import source_tree

ROOT = source_tree()
PTX = "gpu_check/clusters/cluster_addr.sm_90.ptx"      # relative to the repository root
KERNEL, ARCH, WORDS = "cluster_addr", "sm_90", 16
SAFE, RISKY = (0, 1, 2, 3, 4, 5, 6, 13, 14, 15), (7, 8, 9, 10, 11, 12)
SELS = (0,) + tuple(1 << w for w in RISKY)             # the launches of a case: the safe words, each risky word
# (name, grid, cluster shape or None: no cluster attribute)
CASES = (("pair_2", (4, 1, 1), (2, 1, 1)), ("ranks_4", (8, 1, 1), (4, 1, 1)), ("square_2x2", (4, 2, 1), (2, 2, 1)),
         ("ranks_8", (8, 1, 1), (8, 1, 1)), ("none", (2, 1, 1), None))
BLOCK = (32, 1, 1)
BUDGET_S, CHILD_S = 50.0, 20.0
COMMAND = "python -m gpu_check.clusters.addresses --out DIR"


def buffer(grid):
    """The case's output buffer (zeros): 16 words per CTA."""
    return np.zeros(int(np.prod(grid)) * WORDS, np.uint32)


def words_of(sel):
    """The words launch `sel` records (SAFE for 0, else the one risky word)."""
    return SAFE if sel == 0 else (int(sel).bit_length() - 1,)


def _child(jobs, into):
    """In a fresh pycuda context: run the jobs ("NAME:SEL") in order, appending one JSON line each to
    `into` (the first line: the device); stop at the first error (the context is then dead)."""
    import pycuda.autoinit  # noqa: F401  (the context)
    import pycuda.driver as drv
    from gpu_check.descriptors import driver as D
    from .measure import launch_ex
    shapes = {name: (grid, cluster) for name, grid, cluster in CASES}
    with open(into, "a") as f:
        def put(rec):
            f.write(json.dumps(rec) + "\n")
            f.flush()
        put({"device": drv.Device(0).name(), "driver": drv.get_driver_version()})
        kernel = D.Kernel((ROOT / PTX).read_bytes() + b"\0", KERNEL)
        for job in jobs:
            name, sel = job.split(":")
            grid, cluster = shapes[name]
            try:
                host = buffer(grid)
                dev = drv.mem_alloc(host.nbytes)
                drv.memcpy_htod(dev, host)
                launch_ex(kernel, [struct.pack("<Q", int(dev)), struct.pack("<I", int(sel))], grid, BLOCK, cluster)
                drv.Context.synchronize()
                drv.memcpy_dtoh(host, dev)
                dev.free()
                put({"job": job, "values": [int(v) for v in host]})
            except Exception as e:                      # noqa: BLE001  (the GPU's error is the record)
                put({"job": job, "error": f"{type(e).__name__}: {e}"})
                os._exit(0)                             # a dead context: no teardown


def spawn(jobs, timeout):
    """Run `jobs` in a child process; its records (dicts) and, if it died or hung before finishing,
    why (str, else None)."""
    with tempfile.TemporaryDirectory() as tmp:
        into = Path(tmp) / "records.jsonl"
        into.write_text("")
        cmd = [sys.executable, "-m", "gpu_check.clusters.addresses", "--child", ",".join(jobs), "--into", str(into)]
        why = None
        try:
            p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
            if p.returncode:
                why = f"child exited {p.returncode}: {p.stderr.strip()[-300:]}"
        except subprocess.TimeoutExpired:
            why = f"no answer within {timeout:.0f} s (a hang?)"
        recs = [json.loads(line) for line in into.read_text().splitlines() if line.strip()]
    return recs, why


def measure(jobs, budget=BUDGET_S):
    """{job: record} of every job, each launch in a fresh context, children started until all jobs
    have a record or the budget is spent; and the device record."""
    got, device, t0 = {}, {}, time.monotonic()
    while True:
        left = [j for j in jobs if j not in got]
        remaining = budget - (time.monotonic() - t0)
        if not left or remaining <= 1:
            break
        recs, why = spawn(left, min(CHILD_S, remaining))
        for r in recs:
            if "device" in r:
                device = r
            else:
                got[r["job"]] = r
        rest = [j for j in left if j not in got]
        if rest and (why or rest == left):          # the child died or hung in a launch: blame that launch
            got[rest[0]] = {"job": rest[0], "error": why or "no record from the child"}
        print(f"{len(got)}/{len(jobs)} launches recorded", flush=True)
    for j in jobs:
        got.setdefault(j, {"job": j, "error": f"not run: the {budget:.0f} s budget was spent"})
    return got, device


def merge(got):
    """({case: its 16 words per CTA}, {case: {word: error}}) of the launches' records."""
    arrays, errors = {}, {}
    for name, grid, _ in CASES:
        a = buffer(grid).reshape(-1, WORDS)
        errors[name] = {}
        for sel in SELS:
            rec = got[f"{name}:{sel}"]
            for w in words_of(sel):
                if "error" in rec:
                    errors[name][str(w)] = rec["error"]
                else:
                    a[:, w] = np.asarray(rec["values"], np.uint32).reshape(-1, WORDS)[:, w]
        arrays[name] = a.reshape(-1)
    return arrays, errors


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--into", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return _child(args.child.split(","), args.into)
    if not args.out:
        ap.error("--out DIR is required")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    got, device = measure([f"{name}:{sel}" for name, _, _ in CASES for sel in SELS])
    arrays, errors = merge(got)
    meta = [{"name": name, "grid": list(grid), "block": list(BLOCK), "cluster": cluster and list(cluster),
             "errors": errors[name]} for name, grid, cluster in CASES]
    for m in meta:
        print(m["name"], " ".join(f"{int(w):#x}" for w in arrays[m["name"]][:WORDS]), m["errors"] or "", flush=True)
    np.savez_compressed(out / "addresses.npz", **arrays)
    info = {"device": device.get("device"), "driver": device.get("driver"), "ptx": PTX,
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "command": COMMAND, "safe_words": list(SAFE), "risky_words": list(RISKY), "cases": meta}
    (out / "addresses.json").write_text(json.dumps(info, indent=1) + "\n")
    print("wrote", out / "addresses.npz", out / "addresses.json")


if __name__ == "__main__":
    main()
