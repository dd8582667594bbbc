"""python -m gpu_check.descriptors --out DIR [--seconds S] [--tma-seconds S] [--counters] [--epilogue] [--dry-run]

Writes into DIR: descriptors_sm_90.npz (the raw corpus, corpus.py), results.json (one result per
probe and phase, as gpu-check reports them, plus one error per task that gave no data),
faults.json (those tasks: the fault, hang or error, and the descriptor or TMA box that caused
it), worker_stderr.txt (what the worker processes printed there, if anything), summary.txt (the
fit of the readings and the results), counters.json (with --counters: shared-memory counters per
wgmma / TMA op under ncu), epilogue.json (with --epilogue: bank-probe wavefronts of
ldmatrix/stmatrix/v4 accesses on swizzled tiles) and environment.json (GPU, driver, CUDA, nvcc, date, commands). Exit 0 when everything ran (whether
or not the model matched: the fit says), 2 when nothing could run (no GPU, no nvcc).

Order, safest first, every phase in its own worker process (isolate.py): the canonical, random
and reserved-bit descriptors; then TMA boxes through the kernel parameter (the sanity box first),
the global-memory cross-check (every box of it when the parameter path faulted throughout), and
the innermost-coordinate rule (tma-coords: plan.COORD_PROBES, each faulting box costs one
worker); then (separate ncu processes) the epilogue bank probe and the counters (--counter-ops
tma: the TMA launches only). The corpus is saved after the descriptors and again at the end.

--dry-run plays the GPU with emulate.FakeLab (in worker processes too); --simulate KEY=VALUE,...
makes the fake hardware follow another reading (e.g. strides=core-matrix,base_offset=xor), which
the fit must find; --simulate-fault VALUE,...|tma-param|tma-coords makes it fault on those
descriptors, on every TMA copy through the parameter (as the first H200 run did), or on every
box whose innermost coordinate is not on 16 bytes (as the second run did).
"""
import argparse
import datetime
import json
import os
import platform
import sys
import tempfile
import time

from layoutsim.archs import compile_target
from layoutsim.files import make_dir, write_atomic


def log(msg):
    print(msg, flush=True)


def _reading(text):
    from layoutsim import smem
    kw, tkw = {}, {}
    for part in filter(None, (text or "").split(",")):
        k, _, v = part.partition("=")
        k = k.strip()
        if k.startswith("tma_"):
            tkw[k[4:]] = v.strip()
        else:
            kw[k] = {"true": True, "false": False}.get(v.strip().lower(), v.strip())
    return smem.Reading(**kw), smem.TmaReading(**tkw)


def _fake_spec(args):
    reading, treading = _reading(args.simulate)
    spec = {"kind": "fake", "reading": reading.to_json(), "tma_reading": treading.to_json()}
    for v in filter(None, (args.simulate_fault or "").split(",")):
        if v == "tma-param":
            spec["fault_tma_via"] = "param"
        elif v == "tma-coords":
            spec["fault_tma_coords"] = True
        else:
            spec.setdefault("fault", []).append(int(v, 0))
    return spec


