"""Measure CUB's device-wide algorithms on the GPU (one command, about two minutes):

    python -m gpu_check.realworld.cub_measure --out DIR [--binary build/cub_launches/cub_launches] [--ncu-runs 5]

runs the capture program (gpu_check.realworld.cub_build built it from the pip package's headers;
carry build/cub_launches to the GPU machine) once with CUB_CAPTURE_DIR set: every kernel launch
the algorithms make is recorded with its parameters and the bytes of every allocation they point
into, before and after (capture.cpp). Then the program runs --ncu-runs times under Nsight Compute
without the recorder, each launch's shared ld/st wavefronts and global ld/st requests and sectors
(gpu_check.kernel_corpus.ncu.BASE) kept from every run: some totals vary from run to run.

Writes DIR/capture.json (the launches, the GPU, the ncu values: "ncu_runs"[run][launch]) and
DIR/capture.npz (the allocations' bytes; gpu_check/realworld/cub_capture.py), and DIR/ncu_<k>.csv
(ncu's own output). Copy DIR/capture.json and DIR/capture.npz into tests/data/realworld/cub/;
tests/gpu_check/test_realworld_cub_replay.py replays them. Exit 0 when the capture worked (ncu
problems are listed in capture.json's "problems"), 2 when it did not (one line).
"""
import argparse
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from gpu_check.bank_probe import ncu_csv
from gpu_check.kernel_corpus import corpus as C, ncu as N
from gpu_check.needs import gpu_name

from .cub_build import BINARY_DIR, DATA, PACKAGE, PTX
from .cub_capture import read_capture



def ptx_check(binary):
    """Whether the program's embedded PTX (cuobjdump -ptx) is the committed PTX, statement for
    statement (comments and blank space aside): the kernels the GPU ran are the ones replayed."""
    tool = shutil.which("cuobjdump")
    if tool is None:
        return "cuobjdump not found"
    r = subprocess.run([tool, "-ptx", str(binary)], capture_output=True, text=True, timeout=120)

    def norm(text):
        text = text[text.find(".version"):]
        return [re.sub(r"\s+", " ", x.strip()) for x in text.splitlines() if x.strip() and not x.strip().startswith("//")]
    committed = gzip.decompress((DATA / PTX).read_bytes()).decode()
    return "same" if r.returncode == 0 and norm(r.stdout) == norm(committed) else "differs"


def capture(binary, work, timeout):
    env = dict(os.environ, CUB_CAPTURE_DIR=str(work))
    r = subprocess.run([str(binary)], capture_output=True, text=True, timeout=timeout, env=env)
    if r.returncode:
        raise RuntimeError(f"{binary} exited {r.returncode}: {(r.stderr or r.stdout).strip()[-300:]}")
    return r.stdout + r.stderr


def ncu_runs(binary, records, out, runs, timeout, log):
    """[[{metric: value} | None per launch] per run], problems."""
    ncu = N.ncu_path()
    if ncu is None:
        return [], ["ncu not found"]
    env = {k: v for k, v in os.environ.items() if k != "CUB_CAPTURE_DIR"}
    all_runs, problems = [], []
    for k in range(runs):
        csv_path = Path(out) / f"ncu_{k}.csv"
        cmd = [ncu, "--csv", "--clock-control", "none", "--cache-control", "none", "--metrics", ",".join(N.BASE),
               "--log-file", str(csv_path), str(binary)]
        t0 = time.time()
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
            rc, err = r.returncode, r.stderr[-400:]
        except subprocess.TimeoutExpired:
            rc, err = 124, f"timed out after {timeout} s"
        rows = ncu_csv.parse(csv_path.read_text()) if csv_path.is_file() else []
        if rc:
            problems.append(f"ncu run {k} exited {rc}: {err}")
        launches = [{"kernel": rec["kernel"]} for rec in records]
        all_runs.append(N.assign(launches, rows, problems))
        log(f"ncu run {k}: {len(rows)} launches in {time.time() - t0:.0f} s")
    return all_runs, problems


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m gpu_check.realworld.cub_measure", description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="the folder for capture.json, capture.npz and ncu's csv")
    ap.add_argument("--binary", default=str(BINARY_DIR / "cub_launches"), help="the capture program (cub_build)")
    ap.add_argument("--ncu-runs", type=int, default=5, help="runs under ncu (default 5; 0: none)")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds one run may take (default 120)")
    args = ap.parse_args(argv)
    binary, out = Path(args.binary), Path(args.out)
    if not binary.is_file():
        print(f"cub_measure: {binary} is missing: python -m gpu_check.realworld.cub_build, then carry "
              f"{BINARY_DIR.relative_to(BINARY_DIR.parents[1])}", file=sys.stderr)
        return 2
    if not 0 <= args.ncu_runs <= 20:
        print(f"cub_measure: --ncu-runs {args.ncu_runs}: give 0 to 20", file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    work = Path(tempfile.mkdtemp(prefix="cub-capture-"))
    try:
        printed = capture(binary, work, args.timeout)
        records, store = read_capture(work)
    except (RuntimeError, OSError, ValueError, subprocess.TimeoutExpired) as e:
        print(f"cub_measure: the capture failed: {str(e).splitlines()[0] if str(e) else type(e).__name__}",
              file=sys.stderr)
        return 2
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"captured {len(records)} launches in {time.time() - t0:.0f} s")
    runs, problems = ncu_runs(binary, records, out, args.ncu_runs, args.timeout, print)
    doc = {"package": PACKAGE, "ptx": PTX, "gpu": gpu_name(), "ptx_check": ptx_check(binary), "date": time.strftime("%Y-%m-%d", time.gmtime()),
           "program_output": printed[-2000:], "metrics": list(N.BASE), "launches": records,
           "blobs": store.index, "ncu_runs": runs, "problems": problems}
    C.write_atomic(out / "capture.json", json.dumps(doc, indent=1) + "\n")
    C.write_atomic(out / "capture.npz", C.npz_bytes(store.arrays))
    size = (out / "capture.json").stat().st_size + (out / "capture.npz").stat().st_size
    print(f"wrote {out}/capture.json and capture.npz ({size} bytes) in {time.time() - t0:.0f} s; "
          f"{len(problems)} ncu problems; copy both into {DATA}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
