"""Cold `layoutsim query` time: process start to output, median of N runs.

    python benchmarks/bench_query_startup.py [--runs 20]

Uses the installed `layoutsim` console script when present (what users run), otherwise
`python -m layoutsim.cli`. Target (issue 2): under 0.3 s.
"""
import argparse
import shutil
import statistics
import subprocess
import sys
import time

QUERY = ["query", "mma.m16n8k16.f32.f16.f16.f32", "--operand", "C", "--lane", "13"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()
    exe = shutil.which("layoutsim")
    cmd = [exe] + QUERY if exe else [sys.executable, "-m", "layoutsim.cli"] + QUERY
    times = []
    for _ in range(args.runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - t0)
    print(f"command: {' '.join(cmd)}")
    print(f"cold query over {args.runs} runs: median {statistics.median(times):.3f} s, "
          f"min {min(times):.3f} s, max {max(times):.3f} s (target < 0.300 s)")


if __name__ == "__main__":
    main()
