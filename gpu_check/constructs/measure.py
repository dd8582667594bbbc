"""Measure the constructs of issue 24 on the GPU: printf, assert, WARP_SZ and the shared-memory
special registers, griddepcontrol, bmsk, recursion, function pointers, f64 wmma, malloc/free,
movmatrix and the TMA reductions (cp.reduce.async.bulk).

    python -m gpu_check.constructs.measure --out DIR      # on the H200: writes DIR/constructs.json

kernels.cu (beside this file) is compiled once with nvcc to PTX (sm_90, -lineinfo); every launch
runs that PTX through pycuda in a process of its own (a failed assert ends the CUDA context), whose
stdout (the device printf) and stderr (the assert lines) are kept with its output buffers. The JSON
holds the PTX, each launch (kernel, grid, block, shared bytes, arguments) and what came back;
tests/ptx/test_constructs_replay.py runs the same PTX and launches on the executor and compares.
Needs nvcc, a GPU, numpy and pycuda; under a minute.
"""
import argparse
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import numpy as np

from gpu_check.needs import gpu_name

HERE = Path(__file__).resolve().parent
SEED = 24


def launches():
    """[(name, kernel, grid, block, shared bytes, [args])]: an arg is ("out", dtype, n) (zeros,
    copied back), ("in", dtype, values) or ("scalar", dtype, value)."""
    rng = np.random.default_rng(SEED)
    a = np.concatenate([np.arange(70), rng.integers(0, 1 << 32, 58, dtype=np.uint64)]).astype(np.uint32)
    b = np.concatenate([np.arange(70)[::-1], rng.integers(0, 1 << 32, 58, dtype=np.uint64)]).astype(np.uint32)
    x = lambda n: (rng.integers(-8, 8, n) / 4).tolist()          # exact in f64 products and sums
    return [
        ("printf", "k_printf", (2, 1, 1), (40, 1, 1), 0, [("out", "int32", 80)]),
        ("assert", "k_assert", (2, 1, 1), (32, 1, 1), 0, [("out", "int32", 64), ("scalar", "int32", 30)]),
        ("assert_passes", "k_assert", (1, 1, 1), (32, 1, 1), 0, [("out", "int32", 32), ("scalar", "int32", 32)]),
        ("sregs", "k_sregs", (1, 1, 1), (64, 1, 1), 256, [("out", "uint32", 64 * 9)]),
        ("griddepcontrol", "k_gdc", (1, 1, 1), (64, 1, 1), 0, [("out", "int32", 64)]),
        ("bmsk", "k_bmsk", (1, 1, 1), (128, 1, 1), 0, [("out", "uint32", 256), ("in", "uint32", a.tolist()),
                                                        ("in", "uint32", b.tolist())]),
        ("recursion", "k_recurse", (1, 1, 1), (32, 1, 1), 0, [("out", "uint32", 64), ("in", "uint32", [5])]),
        ("function_pointers", "k_fnptr", (1, 1, 1), (64, 1, 1), 0, [("out", "int32", 64)]),
        ("wmma_f64", "k_wmma_f64", (1, 1, 1), (32, 1, 1), 0, [("out", "float64", 64), ("in", "float64", x(32)),
                                                             ("in", "float64", x(32)), ("in", "float64", x(64))]),
        # 3 MiB blocks from the 8 MiB default heap: two fit, whatever the allocator's bookkeeping
        ("malloc", "k_malloc", (1, 1, 1), (32, 1, 1), 0, [("out", "int32", 4), ("scalar", "uint64", 3 << 20)]),
        ("malloc_small", "k_malloc", (1, 1, 1), (64, 1, 1), 0, [("out", "int32", 4), ("scalar", "uint64", 40)]),
        # added 2026-12-07: movmatrix and the TMA reductions (cp.reduce.async.bulk)
        ("movmatrix", "k_movmatrix", (2, 1, 1), (64, 1, 1), 0,
         [("out", "uint32", 128), ("in", "uint32", rng.integers(0, 1 << 32, 128, dtype=np.uint64).tolist())]),
        ("bulk_reduce", "k_bulk_reduce", (4, 1, 1), (128, 1, 1), 0,
         [("out", "uint32", 256), ("out", "int32", 256),
          ("in", "uint32", rng.integers(0, 1 << 32, 1024, dtype=np.uint64).tolist())]),
    ]


