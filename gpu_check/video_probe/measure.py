"""Measure the video instructions (PTX ISA 9.0 section 9.7.18) on the GPU, for the executor's replay.

    python -m gpu_check.video_probe.measure --out DIR      # on the H200: writes DIR/video.json.gz

forms.py makes three kernels (k_simd: every SIMD form; k_scalar, k_scalar_refused: the scalar forms the
executor models and those it refuses) over one warp of
fixed inputs; each runs once through pycuda (the driver JIT-compiles the PTX for the GPU) and its
output words are kept with the GPU's name and driver, the date, the PTX and the instruction list.
Commit DIR/video.json.gz as tests/data/video/video.json.gz: tests/ptx/test_video_replay.py runs
k_simd and k_scalar on the executor and compares every word. Needs pycuda and numpy; seconds.
"""
import argparse
import datetime
import gzip
import json
import os
import sys
from pathlib import Path

import numpy as np

from gpu_check.needs import gpu_name
from gpu_check.video_probe import forms as F


def measure_one(name, a, b, c):
    import pycuda.autoinit  # noqa: F401 - creates the context
    import pycuda.driver as drv
    n = len(F.KERNELS[name]())
    out = np.zeros(n * F.THREADS, np.uint32)
    mod = drv.module_from_buffer(F.ptx(name).encode())
    fn = mod.get_function(name)
    fn(drv.In(a), drv.In(b), drv.In(c), drv.InOut(out), grid=(1, 1, 1), block=(F.THREADS, 1, 1))
    drv.Context.synchronize()
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="folder for video.json.gz")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    a, b, c = F.inputs()
    doc = {"gpu": gpu_name(), "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "seed": F.SEED, "threads": F.THREADS, "inputs": {"a": a.tolist(), "b": b.tolist(), "c": c.tolist()},
           "kernels": {}}
    for name in F.KERNELS:
        words = measure_one(name, a, b, c)
        doc["kernels"][name] = {"ptx": F.ptx(name), "forms": F.KERNELS[name](),
                                "out": words.reshape(-1, F.THREADS).tolist()}
        print(f"{name}: {len(doc['kernels'][name]['forms'])} instructions", flush=True)
    tmp = out / "video.json.gz.tmp"
    with gzip.open(tmp, "wt") as f:
        json.dump(doc, f)
    os.replace(tmp, out / "video.json.gz")
    print(f"wrote {out / 'video.json.gz'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
