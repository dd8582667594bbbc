"""One launch of a corpus case on an NVIDIA GPU through pycuda.

A case's module is either PTX text (the driver JIT-compiles it for the GPU, as cuModuleLoadData
does for any PTX) or a cubin made by ptxas. Arrays are copied to fresh device buffers, the kernel
runs once, and every array comes back: the final buffers, in argument order (None for scalars
and tensor maps). The "sm_90" variant is the PTX the case is built for the H200 (its sm_90 or,
for wgmma/TMA cases, sm_90a file); a case built without sm_80 has no "sm_80" variant.

A case with a tensor-map argument is launched through the driver API with kernelParams
(gpu_check/descriptors/driver.py: pycuda's argument buffer misplaces a 128-byte aligned
__grid_constant__ CUtensorMap); its maps are encoded there with cuTensorMapEncodeTiled over the
device buffer of the array they name, by value or, for form "pointer", in a device buffer of
their own. `drv.tensormap_driver`, when set, stands in for that module (tests).
"""
import struct

import numpy as np

from layoutsim.archs import SMEM_WITHOUT_OPT_IN, target_of_device

_SM90A = target_of_device("sm_90")      # what the wgmma/TMA cases are built for

VARIANTS = {
    "sm_90": f"the sm_90 PTX ({_SM90A} for wgmma/TMA cases), JIT-compiled by the driver (cuModuleLoadData)",
    "sm_80": "the sm_80 PTX, JIT-compiled by the driver for the sm_90 GPU",
    "ptxas_sm_90": f"the sm_90 PTX assembled by ptxas -arch=sm_90 (a cubin; {_SM90A} PTX by -arch={_SM90A})",
}


def has_variant(entry, variant):
    """Whether the case runs as this variant (sm_80: only cases built for sm_80)."""
    return variant != "sm_80" or "sm_80" in entry["ptx"]


def module_image(entry, variant, directory, cubins=None):
    """The bytes to load for one variant: NUL-terminated PTX, or a cubin from `cubins`."""
    from pathlib import Path

    from .corpus import run_ptx
    if variant.startswith("ptxas_"):
        if not cubins or (entry["source"], variant) not in cubins:
            raise FileNotFoundError(f"no {variant} cubin for {entry['source']}")
        return cubins[entry["source"], variant]
    if not has_variant(entry, variant):
        raise FileNotFoundError(f"{entry['name']} is not built for {variant}")
    name = run_ptx(entry) if variant == "sm_90" else entry["ptx"][variant]
    return (Path(directory) / name).read_bytes() + b"\0"


