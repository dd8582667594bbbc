"""The GPU side of the descriptor probes: build the module (nvcc, cached like gpu_check.build),
and launch the kernels in gpu_check.backends.cuda's context: the wgmma probes through pycuda
(scalars and pointers only, which its argument packing lays out as the kernel does), the TMA
kernel through driver.Kernel (kernelParams: see driver.py for why)."""
import subprocess
import tempfile
import time
from ctypes import c_int32, c_uint32, c_uint64
from pathlib import Path

import numpy as np

from layoutsim.archs import compile_target
from layoutsim.files import write_atomic

from .. import build as B
from . import driver, kernels, plan


def build(probes, target=None, use_cache=True):
    """(cubin bytes, seconds, nvcc command) for every probe plus the TMA kernel; target: the
    compile target (default sm_90's arch-specific one, which wgmma needs)."""
    target = target or compile_target("sm_90", arch_specific=True)
    src = kernels.module_source(probes)
    key = "desc_" + B.source_hash(src, target)
    path = B.cache_dir() / f"{key}.cubin"
    t0 = time.perf_counter()
    nvcc = B.nvcc_path()
    cmd = [nvcc or "nvcc", "-cubin", B.gencode(target), "-O3", "-std=c++17", "-o", "k.cubin", "k.cu"]
    if use_cache and path.exists():
        return path.read_bytes(), 0.0, " ".join(cmd) + " (cached)"
    if nvcc is None:
        raise B.BuildError("nvcc not found on PATH (install the CUDA toolkit)")
    with tempfile.TemporaryDirectory(prefix="desc_probe_") as tmp:
        write_atomic(Path(tmp) / "k.cu", src, "CUDA source")
        r = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True)
        if r.returncode:
            keep = B.cache_dir() / f"failed-{key}.cu"
            write_atomic(keep, src, "failed source")
            raise B.BuildError(f"nvcc failed (source kept at {keep}): {(r.stderr or r.stdout).strip()[:800]}")
        data = (Path(tmp) / "k.cubin").read_bytes()
    write_atomic(path, data, "cached cubin")
    return data, time.perf_counter() - t0, " ".join(cmd)


def sass_check(cubin, probes):
    """({kernel: matrix / TMA SASS ops}, the kernels that lack theirs); ({}, []) without cuobjdump."""
    ops = B.sass_summary(cubin)
    if not ops:
        return {}, []
    want = {p.name: "GMMA" for p in probes} | {kernels.TMA_NAME: "UTMALDG"}
    return ops, [k for k, w in want.items() if not any(w in o for o in ops.get(k, []))]


