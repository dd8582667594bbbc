"""First-run times: how long a user waits the first time each compiled piece runs.

    python benchmarks/bench_first_run.py [--runs 3] [--only query,ptx,banks,mma] [--json]

Every measurement is a fresh Python process, importing this checkout's layoutsim (PYTHONPATH:
the installed `layoutsim` script would import the checkout pip installed). Python's compiled
modules count: a checkout with no __pycache__ (PYTHONDONTWRITEBYTECODE=1 in the environment)
pays about 0.3 s compiling them in every process; `python -m compileall -q layoutsim` first. "cold" points NUMBA_CACHE_DIR at a new, empty
folder (the first call after `pip install`); "warm" repeats the call with the cache the cold
run left (every later process). Printed per case: min / median / max wall seconds over --runs,
and the CPU seconds of the median run (compilation is single-threaded, so on a shared machine
CPU time is the steadier figure).

Cases:
  query              `layoutsim query mma.m16n8k16.f32.f16.f16.f32 --operand C --lane 13`, the
                     whole process (target, issue 14: under 0.25 s); numba is never imported.
                     The script is the one installed beside this interpreter (a version
                     manager's shim on PATH, e.g. pyenv's, adds its own 0.1 s); "python
                     startup" is `python -c pass`, the part of it no layoutsim change can cut
  ptx --help         `layoutsim ptx run --help`, the whole process: the CLI's start-up
  ptx <case>         `layoutsim ptx run` of a Triton corpus launch (tests/data/triton_corpus:
                     vector_add, flaggems_sum_2), the whole process (target, issue 26: a first
                     answer in 0.3 s for kernels under 10^5 warp-instructions, CLI start-up
                     included); "cold" runs a PTX no process has seen (the committed one with a
                     comment line of its own appended: a new SHA-256) with an empty
                     $LAYOUTSIM_CACHE, so ptxas + nvdisasm lower it; "warm" runs it again with
                     the lowering that run cached
  banks serial       first wavefronts_batch(engine="numba") of 4 accesses (ld.shared.v4.b32)
  banks parallel     first batch of 60,000 accesses (the parallel kernel)
  banks auto         first wavefronts_batch of 1,000 accesses with the default engine (numpy)
  numba floor        numba's import and its first compile of a one-line function: the part of
                     every mma and banks first call no layoutsim change can cut
  mma <path>         first layoutsim.mma of one instruction per kernel path: f16, f16 with an
                     Inf (the batch also takes the general path: what a first batch holding an
                     Inf or NaN compiles), bf16, tf32,
                     fp8 (mma.sync: the f16 path on sm_90), fp8 (wgmma: native), f64, int,
                     and AMD's f16 forms: wmma gfx11 and gfx12 (the scalar general path, each
                     with its steps), mfma gfx942 (the CDNA model) (target, issue 26: 2 s
                     each with an empty cache; issue 14's was 5 s)
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

GROUPS = ("query", "ptx", "banks", "mma")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# `layoutsim ptx run` of Triton corpus launches: the manifest's grid/block/shared bytes, the
# kernel's arguments then its two scratch pointers (u64:0)
PTX_CASES = {
    "vector_add": ["--kernel", "vector_add", "--grid", "4", "--block", "128", "--arg", "arange:f32:1024",
                   "--arg", "arange:f32:1024", "--arg", "zeros:f32:1024", "--arg", "i32:1000"],
    "flaggems_sum_2": ["--kernel", "sum_kernel_2", "--grid", "1", "--block", "128", "--shared-bytes", "8",
                       "--arg", "arange:f32:64", "--arg", "zeros:f32:1", "--arg", "i32:64"],
}
MMA = {
    "f16": ("mma.m16n8k16.f32.f16.f16.f32", "sm_90"),
    "f16 with an Inf": ("mma.m16n8k16.f32.f16.f16.f32", "sm_90", "inf"),
    "bf16": ("mma.m16n8k16.f32.bf16.bf16.f32", "sm_90"),
    "tf32": ("mma.m16n8k8.f32.tf32.tf32.f32", "sm_90"),
    "fp8 mma.sync": ("mma.m16n8k32.f32.e4m3.e4m3.f32", "sm_90"),
    "fp8 wgmma": ("wgmma.m64n8k32.f32.e4m3.e4m3", "sm_90"),
    "f64": ("mma.m8n8k4.f64.f64.f64.f64", "sm_90"),
    "int": ("mma.m16n8k32.s32.s8.s8.s32", "sm_90"),
    "wmma gfx11": ("v_wmma_f32_16x16x16_f16.w32.gfx11", "gfx1100"),
    "wmma gfx12": ("v_wmma_f32_16x16x16_f16.w32.gfx12", "gfx1200"),
    "mfma gfx942": ("v_mfma_f32_16x16x16_f16", "gfx942"),
}

# a child process: the first call of one case, timed from just before the call
CHILD_MMA = """
import json, sys, time
import numpy as np
import layoutsim
from layoutsim.formats import encode, raw_dtype
name, arch, special = sys.argv[1], sys.argv[2], sys.argv[3:] == ["inf"]
inst = layoutsim.get(name)
M, N, K = inst.shape
rng = np.random.default_rng(0)
def bits(fmt, shape):                      # small normal numbers' raw bits, never NaN/Inf
    if fmt in ("s8", "u8", "s32"):
        return rng.integers(0, 8, shape).astype(raw_dtype(fmt))
    return encode(fmt, rng.integers(-4, 5, shape).astype(np.float64) / 4)
