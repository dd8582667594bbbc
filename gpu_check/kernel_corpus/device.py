"""One launch of a corpus case on an NVIDIA GPU through pycuda.

A case's module is either PTX text (the driver JIT-compiles it for the GPU, as cuModuleLoadData
does for any PTX) or a cubin made by ptxas. Arrays are copied to fresh device buffers, the kernel
runs once, and every array comes back: the final buffers, in argument order (None for scalars).
"""
import numpy as np

VARIANTS = {
    "sm_90": "the sm_90 PTX, JIT-compiled by the driver (cuModuleLoadData)",
    "sm_80": "the sm_80 PTX, JIT-compiled by the driver for the sm_90 GPU",
    "ptxas_sm_90": "the sm_90 PTX assembled by ptxas -arch=sm_90 (a cubin)",
}


def module_image(entry, variant, directory, cubins=None):
    """The bytes to load for one variant: NUL-terminated PTX, or a cubin from `cubins`."""
    from pathlib import Path
    if variant.startswith("ptxas_"):
        if not cubins or (entry["source"], variant) not in cubins:
            raise FileNotFoundError(f"no {variant} cubin for {entry['source']}")
        return cubins[entry["source"], variant]
    return (Path(directory) / entry["ptx"][variant]).read_bytes() + b"\0"


class Launcher:
    """Loads modules (cached by image) and runs cases in the current pycuda context."""

    def __init__(self, drv):
        self.drv = drv
        self._modules = {}

    def module(self, image):
        if image not in self._modules:
            self._modules[image] = self.drv.module_from_buffer(image)
        return self._modules[image]

    def run(self, image, entry, arrays):
        """Launch `entry` once with the given initial arrays; returns the final arrays."""
        drv = self.drv
        fn = self.module(image).get_function(entry["kernel"])
        if entry["shared_bytes"] > 48 * 1024:
            fn.set_attribute(drv.function_attribute.MAX_DYNAMIC_SHARED_SIZE_BYTES, entry["shared_bytes"])
        params, bufs = [], []
        from .corpus import launch_args
        for a, v in zip(entry["args"], launch_args(entry, arrays)):
            if a["kind"] == "array":
                host = np.ascontiguousarray(v)
                dev = drv.mem_alloc(max(1, host.nbytes))
                drv.memcpy_htod(dev, host.view(np.uint8).reshape(-1))
                bufs.append((dev, host))
                params.append(dev)
            else:
                bufs.append(None)
                params.append(v)
        try:
            fn(*params, grid=tuple(entry["grid"]), block=tuple(entry["block"]), shared=entry["shared_bytes"])
            drv.Context.synchronize()
            out = []
            for b in bufs:
                if b is None:
                    out.append(None)
                    continue
                dev, host = b
                back = np.empty_like(host)
                drv.memcpy_dtoh(back.view(np.uint8).reshape(-1), dev)
                out.append(back)
            return out
        finally:
            for b in bufs:
                if b is not None:
                    b[0].free()
