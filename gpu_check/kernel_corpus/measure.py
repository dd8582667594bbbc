"""Measure the kernel corpus on the GPU: final buffers, ncu totals, per-instruction counters, SASS.

    python -m gpu_check.kernel_corpus.measure --out DIR [--dir CORPUS] [--variants sm_90,sm_80,ptxas_sm_90]
                                              [--max-seconds 150] [--no-source-counters] [--ncu-runs N]

Steps (a failing step is logged and the others go on):
 1. ptxas -arch=sm_90 -lineinfo assembles every sm_90 PTX file (the `ptxas_sm_90` variant; -arch=sm_90a
    the sm_90a files of the wgmma/TMA cases, which have no sm_80 variant) and
    cuobjdump -sass keeps its SASS;
 2. every case runs twice per variant in this process (pycuda): the final buffers, and whether
    the two runs agree bit for bit;
 3. the GPU context is released and every launch runs once more under ncu for the totals: the
    sm_90 launches with ncu.BASE and what else the GPU offers (and --ncu-runs - 1 more times with
    ncu.BASE: h200.json's ncu_runs keeps every value), the other variants with ncu.BASE;
 4. with time left, the sm_90 launches run under ncu's SourceCounters section (per SASS
    instruction: executions, shared wavefronts and their ideal), printed as CSV.
DIR receives `<case>.h200.npz` (the sm_90 run: what tests/data/kernels/ keeps), a
`<case>.h200.<variant>.npz` only where a variant's buffers differ, `h200.json` (environment,
metrics, per case the ncu totals of every variant, the arch run, problems), raw/ (ncu output,
the metric list; a file over 1 MiB gzip-compressed as NAME.gz) and sass/. Exit 0 when the sm_90 runs were recorded, 2 when nothing could run.
"""
import argparse
import datetime
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from . import corpus as C
from . import ncu as N
from .device import VARIANTS, Launcher, has_variant, module_image
from .lowering import listing_sha256


def log(msg):
    print(f"[kernels] {msg}", flush=True)


def tool(name):
    from gpu_check.build import tool as find
    return find(name)


def tool_version(name, pattern="release"):
    p = tool(name)
    if not p:
        return None
    r = subprocess.run([p, "--version"], capture_output=True, text=True)
    lines = [line for line in (r.stdout + r.stderr).splitlines() if pattern in line.lower() or "version" in line.lower()]
    return lines[-1].strip() if lines else None


# ---- 1. ptxas ---------------------------------------------------------------------------------------
def stem_of(source):
    """A source's file name without its extension (a package's source is a path: its last part)."""
    return Path(source).name.rsplit(".", 1)[0]


def assemble(directory, manifest, work, problems):
    """{(source, "ptxas_sm_90"): cubin path} and {stem: SASS text} for every sm_90 (or sm_90a) PTX file."""
    ptxas, cuobjdump = tool("ptxas"), tool("cuobjdump")
    cubins, sass = {}, {}
    if not ptxas:
        problems.append("ptxas not found: no ptxas_sm_90 variant")
        return cubins, sass
    for source in sorted({e["source"] for e in manifest}):
        e = next(x for x in manifest if x["source"] == source)
        stem = stem_of(source)
        out = Path(work) / f"{stem}.ptxas_sm_90.cubin"
        # the sm_90 variant's PTX (sm_90a for wgmma/TMA cases: ptxas builds those only for sm_90a)
        cmd = [ptxas, f"-arch={C.run_arch(e)}", "-lineinfo", "-o", str(out), str(Path(directory) / C.run_ptx(e))]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode:
            problems.append(f"{' '.join(cmd)}: {(r.stderr or r.stdout).strip()[:300]}")
            continue
        cubins[source, "ptxas_sm_90"] = out
        if cuobjdump:
            d = subprocess.run([cuobjdump, "-sass", str(out)], capture_output=True, text=True)
            sass[stem] = d.stdout if d.returncode == 0 else d.stderr
    return cubins, sass


# ---- 2. plain runs ----------------------------------------------------------------------------------
def same(a, b):
    return all((x is None and y is None) or (x is not None and y is not None and x.tobytes() == y.tobytes())
               for x, y in zip(a, b))


