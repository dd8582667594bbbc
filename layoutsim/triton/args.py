"""A Triton launch's arguments as the model takes them: arrays (numpy, CPU torch tensors, raw bits),
scalars, and the stand-ins Triton's binder specialises on."""
import numpy as np

from ..errors import LayoutsimError
from .compile import _Stand

# numpy dtype name (ml_dtypes for bfloat16 and fp8) -> Triton's element type name
TRITON_TYPES = {"bool": "int1", "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64",
                "uint8": "uint8", "uint16": "uint16", "uint32": "uint32", "uint64": "uint64",
                "float16": "float16", "float32": "float32", "float64": "float64", "bfloat16": "bfloat16",
                "float8_e4m3fn": "float8e4nv", "float8_e5m2": "float8e5"}
# raw-bit spellings for bits(): element format -> (numpy dtype name of the values, bits)
RAW = {"bf16": ("bfloat16", 16), "e4m3": ("float8_e4m3fn", 8), "e5m2": ("float8_e5m2", 8),
       "f16": ("float16", 16)}
PTR = 1 << 32               # the address stand-ins report: 512-byte aligned, as every model buffer is


class Bits:
    """An array of raw bits (uint8/uint16) that the kernel reads as `fmt` (bf16, e4m3, e5m2, f16)."""

    def __init__(self, array, fmt):
        if fmt not in RAW:
            raise LayoutsimError(f"bits(..., {fmt!r}): give one of {', '.join(RAW)}")
        a = np.asarray(array)
        width = RAW[fmt][1]
        if a.dtype.kind not in "ui" or a.dtype.itemsize * 8 != width:
            raise LayoutsimError(f"bits(..., {fmt!r}): give {width}-bit integers holding the raw bits, not {a.dtype}")
        from ..formats import numpy_dtype
        self.array, self.fmt = array, fmt
        self.view = a.view(numpy_dtype(RAW[fmt][0]))


def bits(array, fmt):
    """Pass raw bits as a tensor of `fmt`: layoutsim.triton.launch(k, grid, bits(raw_u16, "bf16"), ...)."""
    return Bits(array, fmt)


def _is_torch(a):
    return type(a).__module__.split(".")[0] == "torch" and hasattr(a, "data_ptr")


def as_array(a, name):
    """The numpy array a launch reads and writes for an array argument (a view of the caller's
    memory), or None when `a` is not an array."""
    if isinstance(a, Bits):
        a = a.view
    elif _is_torch(a):
        a = _torch_view(a, name)
    if not isinstance(a, np.ndarray):
        return None
    if a.dtype.name not in TRITON_TYPES:
        raise LayoutsimError(f"parameter {name}: an array of {a.dtype} has no Triton element type; give one of "
                             f"{', '.join(TRITON_TYPES)}")
    if not a.flags.c_contiguous:
        raise LayoutsimError(f"parameter {name}: a {a.shape} array that is not C-contiguous; Triton reads memory "
                             f"from the data pointer with the strides you pass, so give np.ascontiguousarray(...)")
    return a


def _torch_view(t, name):
    import torch
    if t.device.type != "cpu":
        raise LayoutsimError(f"parameter {name}: a tensor on {t.device}; the model runs CPU tensors")
    if not t.is_contiguous():
        raise LayoutsimError(f"parameter {name}: a non-contiguous tensor; give .contiguous()")
    special = {torch.bfloat16: (torch.int16, "bfloat16")}
    for attr, np_name in (("float8_e4m3fn", "float8_e4m3fn"), ("float8_e5m2", "float8_e5m2")):
        if hasattr(torch, attr):
            special[getattr(torch, attr)] = (torch.uint8, np_name)
    if t.dtype in special:
        raw, np_name = special[t.dtype]
        from ..formats import numpy_dtype
        return t.detach().view(raw).numpy().view(numpy_dtype(np_name))
    return t.detach().numpy()


def stand_in(a, name):
    """(what Triton's binder is given, the array or None); a host tensor descriptor:
    descriptors.argument."""
    arr = as_array(a, name)
    if arr is not None:
        import triton.language as tl
        return _Stand(getattr(tl, TRITON_TYPES[arr.dtype.name]), PTR), arr
    if isinstance(a, np.bool_):
        return bool(a), None
    if isinstance(a, np.integer):
        return int(a), None
    if isinstance(a, np.floating):
        return float(a), None
    return a, None


def scalar_value(value, ptype, name):
    """A non-array kernel argument as the PTX parameter takes it: the number in its .param type."""
    t = ptype.strip("*")
    if value is None:
        return np.uint64(0)
    if t in ("fp32", "f32"):
        return np.float32(value)
    if t in ("fp64", "f64"):
        return np.float64(value)
    if t in ("fp16", "bf16"):
        from ..formats import numpy_dtype
        return np.array(value, numpy_dtype("float16" if t == "fp16" else "bfloat16")).view(np.uint16)[()]
    ints = {"i1": np.int8, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "u1": np.uint8,
            "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64}
    if t in ints:
        if isinstance(value, float):
            raise LayoutsimError(f"parameter {name}: {value!r} is a float; the kernel was specialised for {t}")
        info = np.iinfo(ints[t])
        v = int(value)
        if not info.min <= v <= info.max:
            raise LayoutsimError(f"parameter {name}: {v} does not fit {t}")
        return ints[t](v)
    raise LayoutsimError(f"parameter {name}: a {t} argument is not supported by layoutsim.triton")