class CudaLab:
    """Launches on the GPU of a gpu_check CudaBackend."""

    def __init__(self, backend, cubin):
        self.backend = backend
        self.drv = backend.drv
        self.module = backend.load(cubin)
        self._fns = {}
        self._bases = {}
        self._tma = driver.Kernel(cubin, kernels.TMA_NAME)
        want = [size for _, size in kernels.TMA_PARAMS]
        self.tma_params = {"cubin": driver.cubin_params(cubin, kernels.TMA_NAME), "driver": self._tma.params()}
        if [size for _, size in self.tma_params["cubin"]] != want:
            raise RuntimeError(f"{kernels.TMA_NAME}: the cubin's parameters {self.tma_params['cubin']} are not "
                               f"the {want} bytes the launch passes")
        for name in {n for n in driver.kernel_names(cubin) if n != kernels.TMA_NAME}:
            params = driver.cubin_params(cubin, name)         # what pycuda's packing must match
            if [o for o, _ in params] != driver.packed_offsets([s for _, s in params]):
                raise RuntimeError(f"{name}: parameters at {params}, not where a packed buffer puts them")
        attr = getattr(self.drv.device_attribute, "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN", None)
        optin = backend.dev.get_attribute(attr) if attr is not None else None
        if optin is not None and optin < plan.SMEM_BYTES:
            raise RuntimeError(f"the GPU gives a block at most {optin} bytes of shared memory; the probes "
                               f"need {plan.SMEM_BYTES}")

    def environment(self):
        env = dict(self.backend.environment())
        env["nvcc"] = B.nvcc_version()
        env["tma_kernel_params"] = {k: [list(p) for p in v] for k, v in self.tma_params.items()}
        return env

    def healthy(self):
        """False once a fault has ended the context (nothing more can run in this process)."""
        try:
            self.drv.Context.synchronize()
            self.drv.mem_alloc(256).free()
            return True
        except Exception:   # noqa: BLE001 - any driver error here means the context is gone
            return False

    def _fn(self, name, smem):
        fn = self._fns.get(name)
        if fn is None:
            fn = self._fns[name] = self.module.get_function(name)
        fn.set_attribute(self.drv.function_attribute.MAX_DYNAMIC_SHARED_SIZE_BYTES, int(smem))
        return fn

    def _wgmma(self, probe, pairs, image, areg, ncases, repeat, grid):
        drv = self.drv
        out = np.zeros(1 + max(ncases, 1) * 128 * probe.wd, np.uint32)
        fn = self._fn(probe.name, plan.SMEM_BYTES)
        img = np.ascontiguousarray(image, np.uint8)
        fn(drv.In(np.ascontiguousarray(pairs, np.uint64).reshape(-1) if len(pairs) else np.zeros(2, np.uint64)),
           drv.In(img), np.uint32(img.size // 16), drv.In(np.ascontiguousarray(areg, np.uint32)), drv.Out(out),
           np.int32(ncases), np.int32(repeat), block=(128, 1, 1), grid=(grid, 1), shared=plan.SMEM_BYTES)
        drv.Context.synchronize()
        return out

    def smem_base(self, probe):
        if probe.name not in self._bases:
            out = self._wgmma(probe, np.zeros((0, 2), np.uint64), np.zeros(16, np.uint8),
                              np.zeros(128 * probe.wa, np.uint32), 0, 1, 1)
            self._bases[probe.name] = int(out[0])
        return self._bases[probe.name]

    def wgmma(self, probe, pairs, image, areg, repeat=1):
        n = len(pairs)
        sms = self.backend.dev.get_attribute(self.drv.device_attribute.MULTIPROCESSOR_COUNT)
        return self._wgmma(probe, pairs, image, areg, n, repeat, max(1, min(n, sms)))

    def tma(self, case, gvalues, region_bytes, repeat=1, via="param"):
        """Copy one box (case) of gvalues into a zeroed region; the kernel's output words. `via`:
        the tensor map as the __grid_constant__ parameter, or ("global") in global memory."""
        drv = self.drv
        g = drv.to_device(np.ascontiguousarray(gvalues))
        out_gpu = drv.mem_alloc(4 * (2 + region_bytes // 4))
        gmap = None
        try:
            tmap = driver.encode(driver.arguments(int(g), case.gdims, case.elem_bytes, case.box, case.swizzle))
            if via == "global":
                gmap = drv.to_device(np.frombuffer(tmap, np.uint8))
            co = list(case.coords) + [0] * (3 - len(case.coords))
            tx = int(np.prod(case.box)) * case.elem_bytes
            self._tma.launch([tmap, c_uint64(int(gmap) if gmap is not None else 0), c_uint32(case.dst),
                              c_int32(co[0]), c_int32(co[1]), c_int32(co[2]), c_int32(len(case.box)),
                              c_uint32(region_bytes), c_uint32(tx), c_uint64(int(out_gpu)), c_int32(repeat)],
                             shared=region_bytes + 16)
            drv.Context.synchronize()
            out = np.empty(2 + region_bytes // 4, np.uint32)
            drv.memcpy_dtoh(out, out_gpu)
        finally:
            for m in (g, out_gpu, gmap):
                if m is not None:
                    try:
                        m.free()
                    except Exception:   # noqa: BLE001 - a dead context: the launch's error is the news
                        pass
        return out
