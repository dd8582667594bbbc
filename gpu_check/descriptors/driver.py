"""The CUDA driver calls pycuda lacks, through ctypes on libcuda: cuTensorMapEncodeTiled, and a
kernel launch with kernelParams (`Kernel`); plus the parameter table a cubin carries for each
kernel (`cubin_params`, read from the ELF without any tool).

Why the TMA kernel is not launched through pycuda: pycuda packs the arguments into one buffer
(cuLaunchKernel's `extra`, CU_LAUNCH_PARAM_BUFFER_POINTER), which "places the burden on the
application of knowing each kernel parameter's size and alignment/padding" (CUDA driver API,
cuLaunchKernel). Its packing starts a 128-byte np.void at offset 0, but the sm_90 cubin puts a
`__grid_constant__ CUtensorMap` (alignas(128) in CUDA 13's cuda.h) at parameter offset 0x70,
because the parameter bank starts at constant-bank offset 0x210 (EIATTR_PARAM_CBANK) and the
alignment is of the absolute offset. With kernelParams "the number of kernel parameters and
their offsets and sizes ... [are] retrieved directly from the kernel's image", so no layout is
assumed here; `Kernel.params()` (cuFuncGetParamInfo) records the layout the driver used.
"""
import ctypes
import struct

from layoutsim import smem

DATA_TYPE = {1: 0, 2: 1, 4: 2}          # CU_TENSOR_MAP_DATA_TYPE_UINT8 / UINT16 / UINT32 (cuda.h)
MAP_BYTES = 128
MAP_ALIGN = 128                         # cuda.h asks 64 for the encode target; CUDA 13 aligns the type to 128
CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
EIATTR_KPARAM_INFO = 0x17
EIFMT_SVAL = 0x04
_LIB = None


class DriverError(RuntimeError):
    pass


def _lib():
    global _LIB
    if _LIB is None:
        lib = ctypes.CDLL("libcuda.so.1")
        P, I, U, Z = ctypes.c_void_p, ctypes.c_int, ctypes.c_uint, ctypes.c_size_t
        sig = {"cuTensorMapEncodeTiled": [P, I, ctypes.c_uint32, P, ctypes.POINTER(ctypes.c_uint64),
                                          ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_uint32),
                                          ctypes.POINTER(ctypes.c_uint32), I, I, I, I],
               "cuModuleLoadData": [ctypes.POINTER(P), P],
               "cuModuleGetFunction": [ctypes.POINTER(P), P, ctypes.c_char_p],
               "cuFuncSetAttribute": [P, I, I],
               "cuFuncGetParamInfo": [P, Z, ctypes.POINTER(Z), ctypes.POINTER(Z)],
               "cuLaunchKernel": [P, U, U, U, U, U, U, U, P, ctypes.POINTER(P), ctypes.POINTER(P)],
               "cuGetErrorName": [I, ctypes.POINTER(ctypes.c_char_p)]}
        for name, args in sig.items():
            f = getattr(lib, name, None)            # cuFuncGetParamInfo needs a CUDA 12.4+ driver
            if f is not None:
                f.restype, f.argtypes = ctypes.c_int, args
        _LIB = lib
    return _LIB


def _check(res, what):
    if res:
        name = ctypes.c_char_p()
        _lib().cuGetErrorName(res, ctypes.byref(name))
        raise DriverError(f"{what}: CUresult {res} ({(name.value or b'?').decode()})")


# ---- tensor maps -------------------------------------------------------------------------------
def arguments(gaddr, gdims, elem_bytes, box, swizzle):
    """The cuTensorMapEncodeTiled arguments (plain Python values, also what the log records)."""
    rank = len(box)
    strides = []
    acc = gdims[0] * elem_bytes
    for d in range(1, rank):
        strides.append(acc)
        acc *= gdims[d]
    return {"dataType": DATA_TYPE[elem_bytes], "rank": rank, "globalAddress": int(gaddr),
            "globalDim": [int(g) for g in gdims], "globalStrides": strides, "boxDim": [int(b) for b in box],
            "elementStrides": [1] * rank, "interleave": 0, "swizzle": smem.mode(swizzle).tma_code,
            "l2Promotion": 0, "oobFill": 0}


