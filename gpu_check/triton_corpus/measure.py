"""The Triton corpus on the GPU (H200), through Triton's own launcher, and under Nsight Compute.

    python -m gpu_check.triton_corpus.measure --out DIR [--wheels .triton-src] [--runs 5]

Needs: an NVIDIA GPU, torch with CUDA, Triton (the version of tests/data/triton_corpus/manifest.json),
ncu, and the wheels of registry.WHEELS in --wheels (no network). For every case of cases.py:
  1. `kernel[grid](*tensors, **meta)` (Triton compiles it on this machine and launches its cubin)
     on the case's inputs copied to the GPU (host-to-device copies only: no torch kernel runs);
     the PTX Triton compiled here is compared with the committed ptx/<case>.ptx, byte for byte;
     every array argument's final content goes to DIR/outputs.npz as "<case>/argN";
     the launch is repeated --runs times on fresh copies (the outputs must not change);
  2. the same launches under ncu (`--kernel-name` the corpus's kernels only): shared ld/st
     wavefronts and global ld/st requests and sectors of every run (DIR/results.json "runs").
DIR/results.json also records the GPU, driver, CUDA, torch and Triton versions and the date.
Runs in about a minute on an H200; writes well under 16 MiB.
"""
import argparse
import datetime
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from . import cases as C

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "data" / "triton_corpus"


def _torch_args(args):
    import torch
    return [torch.from_numpy(np.ascontiguousarray(a).copy()).cuda() if isinstance(a, np.ndarray) else a for a in args]


def child(out, wheels, runs):
    """The launches (this process is what ncu profiles): writes DIR/launch.json and outputs.npz."""
    import torch
    import triton
    record, arrays = {"triton": triton.__version__, "torch": torch.__version__, "cases": {}}, {}
    for case in C.CASES:
        kernel, source = C.kernel(case, wheels, ROOT)
        want = (CORPUS / "ptx" / f"{case}.ptx").read_text()
        first, same, rec = None, True, {"source": source}
        for run in range(runs):
            targs = _torch_args(C.inputs(case))
            compiled = kernel[C.grid(case)](*targs, **C.meta(case))
            torch.cuda.synchronize()
            finals = {f"{case}/arg{i}": t.cpu().numpy() for i, t in enumerate(targs) if hasattr(t, "data_ptr")}
            if first is None:
                first = finals
                rec["kernel"] = compiled.metadata.name
                rec["ptx_identical"] = C.code_of(compiled.asm["ptx"]) == C.code_of(want)
                if not rec["ptx_identical"]:
                    rec["ptx"] = compiled.asm["ptx"]
            else:
                same &= all(np.array_equal(first[k].view(np.uint8), finals[k].view(np.uint8)) for k in first)
        rec["outputs_repeat"] = bool(same)
        arrays.update(first)
        record["cases"][case] = rec
        print(f"{case}: {rec['kernel']} ptx identical {rec['ptx_identical']}, outputs repeat {same}", flush=True)
    np.savez_compressed(Path(out) / "outputs.npz", **arrays)
    (Path(out) / "launch.json").write_text(json.dumps(record, indent=1))


def assign_runs(record, rows, runs, problems):
    """ncu's rows (one per launch, in the child's order: each case `runs` times) -> each case's
    "runs" list of {metric: value}; a row naming another kernel stops the assignment (problems)."""
    from gpu_check.kernel_corpus import ncu as N
    planned = [{"kernel": record["cases"][c]["kernel"]} for c in C.CASES for _ in range(runs)]
    got = N.assign(planned, rows, problems)
    for k, case in enumerate(C.CASES):
        record["cases"][case]["runs"] = got[k * runs:(k + 1) * runs]


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m gpu_check.triton_corpus.measure", description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--wheels", default=str(ROOT / ".triton-src"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    if a.child:
        child(out, a.wheels, a.runs)
        return 0
    from gpu_check.bank_probe import ncu_csv
    from gpu_check.kernel_corpus import ncu as N
    cmd = [sys.executable, "-m", "gpu_check.triton_corpus.measure", "--child", "--out", str(out),
           "--wheels", a.wheels, "--runs", str(a.runs)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=900, cwd=ROOT, env=N._env())
    print(r.stdout[-4000:], r.stderr[-4000:])
    if r.returncode != 0:
        return 1
    record = json.loads((out / "launch.json").read_text())
    names = sorted({c["kernel"] for c in record["cases"].values()})
    ncu = N.ncu_path()
    problems = []
    if ncu is None:
        problems.append("ncu not found")
    else:
        prof = out / "ncu"
        prof.mkdir(exist_ok=True)
        log = prof / "ncu.csv"
        ncmd = [ncu, "--csv", "--clock-control", "none", "--cache-control", "none", "--metrics", ",".join(N.BASE),
                "--kernel-name", "regex:^(" + "|".join(names) + ")$", "--log-file", str(log),
                sys.executable, "-m", "gpu_check.triton_corpus.measure", "--child", "--out", str(prof),
                "--wheels", a.wheels, "--runs", str(a.runs)]
        q = N._run(ncmd, 900)
        if q["rc"] != 0:
            problems.append(f"ncu exited {q['rc']}: {(q['stderr'] or q['stdout'])[-600:]}")
        assign_runs(record, ncu_csv.parse(log.read_text() if log.exists() else q["stdout"]), a.runs, problems)
    record.update(problems=problems, metrics=list(N.BASE), runs=a.runs, date=datetime.date.today().isoformat(),
                  gpu=_gpu(), command="python -m gpu_check.triton_corpus.measure --out DIR")
    (out / "results.json").write_text(json.dumps(record, indent=1))
    print(f"wrote {out / 'results.json'} and {out / 'outputs.npz'}; problems: {problems or 'none'}")
    return 0


def _gpu():
    try:
        q = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                           capture_output=True, text=True, timeout=60)
        return q.stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return None


if __name__ == "__main__":
    sys.exit(main())
