"""Measure a captured group (the CUTLASS 3.x Hopper examples, about 2 minutes; ThunderKittens) on the H200:

    python -m gpu_check.realworld.hopper_measure --out DIR [--group hopper|tk] [--bin DIR] [--ncu-runs 5]

Needs the binaries hopper_build wrote (build/hopper/<example>.xz: carried, not committed; for
--group tk, tk_measure builds them first), gcc, the CUDA headers and runtime, and ncu. For each
example of the group (hopper_cases.Group.examples):
  1. gcc builds the capture shim (hopper_capture.c) and the example runs once under it
     (LD_PRELOAD) with its command line: every launch of the group's kernels (Group.match): grid, block, cluster,
     dynamic shared memory, Params bytes and tensor maps (cuTensorMapEncodeTiled's arguments and
     the 128 bytes it encoded), and each buffer the Params point to before and after the launch;
     the example's own check against its reference GEMM prints "Disposition: Passed";
  2. ncu runs it --ncu-runs times (no shim), profiling the same launches: shared ld/st
     wavefronts, global ld/st sectors and whatever else gpu_check.kernel_corpus.ncu chooses; every
     run's values are kept (some totals vary from run to run).
Writes DIR/<case>.capture.json, DIR/<case>.buffers.npz (uint8 arrays before<k>, after<k>; after<k>
only where the launch changed buffer k) for every case of the group, DIR/h200.json (device,
tools, per case the ncu runs, per example its output and problems) and DIR/raw/ (ncu's CSV).
Copy DIR/* (but raw/) into tests/data/realworld/hopper/ (tests/gpu_check/test_realworld_hopper.py
replays them); for tk, tk_measure --merge does it.
"""
import argparse
import datetime
import json
import lzma
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from gpu_check.bank_probe import ncu_csv
from gpu_check.kernel_corpus import ncu as N
from gpu_check.kernel_corpus.measure import tool_version
from gpu_check.needs import gpu_name

from .hopper_cases import GROUP_NAMES, HOPPER, KERNEL_MATCH, binary_name, group as group_named

SHIM = Path(__file__).resolve().with_name("hopper_capture.c")


def log(msg):
    print(f"[hopper_measure] {msg}", file=sys.stderr, flush=True)


def cuda_include():
    nvcc = shutil.which("nvcc")
    for d in ([Path(nvcc).resolve().parents[1] / "include"] if nvcc else []) + [Path("/usr/local/cuda/include")]:
        if (d / "cuda.h").is_file():
            return d
    raise FileNotFoundError("cuda.h not found (nvcc's include directory, /usr/local/cuda/include)")


def runtime_env(**extra):
    """The environment an example runs in: the CUDA toolkit's libraries on the loader's path (the
    binaries load libcudart.so.13 from there: -cudart shared)."""
    env = dict(os.environ, **extra)
    nvcc = shutil.which("nvcc")
    if nvcc:
        root = Path(nvcc).resolve().parents[1]
        libs = [str(d) for d in (root / "lib64", root / "lib", root / "targets" / "x86_64-linux" / "lib") if d.is_dir()]
        env["LD_LIBRARY_PATH"] = os.pathsep.join(libs + [p for p in [env.get("LD_LIBRARY_PATH")] if p])
    return env


def gcc(source, so):
    """A preloadable shared object from one of this package's C files (gcc, cc or clang)."""
    cc = next((c for c in ("gcc", "cc", "clang") if shutil.which(c)), None)
    if cc is None:
        raise FileNotFoundError("no C compiler (gcc, cc, clang) for the capture shim")
    r = subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", str(so), str(source), f"-I{cuda_include()}", "-ldl"],
                       capture_output=True, text=True)
    if r.returncode:
        raise FileNotFoundError(f"{cc} {Path(source).name}: {(r.stderr or r.stdout).strip()[-300:]}")
    return so


def build_shim(work):
    return gcc(SHIM, Path(work) / "hopper_capture.so")


def unpack(bin_dir, stem, work):
    exe = Path(work) / stem
    exe.write_bytes(lzma.decompress((Path(bin_dir) / binary_name(stem)).read_bytes()))
    exe.chmod(0o755)
    return exe