def encode(args):
    """The 128 CUtensorMap bytes for `arguments(...)` (raises DriverError on a CUresult)."""
    raw = ctypes.create_string_buffer(MAP_BYTES + MAP_ALIGN)
    addr = (ctypes.addressof(raw) + MAP_ALIGN - 1) // MAP_ALIGN * MAP_ALIGN
    r = args["rank"]
    u64, u32 = ctypes.c_uint64, ctypes.c_uint32
    _check(_lib().cuTensorMapEncodeTiled(
        addr, args["dataType"], r, args["globalAddress"],
        (u64 * r)(*args["globalDim"]), (u64 * max(1, r - 1))(*(args["globalStrides"] or [0])),
        (u32 * r)(*args["boxDim"]), (u32 * r)(*args["elementStrides"]),
        args["interleave"], args["swizzle"], args["l2Promotion"], args["oobFill"]),
        f"cuTensorMapEncodeTiled {args}")
    return ctypes.string_at(addr, MAP_BYTES)


# ---- launches with kernelParams -----------------------------------------------------------------
class Kernel:
    """One kernel of a cubin, loaded through the driver in the current (pycuda) context."""

    def __init__(self, cubin, name):
        lib = _lib()
        self.name = name
        self._image = ctypes.create_string_buffer(bytes(cubin), len(cubin))   # alive as long as the module
        self._module, self._fn = ctypes.c_void_p(), ctypes.c_void_p()
        _check(lib.cuModuleLoadData(ctypes.byref(self._module), ctypes.cast(self._image, ctypes.c_void_p)),
               "cuModuleLoadData")
        _check(lib.cuModuleGetFunction(ctypes.byref(self._fn), self._module, name.encode()),
               f"cuModuleGetFunction {name}")

    def params(self):
        """[(offset, size)] of every parameter, as the driver sees it (cuFuncGetParamInfo, CUDA 12.4+)."""
        out = []
        if getattr(_lib(), "cuFuncGetParamInfo", None) is None:
            return out
        off, size = ctypes.c_size_t(), ctypes.c_size_t()
        while _lib().cuFuncGetParamInfo(self._fn, len(out), ctypes.byref(off), ctypes.byref(size)) == 0:
            out.append((off.value, size.value))
        return out

    def launch(self, args, grid=(1, 1, 1), block=(128, 1, 1), shared=0):
        """Launch with `args` (ctypes values or byte strings, one per parameter, in order)."""
        lib = _lib()
        _check(lib.cuFuncSetAttribute(self._fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, int(shared)),
               f"cuFuncSetAttribute {self.name} dynamic shared memory {shared}")
        held = [ctypes.create_string_buffer(a, len(a)) if isinstance(a, bytes) else a for a in args]
        ptrs = (ctypes.c_void_p * len(held))(*[ctypes.addressof(a) for a in held])
        _check(lib.cuLaunchKernel(self._fn, *grid, *block, int(shared), None, ptrs, None),
               f"cuLaunchKernel {self.name}")


# ---- the cubin's own parameter table ------------------------------------------------------------
def _sections(elf):
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)
    heads = [struct.unpack_from("<IIQQQQIIQQ", elf, shoff + i * shentsize) for i in range(shnum)]
    names = heads[shstrndx][4]
    out = {}
    for h in heads:
        end = elf.index(b"\0", names + h[0])
        out[elf[names + h[0]:end].decode()] = elf[h[4]:h[4] + h[5]]
    return out


def packed_offsets(sizes):
    """Where an argument buffer packed with natural alignment (each scalar or pointer aligned to
    its own size, as pycuda's struct packing does) puts parameters of these sizes."""
    out, at = [], 0
    for size in sizes:
        at = -(-at // min(size, 8)) * min(size, 8)
        out.append(at)
        at += size
    return out


def cubin_params(cubin, kernel):
    """[(offset, size)] of each parameter of `kernel`, in order, from the cubin's .nv.info.<kernel>
    section (EIATTR_KPARAM_INFO records: index u32, ordinal u16, offset u16, then a word whose
    bits 18-31 hold the size; what `cuobjdump -elf` prints as Ordinal/Offset/Size)."""
    elf = bytes(cubin)
    if elf[:4] != b"\x7fELF":
        raise ValueError("not an ELF cubin")
    info = _sections(elf).get(f".nv.info.{kernel}")
    if info is None:
        raise KeyError(f"the cubin has no kernel {kernel}")
    i, params = 0, {}
    while i + 4 <= len(info):
        fmt, attr, val = struct.unpack_from("<BBH", info, i)
        i += 4
        if fmt != EIFMT_SVAL:
            continue
        if attr == EIATTR_KPARAM_INFO:
            _, ordinal, offset, word = struct.unpack_from("<IHHI", info, i)
            params[ordinal] = (offset, word >> 18)
        i += val
    return [params[k] for k in sorted(params)]


def kernel_names(cubin):
    """The kernels a cubin holds (its .nv.info.<kernel> sections)."""
    return sorted(n[len(".nv.info."):] for n in _sections(bytes(cubin)) if n.startswith(".nv.info."))
