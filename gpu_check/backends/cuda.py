"""NVIDIA backend on pycuda (imported when a backend is made, never at module import)."""
import datetime
import platform

import numpy as np

from layoutsim.archs import SMEM_WITHOUT_OPT_IN, target_of_device

from . import Unavailable


class CudaBackend:
    vendor = "nvidia"

    def __init__(self, device=0):
        try:
            import pycuda
            import pycuda.driver as drv
        except ImportError as e:
            raise Unavailable(f"pycuda is not installed ({e.__class__.__name__}: {e}); "
                              "install it with pip install '.[gpu]'") from None
        try:
            drv.init()
            n = drv.Device.count()
        except Exception as e:   # noqa: BLE001 - the driver's message is the explanation
            msg = str(e).strip().splitlines()[0] if str(e).strip() else repr(e)
            raise Unavailable(f"no CUDA driver or GPU: {msg}") from None
        if n == 0:
            raise Unavailable("no CUDA GPU found (pycuda sees 0 devices)")
        self.drv = drv
        self.pycuda_version = getattr(pycuda, "VERSION_TEXT", None) or ".".join(map(str, pycuda.VERSION))
        self.dev = drv.Device(device)
        self.ctx = self.dev.make_context()
        import atexit
        atexit.register(self._close)
        self._modules = {}

    def _close(self):
        if self.ctx is None:
            return
        try:
            self.ctx.pop()
        except Exception:   # noqa: BLE001
            pass
        self.ctx = None

    def release(self):
        """Give the GPU context up (before another process, e.g. ncu, uses the GPU)."""
        self._close()

    # ---- what we run on ---------------------------------------------------------------
    @property
    def compute_capability(self):
        return self.dev.compute_capability()

    @property
    def arch(self):
        major, minor = self.compute_capability
        return f"sm_{major}{minor}"

    @property
    def target(self):
        """Compile target: the arch-specific one where it exists (Hopper's, for wgmma), else the arch."""
        return target_of_device(self.arch)

    def environment(self):
        drv = self.drv
        dv = drv.get_driver_version()
        cv = drv.get_version()
        return {
            "backend": "cuda (pycuda)",
            "gpu": self.dev.name(),
            "compute_capability": "%d.%d" % self.compute_capability,
            "arch": self.arch,
            "sm_count": self.dev.get_attribute(drv.device_attribute.MULTIPROCESSOR_COUNT),
            "driver": _driver_string(dv),
            "cuda_driver_api": f"{dv // 1000}.{(dv % 1000) // 10}",
            "cuda_pycuda_built_with": ".".join(map(str, cv)),
            "pycuda": self.pycuda_version,
            "python": platform.python_version(),
            "host": platform.node(),
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        }

    # ---- modules and launches ---------------------------------------------------------
    def load(self, cubin):
        return self.drv.module_from_buffer(cubin)

    def launch(self, module, spec, inp, ncases):
        """Run spec's kernel over ncases cases: inp is (ncases, in_words) uint32; returns out."""
        drv = self.drv
        inp = np.ascontiguousarray(inp, dtype=np.uint32).reshape(-1)
        if inp.size != ncases * spec.in_words:
            raise ValueError(f"{spec.name}: {inp.size} input words for {ncases} cases of {spec.in_words}")
        out = np.zeros(max(1, ncases * spec.out_words), np.uint32)
        aux = np.ascontiguousarray(spec.aux, dtype=np.uint32)
        fn = module.get_function(spec.name)
        if spec.smem_bytes > SMEM_WITHOUT_OPT_IN:
            fn.set_attribute(drv.function_attribute.MAX_DYNAMIC_SHARED_SIZE_BYTES, spec.smem_bytes)
        fn(drv.In(inp if inp.size else np.zeros(1, np.uint32)), drv.In(aux), drv.Out(out), np.int32(ncases),
           block=(spec.threads, 1, 1), grid=(spec.grid(ncases), 1), shared=spec.smem_bytes)
        drv.Context.synchronize()
        return out


def _driver_string(v):
    """The kernel driver's version (e.g. 570.124.06) when nvidia-smi or /proc says it."""
    try:
        with open("/proc/driver/nvidia/version") as f:
            line = f.readline()
        import re
        m = re.search(r"Kernel Module\s+([0-9.]+)", line) or re.search(r"\s([0-9]{3,}\.[0-9.]+)\s", line)
        if m:
            return m.group(1)
    except OSError:
        pass
    try:
        import subprocess
        r = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                           capture_output=True, text=True, timeout=20)
        if r.returncode == 0 and r.stdout.strip():
            return r.stdout.strip().splitlines()[0]
    except Exception:   # noqa: BLE001
        pass
    return f"CUDA driver API {v // 1000}.{(v % 1000) // 10}"
