"""python -m gpu_check.descriptors --out DIR [--seconds S] [--counters] [--epilogue] [--dry-run]

Writes into DIR: descriptors_sm_90.npz (the raw corpus, corpus.py), results.json (one result per
probe, as gpu-check reports them), summary.txt (the fit of the readings), counters.json (with
--counters: shared-memory counters per wgmma / TMA op under ncu), epilogue.json (with
--epilogue: bank-probe wavefronts of ldmatrix/stmatrix/v4 accesses on swizzled tiles) and
environment.json (GPU, driver, CUDA, nvcc, date, commands). Exit 0 when everything ran (whether
or not the model matched: the fit says), 2 when nothing could run (no GPU, no nvcc).

--dry-run plays the GPU with emulate.FakeLab; --simulate KEY=VALUE,... makes the fake hardware
follow another reading (e.g. strides=core-matrix,base_offset=xor), which the fit must find.
"""
import argparse
import datetime
import json
import os
import platform
import sys
import time


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


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m gpu_check.descriptors", description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--seconds", type=float, default=60.0, help="budget of the probe runs (default 60)")
    ap.add_argument("--counters", action="store_true", help="also measure shared-memory counters under ncu")
    ap.add_argument("--counter-seconds", type=float, default=40.0)
    ap.add_argument("--epilogue", action="store_true", help="also bank-cost ldmatrix/stmatrix on swizzled tiles")
    ap.add_argument("--epilogue-seconds", type=float, default=35.0)
    ap.add_argument("--dry-run", action="store_true", help="no GPU: emulate.FakeLab plays it")
    ap.add_argument("--simulate", help="dry run: the reading the fake hardware follows, KEY=VALUE,...")
    ap.add_argument("--no-reserved", action="store_true", help="skip descriptors with unused bits set")
    ap.add_argument("--ncu", default="ncu")
    args = ap.parse_args(argv)

    from layoutsim.errors import LayoutsimError
    from .. import build as B
    from . import counters, epilogue, lab, plan, run
    t0 = time.time()
    os.makedirs(args.out, exist_ok=True)
    env = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "host": platform.node(), "python": platform.python_version(), "argv": sys.argv,
           "nvcc": B.nvcc_version()}
    probes = plan.probes()
    cubin_path = None
    try:
        cubin, secs, cmd = lab.build(probes)
        cubin_path = os.path.join(args.out, "probes.cubin")
        with open(cubin_path, "wb") as f:
            f.write(cubin)
        sass, missing = lab.sass_check(cubin, probes)
        env.update(build=cmd, build_seconds=round(secs, 1), sass=sass, sass_missing=missing)
        log(f"[build] {len(probes)} wgmma probes + TMA kernel, sm_90a: {secs:.1f} s"
            + (f"; SASS lacks the instruction in {missing}" if missing else ""))
    except B.BuildError as e:
        if not args.dry_run:
            log(f"[build] FAILED: {e}")
            return 2
        log(f"[build] skipped in the dry run: {e}")
    if args.dry_run:
        from .emulate import FakeLab
        try:
            reading, treading = _reading(args.simulate)
        except (LayoutsimError, TypeError) as e:
            log(f"--simulate {args.simulate!r}: {e}")
            return 2
        the_lab = FakeLab(reading, treading)
        backend = None
    else:
        from ..backends import Unavailable
        from ..backends.cuda import CudaBackend
        try:
            backend = CudaBackend()
        except Unavailable as e:
            log(f"no GPU: {e}")
            return 2
        the_lab = lab.CudaLab(backend, cubin)
    env.update(the_lab.environment())
    log(f"[descriptors] on {env.get('gpu')} (driver {env.get('driver', '-')}, CUDA {env.get('cuda_driver_api', '-')})")
    npz = os.path.join(args.out, "descriptors_sm_90.npz")
    results, rec = run.measure(the_lab, npz, log=log, seconds=args.seconds, reserved=not args.no_reserved)
    with open(os.path.join(args.out, "results.json"), "w") as f:
        f.write(run.results_json(results))
    with open(os.path.join(args.out, "summary.txt"), "w") as f:
        f.write(rec.fit_log + "\n")
        for r in results:
            f.write(f"{r.entry} [{r.check}]: {r.status}, {r.cases} cases, {r.mismatches} of {r.compared} differ"
                    f"{' - ' + r.note if r.note else ''}\n")
            if r.status != "pass":
                f.write(r.diff_text() + "\n")
    base = next((p["base"] for p in rec.probes), 0x400)
    if backend is not None:
        backend.release()
    if args.counters and not args.dry_run and cubin_path:
        try:
            counters.measure(cubin_path, base, args.out, args.ncu, args.counter_seconds, log)
        except Exception as e:   # noqa: BLE001 - the corpus is written; report and go on
            log(f"counters: ERROR {type(e).__name__}: {e}")
    if args.epilogue:
        try:
            epilogue.measure(args.out, args.ncu, B.nvcc_path() or "nvcc", args.epilogue_seconds, log, args.dry_run)
        except Exception as e:   # noqa: BLE001
            log(f"epilogue: ERROR {type(e).__name__}: {e}")
    env["seconds"] = round(time.time() - t0, 1)
    with open(os.path.join(args.out, "environment.json"), "w") as f:
        json.dump(env, f, indent=1, default=str)
    bad = sum(r.mismatches for r in results)
    errs = sum(r.status == "error" for r in results)
    log(f"RESULT descriptors: {sum(r.cases for r in results)} cases, {bad} addresses differ from layoutsim.smem, "
        f"{errs} errors, {env['seconds']} s{' (DRY RUN)' if args.dry_run else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