def run_plain(drv, directory, manifest, variants, cubin_paths, problems, log=log):
    """{case: {variant: {"buffers": [...], "deterministic": bool} or {"error": text}}}. A launch
    that faults stops the runs (the context is lost); what ran before is kept."""
    cubins = {k: Path(p).read_bytes() for k, p in cubin_paths.items()}
    launcher = Launcher(drv)
    runs = {}
    for e in manifest:
        runs[e["name"]] = {}
        for v in variants:
            if not has_variant(e, v):          # a case built for sm_90a only has no sm_80 variant
                continue
            try:
                image = module_image(e, v, directory, cubins)
                inputs = C.load_inputs(e, directory)
                first = launcher.run(image, e, inputs)
                second = launcher.run(image, e, inputs)
            except Exception as err:   # noqa: BLE001 - recorded
                msg = str(err).strip().splitlines()[0] if str(err).strip() else repr(err)
                runs[e["name"]][v] = {"error": msg}
                problems.append(f"{e['name']} ({v}): {msg}")
                if any(w in msg.lower() for w in ("launch failed", "illegal", "misaligned", "exception")):
                    problems.append("the CUDA context is lost after that fault: later cases not run")
                    return runs
                continue
            runs[e["name"]][v] = {"buffers": first, "deterministic": same(first, second)}
            if not same(first, second):
                problems.append(f"{e['name']} ({v}): two launches gave different buffers")
        log(f"{e['name']}: " + ", ".join(f"{v} {'ok' if 'buffers' in r else 'ERROR'}" for v, r in runs[e['name']].items()))
    return runs


# ---- recording --------------------------------------------------------------------------------------
RAW_PLAIN_BYTES = 1 << 20       # a raw ncu text larger than this is kept gzip-compressed (NAME.gz)


def write_raw(path, text):
    """ncu's output as text, or as path.gz when it is large (the per-SASS-line source counters of a
    template-heavy kernel run to megabytes: the measurement stays within what comes back)."""
    data = text.encode()
    if len(data) > RAW_PLAIN_BYTES:
        return C.write_atomic(Path(str(path) + ".gz"), gzip.compress(data, mtime=0))
    return C.write_atomic(path, data)


def record(out, manifest, runs, variants, by_launch, env, metrics, problems, extra):
    """Write <case>.h200.npz (and differing variants' buffers) and h200.json into `out`;
    by_launch: {(case, variant): ncu totals}."""
    out = Path(out)
    per = {}
    for e in manifest:
        name = e["name"]
        ref = runs.get(name, {}).get("sm_90", {})
        case = {"ptx_arch_run": VARIANTS["sm_90"], "ptx_file": C.run_ptx(e), "what": e["what"]}
        if "buffers" in ref:
            arrays = {f"arg{i}": b for i, b in enumerate(ref["buffers"]) if b is not None}
            C.write_atomic(out / C.h200_file(name), C.npz_bytes(arrays))
            case.update(buffers=C.h200_file(name), deterministic=ref["deterministic"])
        else:
            case["error"] = ref.get("error", "not run")
        case["ncu"] = by_launch.get((name, "sm_90"))
        case["variants"] = {}
        for v in variants:
            if v == "sm_90" or not has_variant(e, v):
                continue
            r = runs.get(name, {}).get(v, {})
            info = {"what": VARIANTS[v], "ncu": by_launch.get((name, v))}
            if "buffers" in r and "buffers" in ref:
                info["same_buffers_as_sm_90"] = same(r["buffers"], ref["buffers"])
                if not info["same_buffers_as_sm_90"]:
                    f = f"{name}.h200.{v}.npz"
                    C.write_atomic(out / f, C.npz_bytes({f"arg{i}": b for i, b in enumerate(r["buffers"]) if b is not None}))
                    info["buffers"] = f
            else:
                info["error"] = r.get("error", "not run")
            case["variants"][v] = info
        per[name] = case
    doc = {"schema": 1,
           "what": "the kernel corpus (tests/data/kernels) run on the GPU: final buffers of the sm_90 PTX "
                   "JIT-compiled by the driver, and Nsight Compute totals of each launch (whole grid)",
           "environment": env, "metrics": metrics, "problems": problems, "cases": per, **extra}
    C.write_atomic(out / "h200.json", json.dumps(doc, indent=1, default=_plain) + "\n")
    return doc