def _phases(tasks, text):
    out = tuple(p.strip() for p in text.split(",") if p.strip())
    bad = [p for p in out if p not in tasks.PHASES]
    if bad or not out:
        raise ValueError(f"--phases {text!r}: {', '.join(bad) or 'empty'}; choose from {', '.join(tasks.PHASES)}")
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m gpu_check.descriptors", description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--seconds", type=float, default=60.0, help="budget of the descriptor phases (default 60)")
    ap.add_argument("--tma-seconds", type=float, default=30.0, help="budget of the TMA phases (default 30)")
    ap.add_argument("--phases", default="canonical,random,reserved,tma,tma-global,tma-coords",
                    help="phases to run, in order (default: all)")
    ap.add_argument("--counters", action="store_true", help="also measure shared-memory counters under ncu")
    ap.add_argument("--counter-seconds", type=float, default=40.0)
    ap.add_argument("--counter-ops", choices=("all", "tma"), default="all",
                    help="the launches measured under ncu: wgmma and TMA (default), or TMA only")
    ap.add_argument("--epilogue", action="store_true", help="also bank-cost ldmatrix/stmatrix on swizzled tiles")
    ap.add_argument("--epilogue-seconds", type=float, default=35.0)
    ap.add_argument("--dry-run", action="store_true", help="no GPU: emulate.FakeLab plays it")
    ap.add_argument("--simulate", help="dry run: the reading the fake hardware follows, KEY=VALUE,...")
    ap.add_argument("--simulate-fault", help="dry run: descriptor values (or tma-param) the fake faults on")
    ap.add_argument("--in-process", action="store_true", help="run the tasks in this process (no isolation)")
    ap.add_argument("--ncu", default="ncu")
    args = ap.parse_args(argv)

    from layoutsim.errors import LayoutsimError
    from .. import build as B
    from . import counters, driver, epilogue, isolate, kernels, lab, plan, run, tasks
    try:
        phases = _phases(tasks, args.phases)
        spec = _fake_spec(args) if args.dry_run else None
    except (ValueError, LayoutsimError, TypeError) as e:
        log(str(e))
        return 2
    t0 = time.time()
    make_dir(args.out, "--out folder")
    env = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "host": platform.node(), "python": platform.python_version(), "argv": sys.argv,
           "nvcc": B.nvcc_version()}
    probes = plan.probes()
    cubin_path = os.path.join(args.out, "probes.cubin")
    try:
        cubin, secs, cmd = lab.build(probes)
        write_atomic(cubin_path, cubin, "cubin")
        sass, missing = lab.sass_check(cubin, probes)
        env.update(build=cmd, build_seconds=round(secs, 1), sass=sass, sass_missing=missing,
                   tma_kernel_params_cubin=driver.cubin_params(cubin, kernels.TMA_NAME))
        log(f"[build] {len(probes)} wgmma probes + TMA kernel, {compile_target('sm_90', arch_specific=True)}: {secs:.1f} s"
            + (f"; SASS lacks the instruction in {missing}" if missing else ""))
    except B.BuildError as e:
        cubin_path = None
        if not args.dry_run:
            log(f"[build] FAILED: {e}")
            return 2
        log(f"[build] skipped in the dry run: {e}")
    if not args.dry_run:
        try:                                    # no context here: the workers make their own
            import pycuda.driver as drv
            drv.init()
            if drv.Device.count() == 0:
                raise RuntimeError("pycuda sees 0 devices")
        except Exception as e:   # noqa: BLE001 - any reason means: no GPU to run on
            log(f"no GPU: {type(e).__name__}: {str(e).strip()[:200]}")
            return 2
        spec = {"kind": "cuda", "cubin": cubin_path}
    tp = time.time()
    campaign = tasks.Campaign()
    log(f"[plan] {sum(len(c[p]) for c in campaign.cases for p in c)} descriptors for {len(campaign.probes)} "
        f"probes, {len(campaign.tma)} TMA boxes, shared memory at {campaign.base:#x} ({time.time() - tp:.1f} s)")
    work = tempfile.mkdtemp(prefix="desc_work_")
    parts, findings = {}, []

    def measure(todo, seconds):
        if not todo:
            return
        if args.in_process:
            from .emulate import FakeLab
            the_lab = FakeLab.from_spec(spec) if args.dry_run else isolate.make_lab(spec)
            env.update(the_lab.environment())
            p, f = tasks.run_here(the_lab, campaign, todo, log, seconds)
        else:
            p, f, e = isolate.run(campaign, spec, todo, work, log, seconds)
            env.update(e)
        parts.update(p)
        findings.extend(f)

    npz = os.path.join(args.out, "descriptors_sm_90.npz")
    measure(campaign.tasks([p for p in phases if p in tasks.WGMMA_PHASES]), args.seconds)
    rec, _ = tasks.assemble(campaign, parts, findings, env, log=lambda s: None, fit=False)
    rec.save(npz)                                  # the descriptors are safe before TMA and ncu run
    log(f"[descriptors] {len(parts)} tasks measured, {len(findings)} without data ({time.time() - t0:.1f} s)")
    if "tma" in phases:
        measure(campaign.tasks(["tma"]), args.tma_seconds * 0.5)
    if "tma-global" in phases:
        through_param = any(k.startswith("tma.") for k in parts)
        todo = campaign.tasks(["tma-global"])
        if "tma" in phases and not through_param:          # the parameter path gave nothing: all boxes
            todo = [tasks.Task("tma-global", -1, (j,)) for j in campaign.boxes("tma-global")]
            log("[descriptors] no TMA box came through the kernel parameter: every box through global memory")
        measure(todo, args.tma_seconds * (0.3 if through_param else 0.5))
    if "tma-coords" in phases:
        measure(campaign.tasks(["tma-coords"]), args.tma_seconds * 0.2)
    if args.epilogue:
        try:
            epilogue.measure(args.out, args.ncu, B.nvcc_path() or "nvcc", args.epilogue_seconds, log, args.dry_run)
        except Exception as e:   # noqa: BLE001 - the corpus is written; report and go on
            log(f"epilogue: ERROR {type(e).__name__}: {e}")
    if args.counters and not args.dry_run and cubin_path:
        try:
            counters.measure(cubin_path, campaign.base, args.out, args.ncu, args.counter_seconds, log,
                             ops=args.counter_ops)
        except Exception as e:   # noqa: BLE001
            log(f"counters: ERROR {type(e).__name__}: {e}")
    rec, results = tasks.assemble(campaign, parts, findings, env, log=log)
    rec.save(npz)
    log(rec.fit_log)
    write_atomic(os.path.join(args.out, "results.json"), run.results_json(results), "results")
    write_atomic(os.path.join(args.out, "faults.json"), json.dumps(findings, indent=1), "faults")
    summary = [rec.fit_log]
    for r in results:
        summary.append(f"{r.entry} [{r.check}]: {r.status}, {r.cases} cases, {r.mismatches} of {r.compared} differ"
                       f"{' - ' + r.note if r.note else ''}")
        if r.status not in ("pass", "error"):
            summary.append(r.diff_text())
    write_atomic(os.path.join(args.out, "summary.txt"), "\n".join(summary) + "\n", "summary")
    for x in [x for x in findings if x["kind"] != "not run"][:12]:
        log(f"FINDING {x['kind']}: {x['task']}: {x.get('decoded', '')} {x['message'][:300]}")
    env["seconds"] = round(time.time() - t0, 1)
    write_atomic(os.path.join(args.out, "environment.json"), json.dumps(env, indent=1, default=str), "environment")
    text = isolate.stderr_text(work)
    if text:
        write_atomic(os.path.join(args.out, "worker_stderr.txt"), text + "\n", "worker stderr")
    import shutil
    shutil.rmtree(work, ignore_errors=True)
    bad = sum(r.mismatches for r in results)
    kinds = {}
    for x in findings:
        kinds[x["kind"]] = kinds.get(x["kind"], 0) + 1
    log(f"RESULT descriptors: {sum(r.cases for r in results)} cases, {bad} addresses differ from layoutsim.smem, "
        f"tasks without data: {kinds or 'none'}, {env['seconds']} s{' (DRY RUN)' if args.dry_run else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
