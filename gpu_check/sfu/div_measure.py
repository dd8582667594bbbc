"""Measure div.approx.f32, div.approx.ftz.f32, div.full.f32 and div.full.ftz.f32 on the GPU over
the input set of div_inputs.py (random bits, every special class, subnormals, near-overflow
divisors, exponent extremes, and every 32-bit divisor under six numerators: about 2.6e10 pairs
per instruction) and keep a 64-bit hash per block of results, plus every result of the special
cross product, so that tests/numerics/test_sfu_div.py can replay layoutsim.numerics.sfu_div
against them.

    python -m gpu_check.sfu.div_measure --out DIR [--dry-run]

DIR/sfu_div_sm90.json (environment, the probe's SASS, per op and group: pairs, block size) and
DIR/sfu_div_sm90.npz (per op and group the block hashes as uint64; per op the special results).
Commit both into tests/data/sfu/. --dry-run: no GPU; the model itself answers on the first
block of each group (tests the driver only). Takes well under a minute on an H200.
"""
import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from layoutsim.numerics import sfu_div

from .. import needs
from . import div_inputs as DI
from .measure import nvcc_cubin

NAME = "sfu_div_sm90"


def key(op, g):
    return f"{op}|{g}"


class GpuDevice:
    GRID, BLOCK = 132 * 16, 256

    def __init__(self, cubin):
        import pycuda.driver as drv
        drv.init()
        self.drv, self.dev = drv, drv.Device(0)
        self.ctx = self.dev.make_context()
        self.fn = drv.module_from_buffer(cubin).get_function("probe")
        self.special = drv.to_device(DI.special())

    def environment(self):
        dv = self.drv.get_driver_version()
        from gpu_check.backends.cuda import _driver_string
        return {"gpu": self.dev.name(), "compute_capability": "%d.%d" % self.dev.compute_capability(),
                "driver": _driver_string(dv), "cuda_driver_api": f"{dv // 1000}.{(dv % 1000) // 10}"}

    def run(self, op, mode, n, log2_block, params, want_results):
        drv = self.drv
        nblocks = n >> log2_block
        hashes = drv.mem_alloc(nblocks * 8)
        drv.memset_d8(hashes, 0, nblocks * 8)
        out = drv.mem_alloc(n * 4) if want_results else None
        p = {**dict(seed=0, a_and=0, a_or=0, b_and=0, b_or=0, fixed_a=0), **params}
        self.fn(np.int32(op), np.int32(mode), np.uint64(n), np.uint64(p["seed"]), np.uint32(p["a_and"]),
                np.uint32(p["a_or"]), np.uint32(p["b_and"]), np.uint32(p["b_or"]), self.special,
                np.uint32(p["fixed_a"]), np.int32(log2_block), hashes, out if out is not None else np.uintp(0),
                block=(self.BLOCK, 1, 1), grid=(self.GRID, 1))
        drv.Context.synchronize()
        h = np.empty(nblocks, np.uint64)
        drv.memcpy_dtoh(h, hashes)
        hashes.free()
        res = None
        if out is not None:
            res = np.empty(n, np.uint32)
            drv.memcpy_dtoh(res, out)
            out.free()
        return h, res

    def close(self):
        self.special.free()
        self.ctx.pop()


class DryDevice:
    """No GPU: the model answers on each group's first block (tests the driver only)."""
    def environment(self):
        return {"gpu": "(dry run: no GPU)", "driver": "", "cuda_driver_api": ""}

    def run(self, op, mode, n, log2_block, params, want_results):
        n = min(n, 1 << log2_block)
        a, b = DI.pairs(mode, params, 0, n)
        r = sfu_div.evaluate(DI.OPS[op], a, b)
        return DI.block_hashes(r, 0, log2_block), (r if want_results else None)

    def close(self):
        pass


def compile_probe(work):
    """(cubin, {"nvcc": ..., "sass": the division SASS lines}) of div_probe.cu."""
    from gpu_check.build import tool
    cubin = Path(work) / "div_probe.cubin"
    facts = {"nvcc": " ".join(nvcc_cubin("div_probe.cu", cubin))}
    cuobjdump = tool("cuobjdump")
    if cuobjdump:
        d = subprocess.run([cuobjdump, "-sass", str(cubin)], capture_output=True, text=True)
        facts["sass"] = [" ".join(line.split("/*")[1].split("*/")[1].split()) if line.count("/*") >= 2 else line.strip()
                         for line in d.stdout.splitlines() if any(k in line for k in ("MUFU", "FMUL", "FSETP"))]
    return cubin.read_bytes(), facts


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m gpu_check.sfu.div_measure", description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--dry-run", action="store_true", help="no GPU: the model answers (tests the driver only)")
    args = ap.parse_args(argv)
    if needs.refuse("python -m gpu_check.sfu.div_measure", args, pycuda=True):
        return 2
    t0 = time.time()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    facts = {}
    if args.dry_run:
        device = DryDevice()
    else:
        work = tempfile.mkdtemp(prefix="sfu_div_")
        try:
            cubin, facts = compile_probe(work)
            device = GpuDevice(cubin)
        except Exception as e:   # noqa: BLE001 - nothing can run: one line, exit 2
            print(f"sfu_div: {type(e).__name__}: {e}", file=sys.stderr)
            return 2
        finally:
            shutil.rmtree(work, ignore_errors=True)
    env = dict(device.environment(), date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               host=platform.node(), python=platform.python_version(), dry_run=args.dry_run)
    doc = {"schema": 1, "environment": env, "probe": facts, "ops": {}, "what": __doc__.splitlines()[0]}
    arrays = {}
    try:
        for op, ptx in enumerate(DI.OPS):
            rec = doc["ops"][ptx] = {"groups": {}}
            for name, mode, n, log2_block, params in DI.groups():
                t = time.time()
                h, res = device.run(op, mode, n, log2_block, params, want_results=(mode == 1))
                arrays[key(ptx, name)] = h
                if res is not None:
                    arrays[key(ptx, "special results")] = res
                rec["groups"][name] = {"pairs": int(h.size) << log2_block, "log2_block": log2_block,
                                       "seconds": round(time.time() - t, 3)}
            print(f"[sfu_div] {ptx}: {sum(g['pairs'] for g in rec['groups'].values())} pairs", flush=True)
    finally:
        device.close()
    doc["seconds"] = round(time.time() - t0, 1)
    np.savez_compressed(out / f"{NAME}.npz", **arrays)
    tmp = out / f".{NAME}.json.tmp"
    tmp.write_text(json.dumps(doc, indent=1) + "\n")
    os.replace(tmp, out / f"{NAME}.json")
    print(f"[sfu_div] wrote {out / NAME}.json/.npz in {doc['seconds']} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
