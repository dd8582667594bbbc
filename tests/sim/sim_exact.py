"""Test helper: an *exact* stand-in for layoutsim.mma (float64 / int64 arithmetic).

It agrees with the tensor core whenever every product and partial sum is exactly
representable, which is what the small-integer tests use. It lets the simulator's data
movement be checked for every catalog entry independently of the numerics module; the
bit-exact comparisons use the real `layoutsim.mma`.
"""
import zlib

import ml_dtypes
import numpy as np


def stable_seed(*parts):
    """A seed from names that is the same in every run (hash() of a str is salted per process)."""
    return zlib.crc32(repr(parts).encode())

_FLOAT = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "e4m3": ml_dtypes.float8_e4m3fn,
          "e5m2": ml_dtypes.float8_e5m2, "f32": np.float32, "f64": np.float64}
_OUT = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32, "s32": np.int32,
        "f64": np.float64}


def decode(fmt, raw):
    raw = np.asarray(raw)
    if fmt in _FLOAT:
        return raw.view(_FLOAT[fmt]).astype(np.float64)
    if fmt == "tf32":
        return (raw.astype(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32).astype(np.float64)
    if fmt in ("s8", "u8"):
        return raw.view(np.int8 if fmt == "s8" else np.uint8).astype(np.int64)
    if fmt in ("s4", "u4"):
        v = raw.astype(np.int64) & 0xF
        return np.where(v >= 8, v - 16, v) if fmt == "s4" else v
    if fmt == "s32":
        return raw.view(np.int32).astype(np.int64)
    raise KeyError(fmt)


def exact_mma(instr, a, b, c, arch=None):
    f = instr.formats
    A, B, C = decode(f["a"], a), decode(f["b"], b), decode(f["c"] if "c" in f else f["d"], c)
    D = np.einsum("...mk,...kn->...mn", A, B) + C
    if f["d"] == "s32":
        return (D.astype(np.int64) & 0xFFFFFFFF).astype(np.uint32).view(np.int32)
    return D.astype(_OUT[f["d"]])


def encode(fmt, values):
    """Raw bits of values in fmt (unsigned array of the element's width)."""
    v = np.asarray(values)
    if fmt in _FLOAT:
        arr = v.astype(_FLOAT[fmt])
        return arr.view(np.dtype(f"u{arr.dtype.itemsize}"))
    if fmt == "tf32":
        return v.astype(np.float32).view(np.uint32) & np.uint32(0xFFFFE000)
    if fmt in ("s8", "u8"):
        return v.astype(np.int64).astype(np.uint8)
    if fmt in ("s4", "u4"):
        return (v.astype(np.int64) & 0xF).astype(np.uint8)
    if fmt == "s32":
        return v.astype(np.int32).view(np.uint32)
    raise KeyError(fmt)