a, b = bits(inst.formats["a"], (8, M, K)), bits(inst.formats["b"], (8, K, N))
c = bits(inst.formats.get("c", inst.formats["d"]), (8, M, N))
if special:                                # one Inf: that instance takes the general path
    a[0, 0, 0] = encode(inst.formats["a"], np.array([np.inf]))[0]
c0, t0 = time.process_time(), time.perf_counter()
layoutsim.mma(inst, a, b, c, arch=arch, raw=True)
print(json.dumps({"wall": time.perf_counter() - t0, "cpu": time.process_time() - c0}))
"""

# numba's own share of any first call: its import and the first compile of a one-line function
CHILD_FLOOR = """
import json, time
c0, t0 = time.process_time(), time.perf_counter()
from numba import njit
njit(lambda x: x + 1)(1)
print(json.dumps({"wall": time.perf_counter() - t0, "cpu": time.process_time() - c0}))
"""

CHILD_BANKS = """
import json, sys, time
import numpy as np
from layoutsim import banks
n, engine = int(sys.argv[1]), sys.argv[2]
offs = np.tile(np.arange(32) * 16, (n, 1))
c0, t0 = time.process_time(), time.perf_counter()
banks.wavefronts_batch("ld.shared.v4.b32", offs, engine=engine)
print(json.dumps({"wall": time.perf_counter() - t0, "cpu": time.process_time() - c0}))
"""


def _child(code, args, cache):
    env = _here(dict(os.environ, NUMBA_CACHE_DIR=cache))
    p = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env)
    if p.returncode:
        raise SystemExit(f"bench_first_run: child failed: {p.stderr.strip().splitlines()[-1]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def _cold_warm(code, args, runs):
    cold, warm = [], []
    for _ in range(runs):
        cache = tempfile.mkdtemp(prefix="bench-first-run-")
        try:
            cold.append(_child(code, args, cache))
            warm.append(_child(code, args, cache))
        finally:
            shutil.rmtree(cache, ignore_errors=True)
    return cold, warm


def _here(env=None):
    """env with this checkout's layoutsim first on the path: the installed `layoutsim` script
    imports the package pip installed (an editable install of another checkout, from a
    worktree), not the one this script sits in."""
    env = dict(os.environ if env is None else env)
    env["PYTHONPATH"] = os.pathsep.join([ROOT] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    return env


def _query(runs, cmd=None, env=None):
    env = _here(env)
    if cmd is None:
        cmd = _cli() + ["query", "mma.m16n8k16.f32.f16.f16.f32", "--operand", "C", "--lane", "13"]
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        c0 = os.times()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env)
        c1 = os.times()
        out.append({"wall": time.perf_counter() - t0,
                    "cpu": (c1.children_user - c0.children_user) + (c1.children_system - c0.children_system)})
    return out


def _cli():
    exe = os.path.join(os.path.dirname(sys.executable), "layoutsim")
    exe = exe if os.path.exists(exe) else shutil.which("layoutsim")
    return [exe] if exe else [sys.executable, "-m", "layoutsim.cli"]


def _ptx_case(case, runs):
    """(cold, warm) samples of `layoutsim ptx run` of one Triton corpus launch."""
    import gzip
    with open(os.path.join(ROOT, "tests", "data", "triton_corpus", "ptx", f"{case}.ptx.gz"), "rb") as f:
        ptx = gzip.decompress(f.read()).decode()
    args = PTX_CASES[case] + ["--arg", "u64:0", "--arg", "u64:0", "--arch", "sm_90a", "--quiet"]
    cold, warm = [], []
    for _ in range(runs):
        work = tempfile.mkdtemp(prefix="bench-first-run-")
        try:
            path = os.path.join(work, f"{case}.ptx")
            with open(path, "w") as f:
                f.write(ptx + f"// bench_first_run {os.getpid()} {time.time_ns()}\n")   # a new SHA-256
            env = dict(os.environ, LAYOUTSIM_CACHE=os.path.join(work, "cache"))
            cold += _query(1, _cli() + ["ptx", "run", path] + args, env)
            warm += _query(1, _cli() + ["ptx", "run", path] + args, env)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return cold, warm


def _stats(samples):
    walls = sorted(s["wall"] for s in samples)
    med = statistics.median(walls)
    cpu = statistics.median(s["cpu"] for s in samples)
    return {"min": walls[0], "median": med, "max": walls[-1], "cpu_median": cpu, "runs": len(walls)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", default=",".join(GROUPS), help=f"comma-separated: {', '.join(GROUPS)}")
    ap.add_argument("--paths", help=f"mma paths (default all): {', '.join(MMA)}")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.runs < 1:
        ap.error("--runs: give at least 1")
    only = {s.strip() for s in args.only.split(",")}
    paths = [p.strip() for p in args.paths.split(",")] if args.paths else list(MMA)
    for option, given, known in (("--only", only, GROUPS), ("--paths", paths, MMA)):
        if set(given) - set(known):
            ap.error(f"{option}: unknown {', '.join(sorted(set(given) - set(known)))}; choose from "
                     f"{', '.join(known)}")
    results = {}
    load0 = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    if "query" in only:
        results["query"] = {"cold": _stats(_query(args.runs)), "target": 0.25}
        results["python startup"] = {"cold": _stats(_query(args.runs, [sys.executable, "-c", "pass"]))}
    if "ptx" in only:
        results["ptx --help"] = {"cold": _stats(_query(args.runs, _cli() + ["ptx", "run", "--help"])), "target": 0.3}
        for case in PTX_CASES:
            cold, warm = _ptx_case(case, args.runs)
            results[f"ptx {case}"] = {"cold": _stats(cold), "warm": _stats(warm), "target": 0.3}
    if "banks" in only:
        for label, n, engine in (("banks serial", 4, "numba"), ("banks parallel", 60000, "numba"),
                                 ("banks auto", 1000, "auto")):
            cold, warm = _cold_warm(CHILD_BANKS, [str(n), engine], args.runs)
            results[label] = {"cold": _stats(cold), "warm": _stats(warm)}
    if "mma" in only:
        cold, _ = _cold_warm(CHILD_FLOOR, [], args.runs)
        results["numba floor"] = {"cold": _stats(cold)}
        for path in paths:
            name, arch, *special = MMA[path]
            cold, warm = _cold_warm(CHILD_MMA, [name, arch, *special], args.runs)
            results[f"mma {path}"] = {"instruction": name, "cold": _stats(cold), "warm": _stats(warm),
                                      "target": 2.0}
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    if args.json:
        print(json.dumps({"cpus": os.cpu_count(), "load_average_start": load0, "load_average": load,
                          "results": results}, indent=1))
        return
    print(f"first-run times, {args.runs} fresh processes per case; {os.cpu_count()} CPUs, load average "
          f"{load0:.2f} at the start, {load:.2f} at the end (wall s: min / median / max; cpu s of the "
          f"median)")
    for label, r in results.items():
        for kind in ("cold", "warm"):
            if kind not in r:
                continue
            s = r[kind]
            target = f"  (target < {r['target']} s)" if "target" in r and kind == "cold" else ""
            print(f"  {label:<18} {kind:<4} {s['min']:7.2f} {s['median']:7.2f} {s['max']:7.2f}   "
                  f"cpu {s['cpu_median']:6.2f}{target}")


if __name__ == "__main__":
    main()
