"""Launch the cluster probes on the GPU and keep every output buffer.

    python -m gpu_check.clusters.measure --out DIR

Runs every case of cases.py (tests/ptx/kernels/cluster.sm_90a.ptx, JIT-compiled by the driver)
with its cluster shape: pycuda 2026.1 has no cluster launch, so the kernel is loaded through the
driver (gpu_check/descriptors/driver.py, in pycuda's context) and launched with cuLaunchKernelEx
and the CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION attribute (cuda.h); the tensor maps are encoded with
cuTensorMapEncodeTiled. Writes DIR/clusters.npz (buffer k of case NAME under "NAME.k") and
DIR/clusters.json (device, driver, the cases, their arguments' shapes). Inputs are fixed, so
the executor's replay (tests/ptx/test_ptx_cluster_replay.py) must give the same bytes.
Commit the two files under tests/data/clusters/.
"""
import argparse
import ctypes
import datetime
import json
import struct
from pathlib import Path

import numpy as np
from layoutsim.files import source_tree

from . import cases as C

ROOT = source_tree()
CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4          # cuda.h CUlaunchAttributeID


class _Dim(ctypes.Structure):
    _fields_ = [("x", ctypes.c_uint), ("y", ctypes.c_uint), ("z", ctypes.c_uint)]


class _Value(ctypes.Union):                         # CUlaunchAttributeValue: 64 bytes
    _fields_ = [("pad", ctypes.c_char * 64), ("clusterDim", _Dim)]


class _Attr(ctypes.Structure):                      # CUlaunchAttribute: id, 4 bytes padding, value
    _fields_ = [("id", ctypes.c_int), ("pad", ctypes.c_char * 4), ("value", _Value)]


class _Config(ctypes.Structure):                    # CUlaunchConfig
    _fields_ = [("gridDimX", ctypes.c_uint), ("gridDimY", ctypes.c_uint), ("gridDimZ", ctypes.c_uint),
                ("blockDimX", ctypes.c_uint), ("blockDimY", ctypes.c_uint), ("blockDimZ", ctypes.c_uint),
                ("sharedMemBytes", ctypes.c_uint), ("hStream", ctypes.c_void_p),
                ("attrs", ctypes.POINTER(_Attr)), ("numAttrs", ctypes.c_uint)]


def launch_ex(kernel, params, grid, block, cluster, shared=0):
    """cuLaunchKernelEx of a driver.Kernel with byte-string parameters, on cluster shape `cluster`
    (None: no attribute; the kernel's own __cluster_dims__ apply)."""
    from gpu_check.descriptors import driver as D
    lib = D._lib()
    f = lib.cuLaunchKernelEx
    f.restype, f.argtypes = ctypes.c_int, [ctypes.POINTER(_Config), ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p),
                                           ctypes.POINTER(ctypes.c_void_p)]
    held = [ctypes.create_string_buffer(p, len(p)) for p in params]
    ptrs = (ctypes.c_void_p * len(held))(*[ctypes.addressof(h) for h in held])
    attr = _Attr()
    n = 0
    if cluster is not None:
        attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
        attr.value.clusterDim = _Dim(*cluster)
        n = 1
    cfg = _Config(*grid, *block, int(shared), None, ctypes.pointer(attr), n)
    D._check(f(ctypes.byref(cfg), kernel._fn, ptrs, None), f"cuLaunchKernelEx {kernel.name} cluster {cluster}")


def run_case(drv, kernel, case):
    """The case's final buffers (numpy arrays, in argument order; the tensor of a tensor map too)."""
    from gpu_check.descriptors import driver as D
    bufs, params = [], []
    for a in case["args"]:
        host = a["tensor"] if isinstance(a, dict) else a
        dev = drv.mem_alloc(max(1, host.nbytes))
        drv.memcpy_htod(dev, np.ascontiguousarray(host).view(np.uint8).reshape(-1))
        bufs.append((dev, host))
        if isinstance(a, dict):
            t = a["tensor"]
            params.append(D.encode(D.arguments(int(dev), t.shape[::-1], t.dtype.itemsize, a["box"], "none")))
        else:
            params.append(struct.pack("<Q", int(dev)))
    launch_ex(kernel, params, case["grid"], case["block"], case["cluster"])
    drv.Context.synchronize()
    out = []
    for dev, host in bufs:
        back = np.empty_like(host)
        drv.memcpy_dtoh(back.view(np.uint8).reshape(-1), dev)
        dev.free()
        out.append(back)
    return out


def start(argv, doc):
    """(pycuda.driver, gpu_check.descriptors.driver, the output folder) of a measure script's command
    line (--out DIR), in a pycuda context."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    import pycuda.autoinit  # noqa: F401  (the context)
    import pycuda.driver as drv
    from gpu_check.descriptors import driver as D
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    return drv, D, out


def finish(drv, out, stem, arrays, ptx, command, meta):
    """Write OUT/STEM.npz (the arrays) and OUT/STEM.json (device, driver, the PTX, date, the command,
    the cases' records)."""
    np.savez_compressed(out / f"{stem}.npz", **arrays)
    dev = drv.Device(0)
    info = {"device": dev.name(), "driver": drv.get_driver_version(), "ptx": ptx,
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "command": command, "cases": meta}
    (out / f"{stem}.json").write_text(json.dumps(info, indent=1) + "\n")
    print("wrote", out / f"{stem}.npz", out / f"{stem}.json")


def main(argv=None):
    drv, D, out = start(argv, __doc__)
    image = (ROOT / C.PTX).read_bytes() + b"\0"
    arrays, meta = {}, []
    kernels = {}
    for case in C.cases():
        k = kernels.get(case["kernel"]) or kernels.setdefault(case["kernel"], D.Kernel(image, case["kernel"]))
        got = run_case(drv, k, case)
        for i, a in enumerate(got):
            arrays[f"{case['name']}.{i}"] = a
        meta.append({"name": case["name"], "kernel": case["kernel"], "grid": case["grid"], "block": case["block"],
                     "cluster": case["cluster"], "buffers": [[list(a.shape), str(a.dtype)] for a in got]})
        print(case["name"], "ok", flush=True)
    finish(drv, out, "clusters", arrays, C.PTX, "python -m gpu_check.clusters.measure --out DIR", meta)


if __name__ == "__main__":
    main()