def capture(exe, argv, preload, cap_dir, problems, extra_env=None, match=KERNEL_MATCH):
    """Run the example with `preload` (the shim, and hopper_local's stand-in runtime after it),
    capturing the launches of kernels whose names contain `match` (Group.match)."""
    cap_dir.mkdir(parents=True, exist_ok=True)
    env = runtime_env(CAPTURE_DIR=str(cap_dir), CAPTURE_MATCH=match, LD_PRELOAD=str(preload),
                      **(extra_env or {}))
    try:
        r = subprocess.run([str(exe), *argv], env=env, capture_output=True, text=True, timeout=180)
        out = {"rc": r.returncode, "stdout": r.stdout[-6000:], "stderr": r.stderr[-3000:]}
    except subprocess.TimeoutExpired:
        out = {"rc": 124, "stdout": "", "stderr": "timed out after 180 s"}
    if out["rc"] != 0 or "Failed" in out["stdout"]:
        problems.append(f"{exe.name} under the shim: exit {out['rc']}: {(out['stderr'] or out['stdout'])[-300:]}")
    return out


def case_files(cap_dir, case, out_dir, problems):
    """DIR/<case>.capture.json and .buffers.npz from the shim's launch<k> files."""
    src = cap_dir / f"launch{case.launch}.json"
    if not src.is_file():
        problems.append(f"{case.name}: the shim wrote no {src.name}")
        return
    doc = json.loads(src.read_text())
    arrays = {}
    for k, b in enumerate(doc["buffers"]):
        before = np.fromfile(cap_dir / f"launch{case.launch}.buf{k}.before", np.uint8)
        after = np.fromfile(cap_dir / f"launch{case.launch}.buf{k}.after", np.uint8)
        arrays[f"before{k}"] = before
        b["changed"] = not np.array_equal(before, after)
        if b["changed"]:
            arrays[f"after{k}"] = after
    doc.update(case=case.name, example=case.example, launch=case.launch)
    (out_dir / f"{case.name}.capture.json").write_text(json.dumps(doc, indent=1) + "\n")
    np.savez_compressed(out_dir / f"{case.name}.buffers.npz", **arrays)


def ncu_runs(ncu, exe, argv, metrics, runs, raw_dir, problems, match=KERNEL_MATCH):
    """[[{metric: value} per captured launch] per run] (kernels whose names contain `match`, "" every one)."""
    out = []
    for i in range(runs):
        log_file = raw_dir / f"{exe.name}.ncu{i}.csv"
        # the mangled name holds GemmUniversal (ncu's default base, "function", is device_kernel)
        only = ["-k", f"regex:{match}"] if match else []
        cmd = [ncu, "--csv", "--clock-control", "none", "--cache-control", "none", "--kernel-name-base", "mangled",
               *only, "--metrics", ",".join(metrics), "--log-file", str(log_file), str(exe), *argv]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=runtime_env())
            rc, err = r.returncode, r.stderr
        except subprocess.TimeoutExpired:
            rc, err = 124, "timed out after 300 s"
        text = log_file.read_text() if log_file.is_file() else ""
        if rc:
            problems.append(f"ncu run {i} of {exe.name}: exit {rc}: {err[-300:]}")
        out.append([row["metrics"] for row in ncu_csv.parse(text)])
    return out


