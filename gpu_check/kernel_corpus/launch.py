"""The program Nsight Compute profiles: every launch of a plan, once each, in plan order.

    python -m gpu_check.kernel_corpus.launch --dir CORPUS --plan PLAN.json

PLAN.json: {"launches": [{"case": name, "variant": "sm_90" | "sm_80" | "ptxas_sm_90"}, ...],
            "cubins": {"<source>|<variant>": path}}. Only corpus kernels are launched, so ncu's
launch IDs 0, 1, ... are the plan's entries in order. A failing launch stops the program
(exit 1: the CUDA context is not trustworthy after a fault); the lines printed say how far it got.
"""
import argparse
import json
import sys
from pathlib import Path


def plan_cubins(plan):
    return {tuple(k.split("|", 1)): Path(p).read_bytes() for k, p in plan.get("cubins", {}).items()}


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m gpu_check.kernel_corpus.launch", description=__doc__.splitlines()[0])
    ap.add_argument("--dir", required=True)
    ap.add_argument("--plan", required=True)
    args = ap.parse_args(argv)
    from .corpus import load_inputs, load_manifest
    from .device import Launcher, module_image
    plan = json.loads(Path(args.plan).read_text())
    manifest = {e["name"]: e for e in load_manifest(args.dir)}
    cubins = plan_cubins(plan)
    import pycuda.driver as drv
    drv.init()
    ctx = drv.Device(0).make_context()
    try:
        launcher = Launcher(drv)
        for i, job in enumerate(plan["launches"]):
            entry = manifest[job["case"]]
            try:
                launcher.run(module_image(entry, job["variant"], args.dir, cubins), entry, load_inputs(entry, args.dir))
            except Exception as e:   # noqa: BLE001 - reported; later launches would be unreliable
                print(f"launch {i} {job['case']} {job['variant']}: FAILED {e}", flush=True)
                return 1
            print(f"launch {i} {job['case']} {job['variant']}: ok", flush=True)
    finally:
        ctx.pop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
