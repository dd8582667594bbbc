"""cuTensorMapEncodeTiled through ctypes on the CUDA driver library (pycuda does not wrap it).

`encode(...)` returns the 128-byte CUtensorMap as a numpy void scalar: pycuda passes np.void
arguments by value, which is what a `const __grid_constant__ CUtensorMap` parameter takes (it
must be the kernel's first parameter, so it sits at offset 0 with its 64-byte alignment).
"""
import ctypes

import numpy as np

from layoutsim import smem

DATA_TYPE = {1: 0, 2: 1, 4: 2}          # CU_TENSOR_MAP_DATA_TYPE_UINT8 / UINT16 / UINT32 (cuda.h)
_LIB = None


class EncodeError(RuntimeError):
    pass


def _lib():
    global _LIB
    if _LIB is None:
        _LIB = ctypes.CDLL("libcuda.so.1")
        f = _LIB.cuTensorMapEncodeTiled
        f.restype = ctypes.c_int
        f.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32, ctypes.c_void_p,
                      ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_uint64),
                      ctypes.POINTER(ctypes.c_uint32), ctypes.POINTER(ctypes.c_uint32),
                      ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int]
    return _LIB


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
    """The CUtensorMap bytes for `arguments(...)`, as np.void (raises EncodeError on a CUresult)."""
    raw = ctypes.create_string_buffer(128 + 64)
    addr = (ctypes.addressof(raw) + 63) // 64 * 64          # 64-byte aligned, as cuda.h requires
    r = args["rank"]
    u64, u32 = ctypes.c_uint64, ctypes.c_uint32
    res = _lib().cuTensorMapEncodeTiled(
        ctypes.c_void_p(addr), args["dataType"], r, ctypes.c_void_p(args["globalAddress"]),
        (u64 * r)(*args["globalDim"]), (u64 * max(1, r - 1))(*(args["globalStrides"] or [0])),
        (u32 * r)(*args["boxDim"]), (u32 * r)(*args["elementStrides"]),
        args["interleave"], args["swizzle"], args["l2Promotion"], args["oobFill"])
    if res != 0:
        raise EncodeError(f"cuTensorMapEncodeTiled returned CUresult {res} for {args}")
    data = ctypes.string_at(addr, 128)
    return np.frombuffer(data, dtype=np.dtype((np.void, 128)))[0]
