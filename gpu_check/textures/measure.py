"""Measure texture fetches and surface loads/stores on the GPU, raw bits, for the executor's replay.

    python -m gpu_check.textures.measure --out DIR [--only NAME[,NAME...]] [--dry-run]

Every case of cases.py: a CUDA array of the case's format, channels and geometry (1D, 2D, 3D,
layered, cubemap) filled with the case's texels, a texture object (cuTexObjectCreate: address
modes, filter, read mode, normalized coordinates) or a surface object (cuSurfObjectCreate) over
it, and the probe kernel (probes.py, PTX JIT-compiled by the driver) run on the case's rows.
Written: DIR/textures.json (GPU, driver, date, the cases) and DIR/textures.npz (per case
`NAME/texels`, `NAME/in`, `NAME/out` and, for stores, `NAME/surface`: the array read back). Needs
pycuda and numpy only (arrays, copies and launches through pycuda; texture and surface objects
through the driver API by ctypes, which pycuda 2026.1 does not wrap). About 100 launches: seconds.
--dry-run runs the cases through the executor instead (no GPU: tests the driver of this script).
"""
import argparse
import ctypes
import datetime
import json
import re
import sys
from pathlib import Path

import numpy as np

from . import cases as C
from . import probes

ADDRESS = {"wrap": 0, "clamp": 1, "mirror": 2, "border": 3}       # CUaddress_mode
FILTER = {"point": 0, "linear": 1}                                # CUfilter_mode
READ_AS_INTEGER, NORMALIZED_COORDINATES = 0x1, 0x2                # CU_TRSF_*
FORMAT = {"u8": "UNSIGNED_INT8", "u16": "UNSIGNED_INT16", "u32": "UNSIGNED_INT32", "s8": "SIGNED_INT8",
          "s16": "SIGNED_INT16", "s32": "SIGNED_INT32", "f16": "HALF", "f32": "FLOAT"}   # pycuda's array_format
LAYERED, SURFACE_LDST, CUBEMAP = 0x01, 0x02, 0x04                 # CUDA_ARRAY3D_*


class ResourceDesc(ctypes.Structure):             # CUDA_RESOURCE_DESC (cuda.h), resType ARRAY (0)
    _fields_ = [("resType", ctypes.c_int), ("_pad", ctypes.c_int), ("res", ctypes.c_uint64 * 16),
                ("flags", ctypes.c_uint), ("_pad2", ctypes.c_uint)]


class TextureDesc(ctypes.Structure):              # CUDA_TEXTURE_DESC (cuda.h)
    _fields_ = [("addressMode", ctypes.c_int * 3), ("filterMode", ctypes.c_int), ("flags", ctypes.c_uint),
                ("maxAnisotropy", ctypes.c_uint), ("mipmapFilterMode", ctypes.c_int),
                ("mipmapLevelBias", ctypes.c_float), ("minMipmapLevelClamp", ctypes.c_float),
                ("maxMipmapLevelClamp", ctypes.c_float), ("borderColor", ctypes.c_float * 4),
                ("reserved", ctypes.c_int * 12)]