def _plain(x):
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (np.floating,)):
        return float(x)
    return str(x)


def environment(backend_env, ncu):
    env = dict(backend_env)
    env.update(nvcc=tool_version("nvcc"), ptxas=tool_version("ptxas"), cuobjdump=tool_version("cuobjdump"),
               ncu=tool_version(ncu, "version") if ncu else None,
               date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               command=" ".join([os.path.basename(sys.executable), "-m", "gpu_check.kernel_corpus.measure", *sys.argv[1:]]))
    return env


def stage_sources(directory, manifest):
    """Copy the .cu files to BUILD_DIR, the path the PTX's line info names, so ncu can show them."""
    try:
        Path(C.BUILD_DIR).mkdir(parents=True, exist_ok=True)
        for s in {e["source"] for e in manifest}:
            shutil.copyfile(Path(directory) / s, Path(C.BUILD_DIR) / s)
    except OSError:
        pass


def main(argv=None, backend=None):
    """backend: a CudaBackend-like object (tests pass a fake with a pycuda-like `drv`)."""
    ap = argparse.ArgumentParser(prog="python -m gpu_check.kernel_corpus.measure", description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="directory for the measurement")
    ap.add_argument("--dir", default=str(C.DATA), help="the corpus (default tests/data/kernels)")
    ap.add_argument("--variants", default="sm_90,sm_80,ptxas_sm_90", help=f"of {', '.join(VARIANTS)}")
    ap.add_argument("--max-seconds", type=float, default=150.0, help="overall time budget (default 150)")
    ap.add_argument("--no-source-counters", action="store_true", help="skip the per-instruction ncu pass")
    ap.add_argument("--ncu-runs", type=int, default=1, choices=range(1, 11), metavar="N",
                    help="profile the sm_90 launches N times (1-10; every value kept in h200.json's ncu_runs)")
    args = ap.parse_args(argv)
    t0 = time.time()
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    bad = [v for v in variants if v not in VARIANTS]
    if bad or "sm_90" not in variants:
        print(f"measure: --variants {args.variants!r}: must include sm_90, choices {', '.join(VARIANTS)}", file=sys.stderr)
        return 2
    problems = C.validate(args.dir)
    if problems:
        print(f"measure: the corpus in {args.dir} is incomplete: {problems[0]}", file=sys.stderr)
        return 2
    out = Path(args.out)
    (out / "raw").mkdir(parents=True, exist_ok=True)
    (out / "sass").mkdir(exist_ok=True)
    manifest = C.load_manifest(args.dir)
    work = Path(tempfile.mkdtemp(prefix="kernel_corpus_"))
    problems = []
    stage_sources(args.dir, manifest)

    cubin_paths, sass = assemble(args.dir, manifest, work, problems) if "ptxas_sm_90" in variants else ({}, {})
    for stem, text in sass.items():
        C.write_atomic(out / "sass" / f"{stem}.ptxas_sm_90.sass", text)
    # what this machine's ptxas makes, fingerprinted as lowering_sm90.json's sass_sha256 is
    run_file = {stem_of(e["source"]): C.run_ptx(e) for e in manifest}     # stem -> its sm_90(a) PTX
    extra = {"ptxas_sass_sha256": {run_file[stem]: listing_sha256(text) for stem, text in sass.items()}}
    log(f"ptxas: {len(cubin_paths)} cubins ({time.time() - t0:.0f} s)")
    if "ptxas_sm_90" in variants and not cubin_paths:
        variants.remove("ptxas_sm_90")

    if backend is None:
        from gpu_check.backends import Unavailable
        from gpu_check.backends.cuda import CudaBackend
        try:
            backend = CudaBackend()
        except Unavailable as e:
            print(f"measure: {e}", file=sys.stderr)
            return 2
    ncu = N.ncu_path()
    env = environment(backend.environment(), ncu)
    log(f"GPU: {env.get('gpu')}, driver {env.get('driver')}, CUDA driver API {env.get('cuda_driver_api')}")
    runs = run_plain(backend.drv, args.dir, manifest, variants, cubin_paths, problems)
    backend.release()
    log(f"plain runs done ({time.time() - t0:.0f} s)")

    launches = [{"case": e["name"], "variant": v, "kernel": e["kernel"]} for v in variants for e in manifest
                if "buffers" in runs.get(e["name"], {}).get(v, {})]
    metrics, by_launch, ncu_runs = list(N.BASE), {}, {}
    if ncu is None:
        problems.append("ncu not found: no totals")
    else:
        avail, query = N.available_metrics(ncu, log)
        C.write_atomic(out / "raw" / "ncu_query_metrics.txt", query)
        metrics = N.choose_metrics(avail)
        extra["ncu_commands"] = []
        # the sm_90 launches with every chosen metric first (what the corpus keeps), then the other
        # variants with the six base metrics, then per-instruction counters while time is left
        sm90 = [j for j in launches if j["variant"] == "sm_90"]
        passes = [("sm_90", sm90, metrics)] + [(f"sm_90_run{r}", sm90, list(N.BASE)) for r in range(2, args.ncu_runs + 1)]
        for part, jobs, ms in passes + [("others", [j for j in launches if j["variant"] != "sm_90"], list(N.BASE))]:
            left = args.max_seconds - (time.time() - t0)
            if not jobs:
                continue
            if left < 15:
                problems.append(f"ncu totals of {part} skipped ({left:.0f} s left)")
                continue
            rows, probs, text, cmd = N.totals(ncu, args.dir, jobs, cubin_paths, ms, work, left - 10)
            if ms is metrics and not any(rows) and metrics != list(N.BASE):
                problems.append(f"ncu with {len(metrics)} metrics gave nothing ({probs[:1]}); retrying with the base six")
                metrics = ms = list(N.BASE)
                rows, probs, text, cmd = N.totals(ncu, args.dir, jobs, cubin_paths, ms,
                                                  work, args.max_seconds - (time.time() - t0) - 10)
            problems += probs
            extra["ncu_commands"].append(cmd)
            write_raw(out / "raw" / f"ncu_totals_{part}.csv", text)
            if part == "sm_90" or part.startswith("sm_90_run"):        # every run's values are kept
                for j, r in zip(jobs, rows):
                    ncu_runs.setdefault(j["case"], []).append(r)
            if part.startswith("sm_90_run"):
                continue
            by_launch.update({(j["case"], j["variant"]): r for j, r in zip(jobs, rows)})
            log(f"ncu totals ({part}): {sum(r is not None for r in rows)}/{len(jobs)} launches, {len(ms)} metrics "
                f"({time.time() - t0:.0f} s)")
        left = args.max_seconds - (time.time() - t0)
        if not args.no_source_counters and left > 30:
            sm90 = [j for j in launches if j["variant"] == "sm_90"]
            texts, probs = N.source_counters(ncu, args.dir, sm90, {}, work, left - 5)
            problems += probs
            for name, text in texts.items():
                write_raw(out / "raw" / name, text)
            extra["source_counters"] = sorted(texts)
            log(f"ncu source counters: {', '.join(f'{k} {len(v)} chars' for k, v in texts.items())} ({time.time() - t0:.0f} s)")
        else:
            problems.append(f"source counters skipped ({left:.0f} s left)")
    if ncu_runs:
        extra["ncu_runs"] = {"what": f"per case, the sm_90 launch under ncu {args.ncu_runs} times (the first with "
                                     f"every metric, the others with the base six): every value, in run order",
                             "cases": ncu_runs}
    doc = record(out, manifest, runs, variants, by_launch, env, metrics, problems, extra)
    shutil.rmtree(work, ignore_errors=True)
    ok = sum("buffers" in c for c in doc["cases"].values())
    log(f"RESULT: {ok}/{len(manifest)} cases recorded, {sum(c.get('ncu') is not None for c in doc['cases'].values())} "
        f"with ncu totals, {len(problems)} problems, {time.time() - t0:.0f} s")
    for p in problems[:15]:
        log(f"problem: {p}")
    return 0 if ok else 2


if __name__ == "__main__":
    sys.exit(main())