def smem_launches():
    """smem_probe.cu: where the user's shared memory starts and what the reserved-region registers
    read, and a 64-thread tile reduce whose scratch lives in the reserved region beside a static
    shared array (does the model keep them apart?)."""
    rng = np.random.default_rng(SEED)
    return [
        ("smem_addresses", "k_addr", (1, 1, 1), (32, 1, 1), 128, [("out", "uint32", 8)]),
        ("cg_tile64_reduce", "k_cg_tile", (2, 1, 1), (256, 1, 1), 0,
         [("out", "int32", 1024), ("in", "int32", rng.integers(-1000, 1000, 256).tolist())]),
    ]


# --set NAME: the kernels file beside this module and its launches; NAME.json is what is written
SETS = {"constructs": ("kernels.cu", launches), "smem": ("smem_probe.cu", smem_launches)}


def compile_ptx(source="kernels.cu"):
    out = subprocess.run(["nvcc", "-ptx", "-arch=sm_90", "-lineinfo", "-std=c++17", "-o", "-",
                          str(HERE / source)], capture_output=True, text=True, check=True)
    return out.stdout


def one(ptx_file, name, result_file, set_name="constructs"):
    """Run one launch in this process (pycuda), the output buffers into result_file."""
    import pycuda.autoinit  # noqa: F401 - creates the context
    import pycuda.driver as drv
    spec = {x[0]: x for x in SETS[set_name][1]()}[name]
    _, kernel, grid, block, shared, args = spec
    mod = drv.module_from_buffer(Path(ptx_file).read_bytes())
    fn = mod.get_function(kernel)
    call, outs = [], []
    for kind, dt, v in args:
        if kind == "scalar":
            call.append(np.dtype(dt).type(v))
            continue
        arr = np.zeros(v, dt) if kind == "out" else np.asarray(v, dt)
        call.append(drv.InOut(arr) if kind == "out" else drv.In(arr))
        if kind == "out":
            outs.append(arr)
    err = None
    try:
        fn(*call, grid=grid, block=block, shared=shared)
        drv.Context.synchronize()
    except drv.Error as e:                     # an assert: cudaErrorAssert, the context is gone
        err = str(e)
    sys.stdout.flush()
    Path(result_file).write_text(json.dumps({"error": err, "outputs": [o.tolist() for o in outs]}))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="folder for SET.json")
    ap.add_argument("--set", default="constructs", choices=sorted(SETS), help="which kernels (default constructs)")
    ap.add_argument("--one", nargs=3, metavar=("PTX", "NAME", "RESULT"), help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    source, launch_list = SETS[a.set]
    if a.one:
        return one(*a.one, set_name=a.set)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    ptx = compile_ptx(source)
    ptx_file = out / f"{a.set}.ptx"
    ptx_file.write_text(ptx)
    runs = []
    for name, kernel, grid, block, shared, args in launch_list():
        res = out / f"{name}.result.json"
        p = subprocess.run([sys.executable, "-m", "gpu_check.constructs.measure", "--out", str(out),
                            "--set", a.set, "--one", str(ptx_file), name, str(res)], capture_output=True, timeout=120,
                           cwd=HERE.parent.parent)
        got = json.loads(res.read_text()) if res.exists() else {"error": f"no result (exit {p.returncode})",
                                                                "outputs": None}
        runs.append({"name": name, "kernel": kernel, "grid": grid, "block": block, "shared_bytes": shared,
                     "args": [list(x) for x in args], "exit": p.returncode, "error": got["error"],
                     "outputs": got["outputs"], "stdout": p.stdout.decode("utf-8", "backslashreplace"),
                     "stderr": p.stderr.decode("utf-8", "backslashreplace")})
        print(f"{name}: exit {p.returncode}, error {got['error']}, {len(p.stdout)} bytes printed", flush=True)
    gpu = gpu_name()
    nvcc = subprocess.run(["nvcc", "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1]
    doc = {"gpu": gpu, "nvcc": nvcc, "host": platform.node(), "seed": SEED, "ptx": ptx, "launches": runs}
    tmp = out / f"{a.set}.json.tmp"
    tmp.write_text(json.dumps(doc, indent=1))
    os.replace(tmp, out / f"{a.set}.json")
    print(f"wrote {out / a.set}.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