class Gpu:
    def __init__(self):
        import pycuda.autoinit  # noqa: F401  (creates the context)
        import pycuda.driver as drv
        self.drv = drv
        self.lib = ctypes.CDLL("libcuda.so.1")
        # one module per kernel: a kernel the driver refuses (its error recorded with its cases)
        # leaves the others measurable
        text = probes.module()
        head, *kernels = re.split(r"(?=^\.visible \.entry )", text, flags=re.M)
        self.modules = {}
        for k in kernels:
            name = re.match(r"\.visible \.entry (\w+)", k).group(1)
            try:
                self.modules[name] = drv.module_from_buffer((head + k).encode())
            except drv.Error as e:
                self.modules[name] = e
        self.keep = []

    def _check(self, rc, what):
        if rc != 0:
            raise RuntimeError(f"{what} failed: CUresult {rc}")

    def array(self, case, host):
        """A CUDA array holding `host` ((L,) (D,) (H,) W (, C)) and the copy extents."""
        drv, o = self.drv, case["obj"]
        geom = o["geom"]
        size = C.SIZES[geom]
        ch = o["channels"]
        layered = geom in ("a1d", "a2d")
        if geom == "cube":
            w, h, d = size[2], size[1], 6
        elif layered:
            w, h, d = size[-1], (size[1] if geom == "a2d" else 0), size[0]
        else:
            w, h, d = (tuple(reversed(size)) + (0, 0))[:3]
        desc = drv.ArrayDescriptor3D()
        desc.width, desc.height, desc.depth = w, h, d
        desc.format = getattr(drv.array_format, FORMAT[o["fmt"]])
        desc.num_channels = ch
        desc.flags = (LAYERED if layered else 0) | (CUBEMAP if geom == "cube" else 0) | \
            (SURFACE_LDST if o.get("surface") else 0)
        arr = drv.Array(desc)
        e = host.dtype.itemsize * ch
        self._copy(arr, np.ascontiguousarray(host), w * e, max(h, 1), max(d, 1), to_array=True)
        return arr, (w * e, max(h, 1), max(d, 1))

    def _copy(self, arr, host, wb, h, d, to_array):
        cp = self.drv.Memcpy3D()
        if to_array:
            cp.set_src_host(host)
            cp.src_pitch, cp.src_height = wb, h
            cp.set_dst_array(arr)
        else:
            cp.set_src_array(arr)
            cp.set_dst_host(host)
            cp.dst_pitch, cp.dst_height = wb, h
        cp.width_in_bytes, cp.height, cp.depth = wb, h, d
        cp()

    def obj(self, case, arr):
        res = ResourceDesc()
        res.resType = 0
        res.res[0] = arr.handle
        handle = ctypes.c_uint64()
        o = case["obj"]
        if o.get("surface"):
            self._check(self.lib.cuSurfObjectCreate(ctypes.byref(handle), ctypes.byref(res)), "cuSurfObjectCreate")
            return handle.value
        tex = TextureDesc()
        for k in range(3):
            tex.addressMode[k] = ADDRESS[o["address"]]
        tex.filterMode = FILTER[o["filter"]]
        as_int = o["read"] == "element" and o["fmt"] not in ("f16", "f32")    # cudaReadModeElementType
        tex.flags = (READ_AS_INTEGER if as_int else 0) | \
            (NORMALIZED_COORDINATES if o["normalized"] else 0)
        self._check(self.lib.cuTexObjectCreate(ctypes.byref(handle), ctypes.byref(res), ctypes.byref(tex), None),
                    "cuTexObjectCreate")
        return handle.value

    def run_case(self, case, host, rows):
        drv = self.drv
        arr, ext = self.array(case, host)
        h = self.obj(case, arr)
        n = case["n"]
        out = np.zeros((max(n, len(rows)), 4), np.uint32)
        d_in, d_out = drv.to_device(np.ascontiguousarray(rows)), drv.to_device(out)
        mod = self.modules[case["kernel"]]
        if isinstance(mod, Exception):
            raise RuntimeError(f"the driver refused kernel {case['kernel']}: {mod}")
        f = mod.get_function(case["kernel"])
        f(np.uint64(h), d_in, d_out, np.uint32(n), block=(min(128, n), 1, 1), grid=(-(-n // 128), 1))
        drv.Context.synchronize()
        out = drv.from_device_like(d_out, out)
        surf = None
        if case["kind"] == "sust":
            surf = np.empty_like(host)
            self._copy(arr, surf, *ext, to_array=False)
        destroy = self.lib.cuSurfObjectDestroy if case["obj"].get("surface") else self.lib.cuTexObjectDestroy
        self._check(destroy(ctypes.c_uint64(h)), "destroy")
        arr.free()
        return out, surf

    def meta(self):
        drv = self.drv
        dev = drv.Context.get_device()
        return {"gpu": dev.name(), "compute_capability": list(dev.compute_capability()),
                "driver": drv.get_driver_version(), "cuda": list(drv.get_version())}


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m gpu_check.textures.measure")
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", default="")
    ap.add_argument("--dry-run", action="store_true")
    a = ap.parse_args(argv)
    todo = [c for c in C.cases() if not a.only or c["name"] in a.only.split(",")]
    if a.dry_run:
        from . import replay
        run, meta = replay.run_case, {"gpu": "dry run: the executor (layoutsim.ptx), not a GPU"}
    else:
        gpu = Gpu()
        run, meta = gpu.run_case, gpu.meta()
    arrays, done = {}, []
    for case in todo:
        host, rows = C.inputs(case)
        try:
            out, surf = run(case, host, rows)
        except Exception as e:                      # one case's failure is recorded, not fatal
            print(f"{case['name']}: {type(e).__name__}: {e}", file=sys.stderr)
            done.append(dict(case, error=f"{type(e).__name__}: {e}"))
            continue
        arrays[f"{case['name']}/texels"], arrays[f"{case['name']}/in"] = host, rows
        arrays[f"{case['name']}/out"] = out
        if surf is not None:
            arrays[f"{case['name']}/surface"] = surf
        done.append(case)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    meta.update(date=datetime.date.today().isoformat(), ptx_probes="gpu_check/textures/probes.py",
                cases=done)
    np.savez_compressed(out / "textures.npz", **arrays)
    (out / "textures.json").write_text(json.dumps(meta, indent=1) + "\n")
    bad = sum("error" in c for c in done)
    print(f"{len(done) - bad} cases measured, {bad} failed -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