def source_counters(ncu, exe, argv, metrics, raw_dir, problems, match=KERNEL_MATCH):
    """One more ncu run of the example with the SourceCounters section: per SASS instruction (raw/
    <exe>.source_sass.csv, ncu's source page) beside the launch totals of the same run (raw/
    <exe>.source_details.csv), so that a total outside the model's range can be looked for in the
    instructions' own counts."""
    rep = raw_dir / f"{exe.name}.source.ncu-rep"
    only = ["-k", f"regex:{match}"] if match else []
    steps = [([ncu, "--section", "SourceCounters", "--clock-control", "none", "--cache-control", "none",
               "--kernel-name-base", "mangled", *only, "--metrics", ",".join(metrics), "--export", str(rep),
               "--force-overwrite", str(exe), *argv], None),
             ([ncu, "--import", str(rep), "--page", "source", "--csv", "--print-source", "sass"], "source_sass.csv"),
             ([ncu, "--import", str(rep), "--page", "details", "--csv"], "source_details.csv")]
    for cmd, name in steps:
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=runtime_env())
            rc, err, text = r.returncode, r.stderr, r.stdout
        except subprocess.TimeoutExpired:
            rc, err, text = 124, "timed out after 300 s", ""
        if rc:
            problems.append(f"ncu SourceCounters of {exe.name}: exit {rc}: {err[-300:]}")
            return
        if name:
            (raw_dir / f"{exe.name}.{name}").write_text(text)
    rep.unlink(missing_ok=True)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m gpu_check.realworld.hopper_measure", description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="the output directory")
    ap.add_argument("--group", default="hopper", choices=GROUP_NAMES, help="the CUTLASS examples or ThunderKittens (tk)")
    ap.add_argument("--bin", help="the binaries its build wrote (default build/<group>)")
    ap.add_argument("--ncu-runs", type=int, default=5, help="ncu runs of each example (default 5)")
    ap.add_argument("--example", action="append", help="only this example (repeatable; default: all)")
    ap.add_argument("--source-counters", action="store_true",
                    help="also one ncu run per example with the SourceCounters section (per SASS instruction) in raw/")
    args = ap.parse_args(argv)
    g = group_named(args.group)
    args.bin = args.bin or str(g.bin)
    unknown = [s for s in args.example or [] if s not in g.by_stem]
    if unknown:
        print(f"hopper_measure: no example {unknown[0]!r} in {g.name} (choose from {', '.join(g.by_stem)})", file=sys.stderr)
        return 2
    examples_run = [e for e in g.examples if not args.example or e.stem in args.example]
    if not 0 <= args.ncu_runs <= 20:
        print("hopper_measure: --ncu-runs must be 0..20", file=sys.stderr)
        return 2
    out = Path(args.out)
    raw = out / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    missing = [binary_name(e.stem) for e in examples_run if not (Path(args.bin) / binary_name(e.stem)).is_file()]
    if missing:
        print(f"hopper_measure: {args.bin} lacks {', '.join(missing)} ({g.build})",
              file=sys.stderr)
        return 2
    ncu = N.ncu_path()
    problems, examples, cases = [], {}, {}
    available, _ = N.available_metrics(ncu, log) if ncu else (None, "")
    metrics = N.choose_metrics(available)
    with tempfile.TemporaryDirectory(prefix="hopper-measure-") as work:
        try:
            shim = build_shim(work)
        except FileNotFoundError as e:
            print(f"hopper_measure: {e}", file=sys.stderr)
            return 2
        for ex in examples_run:
            exe = unpack(args.bin, ex.stem, work)
            cap_dir = Path(work) / "cap" / ex.stem
            log(f"{ex.stem} {' '.join(ex.argv)} under the capture shim")
            examples[ex.stem] = {"argv": list(ex.argv), "capture": capture(exe, ex.argv, shim, cap_dir, problems,
                                                                           match=g.match)}
            for case in (c for c in g.cases if c.example == ex.stem):
                case_files(cap_dir, case, out, problems)
            if ncu is None:
                problems.append("ncu not found")
                continue
            log(f"{ex.stem}: {args.ncu_runs} ncu runs")
            runs = ncu_runs(ncu, exe, ex.argv, metrics, args.ncu_runs, raw, problems, g.match)
            if args.source_counters:
                source_counters(ncu, exe, ex.argv, metrics, raw, problems, g.match)
            for run in runs:
                if len(run) != ex.launches:
                    problems.append(f"{ex.stem}: ncu reported {len(run)} launches of {g.match or 'any kernel'}, "
                                    f"{ex.launches} expected")
            for case in (c for c in g.cases if c.example == ex.stem):
                cases[case.name] = {"example": ex.stem, "launch": case.launch,
                                    "ncu_runs": [r[case.launch] if case.launch < len(r) else None for r in runs]}
    doc = {"device": gpu_name() or "unknown", "date": datetime.date.today().isoformat(),
           "ncu": tool_version("ncu", "Version") if ncu else None,
           "nvcc_of_the_binaries": tool_version("nvcc", "release") if g is not HOPPER else "see hopper_build (nvcc 13.0)",
           "group": g.name, "metrics": metrics,
           "examples": examples, "cases": cases, "problems": problems}
    (out / "h200.json").write_text(json.dumps(doc, indent=1) + "\n")
    log(f"wrote {out}; {len(problems)} problem(s)" + (f": {problems[0]}" if problems else ""))
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