class Launcher:
    """Loads modules (cached by image) and runs cases in the current pycuda context."""

    def __init__(self, drv):
        self.drv = drv
        self._modules = {}
        self._kernels = {}

    def module(self, image):
        if image not in self._modules:
            self._modules[image] = self.drv.module_from_buffer(image)
        return self._modules[image]

    def run(self, image, entry, arrays):
        """Launch `entry` once with the given initial arrays; returns the final arrays."""
        if any(a["kind"] in ("tensormap", "bytes", "struct") for a in entry["args"]):
            return self._run_params(image, entry, arrays)
        drv = self.drv
        fn = self.module(image).get_function(entry["kernel"])
        if entry["shared_bytes"] > SMEM_WITHOUT_OPT_IN:
            fn.set_attribute(drv.function_attribute.MAX_DYNAMIC_SHARED_SIZE_BYTES, entry["shared_bytes"])
        from .corpus import arg_values, is_param
        values = arg_values(entry, arrays)
        self._copy_symbols(image, entry, values)
        bufs = self._upload(entry, values)
        params = [b[0] if b is not None else v for a, b, v in zip(entry["args"], bufs, values) if is_param(a)]
        try:
            fn(*params, grid=tuple(entry["grid"]), block=tuple(entry["block"]), shared=entry["shared_bytes"])
            return self._download(bufs)
        finally:
            _free(bufs)

    def _copy_symbols(self, image, entry, values):
        """cudaMemcpyToSymbol: each symbol argument's bytes into its module variable, from byte 0."""
        for a, v in zip(entry["args"], values):
            if a.get("symbol"):
                dev, size = self.module(image).get_global(a["symbol"])
                host = np.ascontiguousarray(v).view(np.uint8).reshape(-1)
                if host.nbytes > size:
                    raise ValueError(f"{entry['name']}: {host.nbytes} bytes for {a['symbol']}, which holds {size}")
                self.drv.memcpy_htod(dev, host)

    def _upload(self, entry, values):
        """[(device buffer, host array) for each array argument, None for the others (and for
        symbol arguments, which live in the module's variables)]."""
        out = []
        for a, v in zip(entry["args"], values):
            if a["kind"] != "array" or a.get("symbol"):
                out.append(None)
                continue
            host = np.ascontiguousarray(v)
            dev = self.drv.mem_alloc(max(1, host.nbytes))
            self.drv.memcpy_htod(dev, host.view(np.uint8).reshape(-1))
            out.append((dev, host))
        return out

    def _download(self, bufs):
        """After the launch: every array's final content (None for the other arguments)."""
        self.drv.Context.synchronize()
        out = []
        for b in bufs:
            if b is None or b[1] is None:
                out.append(None)
                continue
            dev, host = b
            back = np.empty_like(host)
            self.drv.memcpy_dtoh(back.view(np.uint8).reshape(-1), dev)
            out.append(back)
        return out

    # ---- cases with tensor maps: cuLaunchKernel with kernelParams --------------------------------
    def _driver(self):
        d = getattr(self.drv, "tensormap_driver", None)
        if d is None:
            from gpu_check.descriptors import driver as d
        return d

    def _run_params(self, image, entry, arrays):
        drv, d = self.drv, self._driver()
        key = (image, entry["kernel"])
        if key not in self._kernels:
            self._kernels[key] = d.Kernel(image, entry["kernel"])
        from .corpus import arg_values, is_param
        if any(a.get("symbol") for a in entry["args"]):
            raise ValueError(f"{entry['name']}: symbol arguments with struct or tensor-map parameters are not "
                             f"supported by this launcher")
        values = arg_values(entry, arrays)
        bufs, params = self._upload(entry, values), []
        try:
            for i, (a, v) in enumerate(zip(entry["args"], values)):
                if not is_param(a):                     # only a struct points to it
                    continue
                if a["kind"] == "struct":               # its bytes with the arrays' device addresses
                    raw = bytearray(v)
                    for off, j in a["pointers"]:
                        raw[off:off + 8] = struct.pack("<Q", int(bufs[j][0]))
                    params.append(bytes(raw))
                elif a["kind"] == "array":
                    params.append(struct.pack("<Q", int(bufs[i][0])))
                elif a["kind"] == "tensormap":
                    raw = d.encode(tensormap_arguments(a, int(bufs[a["buffer"]][0])))
                    if a["form"] == "pointer":              # the map in a device buffer of its own
                        dev = drv.mem_alloc(len(raw))
                        drv.memcpy_htod(dev, np.frombuffer(raw, np.uint8))
                        bufs.append((dev, None))
                        raw = struct.pack("<Q", int(dev))
                    params.append(raw)
                elif a["kind"] == "bytes":              # a by-value struct: its bytes as given
                    params.append(bytes(v))
                else:
                    params.append(np.asarray(v).tobytes())
            self._kernels[key].launch(params, grid=tuple(entry["grid"]), block=tuple(entry["block"]),
                                      shared=entry["shared_bytes"])
            return self._download(bufs)[:len(entry["args"])]
        finally:
            _free(bufs)


def _free(bufs):
    for b in bufs:
        if b is not None:
            b[0].free()


def tensormap_arguments(arg, address):
    """cuTensorMapEncodeTiled's arguments for a manifest tensor-map entry over the device buffer at
    `address` (dense strides, interleave, L2 promotion and OOB fill none; what driver.encode takes)."""
    from gpu_check.descriptors.driver import DATA_TYPE
    from layoutsim import smem
    from layoutsim.ptx.tensormap import dense_strides
    e = arg["elem_bytes"]
    rank = len(arg["dims"])
    return {"dataType": DATA_TYPE[e], "rank": rank, "globalAddress": int(address),
            "globalDim": [int(x) for x in arg["dims"]], "globalStrides": dense_strides(arg["dims"], e),
            "boxDim": [int(x) for x in arg["box"]], "elementStrides": [1] * rank, "interleave": 0,
            "swizzle": smem.mode(arg["swizzle"]).tma_code, "l2Promotion": 0, "oobFill": 0}
