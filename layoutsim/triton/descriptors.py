"""Host tensor descriptors (`triton.tools.tensor_descriptor.TensorDescriptor`) as a launch takes them.

A kernel parameter given a TensorDescriptor is specialised by Triton as `tensordesc<fp16[64, 64]>`
(its element type and block shape) and, per Triton 3.6's CUDA launcher
(triton/backends/nvidia/driver.py, make_launcher and make_tensordesc_arg), expands to PTX
parameters in one of two ways, which the compile's `tensordesc_meta` decides:
  * the kernel loads through TMA (meta given): a CUtensorMap by value (.param .align 64 .b8 [128]),
    then the shape as i32 and the strides as i64. The map is what Triton's fill_tma_descriptor
    encodes with cuTensorMapEncodeTiled: dimensions and box innermost first, byte strides of the
    outer dimensions, the compile's swizzle mode, interleave none, element strides 1; padding "nan"
    asks for the NaN fill, which layoutsim.ptx's tensor maps refuse;
  * it does not (meta None): the base pointer, shape and strides as i64, the NaN-padding flag as
    i1, then the shape as i32 and the strides as i64 again.

`descriptor(array, block_shape)` makes one over a numpy array (Triton's own class checks a torch
tensor's data_ptr(); this builds the same dataclass without that check, with its rules checked
here). The base may be a view into a larger array (`a.T`, a slice): the launch places the array
that owns the memory and points the descriptor at the view's first byte.
"""
import numpy as np

from ..errors import LayoutsimError
from ..ptx.tensormap import ENCODE_SWIZZLE, TensorMapArg
from . import args as A

MAX_RANK = 5


def _who(name):
    """How an error names the descriptor: a kernel parameter, or what the caller called it (--arg ...)."""
    return name if name.startswith(("--arg", "descriptor")) else f"parameter {name}"


def descriptor_class():
    from .compile import triton_modules
    triton_modules()
    from triton.tools.tensor_descriptor import TensorDescriptor
    return TensorDescriptor


def is_descriptor(value):
    """Whether a launch argument is a host tensor descriptor."""
    if type(value).__name__ != "TensorDescriptor":
        return False
    return isinstance(value, descriptor_class())


def descriptor(array, block_shape, shape=None, strides=None, padding="zero", name="descriptor"):
    """A TensorDescriptor over a numpy array (or CPU torch tensor): `shape` and `strides` (in
    elements) default to the array's own, as TensorDescriptor.from_tensor takes them; `name` is what
    an error calls it."""
    arr = _owner_view(array, name)
    shape = list(arr.shape if shape is None else shape)
    strides = list((s // arr.itemsize for s in arr.strides) if strides is None else strides)
    d = object.__new__(descriptor_class())
    d.base, d.shape, d.strides, d.block_shape, d.padding = array, shape, strides, list(block_shape), padding
    check(d, name)
    return d


def check(desc, name):
    """Triton's TensorDescriptor rules (tools/tensor_descriptor.py), each refused in one line."""
    rank = len(desc.shape)
    if not 0 < rank <= MAX_RANK or len(desc.strides) != rank or len(desc.block_shape) != rank:
        raise LayoutsimError(f"{_who(name)}: a tensor descriptor of shape {list(desc.shape)}, strides "
                             f"{list(desc.strides)} and block {list(desc.block_shape)}: give 1 to 5 dimensions, "
                             f"the same number in each")
    arr = _owner_view(desc.base, name)
    e = arr.itemsize
    if any(int(s) <= 0 for s in desc.shape):
        raise LayoutsimError(f"{_who(name)}: descriptor shape {list(desc.shape)}: every size must be positive")
    if int(desc.strides[-1]) != 1:
        raise LayoutsimError(f"{_who(name)}: descriptor strides {list(desc.strides)}: the last dimension must be "
                             f"contiguous (stride 1)")
    if any(int(s) * e % 16 for s in desc.strides[:-1]):
        raise LayoutsimError(f"{_who(name)}: descriptor strides {list(desc.strides)} of {e}-byte elements: each "
                             f"but the last must be a multiple of 16 bytes")
    if any(int(b) <= 0 or int(b) & (int(b) - 1) for b in desc.block_shape):
        raise LayoutsimError(f"{_who(name)}: descriptor block {list(desc.block_shape)}: each size must be a "
                             f"power of two")
    if desc.padding not in ("zero", "nan"):
        raise LayoutsimError(f"{_who(name)}: descriptor padding {desc.padding!r}: give 'zero' or 'nan'")
    owner, offset = placement(desc, name)
    if offset % 16:
        raise LayoutsimError(f"{_who(name)}: the descriptor's base is {offset} bytes into its array: it must be "
                             f"16-byte aligned")
    last = offset + e * sum((int(n) - 1) * int(s) for n, s in zip(desc.shape, desc.strides))
    if last + e > owner.nbytes or offset < 0:
        raise LayoutsimError(f"{_who(name)}: descriptor shape {list(desc.shape)} with strides "
                             f"{list(desc.strides)} reaches byte {last + e} of an array of {owner.nbytes} bytes")


def _owner_view(base, name):
    """The numpy view of a descriptor's base (ml_dtypes for bf16/fp8 torch tensors)."""
    if A._is_torch(base):
        import torch
        if base.device.type != "cpu":
            raise LayoutsimError(f"{_who(name)}: a descriptor over a tensor on {base.device}; the model runs CPU "
                                 f"tensors")
        flat = torch.empty(0, dtype=base.dtype).set_(base.untyped_storage(), 0,
                                                      (base.untyped_storage().nbytes() // base.element_size(),))
        whole = A._torch_view(flat, name)
        start = base.storage_offset()
        return np.lib.stride_tricks.as_strided(whole[start:], base.shape,
                                               tuple(s * base.element_size() for s in base.stride()))
    if isinstance(base, A.Bits):
        base = base.view
    if not isinstance(base, np.ndarray):
        raise LayoutsimError(f"{_who(name)}: a tensor descriptor's base must be a numpy array or a CPU torch "
                             f"tensor, not {type(base).__name__}")
    if base.dtype.name not in A.TRITON_TYPES:
        raise LayoutsimError(f"{_who(name)}: a descriptor over {base.dtype} has no Triton element type")
    return base


def placement(desc, name):
    """(the C-contiguous array that owns the base's memory, byte offset of the base in it)."""
    view = _owner_view(desc.base, name)
    owner = view
    while isinstance(owner.base, np.ndarray):
        owner = owner.base
    if not owner.flags.c_contiguous or owner.dtype.hasobject:
        raise LayoutsimError(f"{_who(name)}: the descriptor's base lies in an array that is not C-contiguous; "
                             f"give a view of a contiguous array")
    offset = view.__array_interface__["data"][0] - owner.__array_interface__["data"][0]
    if owner.dtype != view.dtype:
        if owner.nbytes % view.itemsize:
            raise LayoutsimError(f"{_who(name)}: the descriptor's base array does not hold whole {view.dtype}")
        owner = owner.reshape(-1).view(np.uint8).view(view.dtype)
    return owner, offset


def stand_in(desc, name):
    """What Triton's binder is given for a descriptor: the same dataclass over the base's stand-in,
    so Triton specialises it as `tensordesc<type[block]>` by its own rules."""
    check(desc, name)
    base, _ = A.stand_in(np.empty(0, _owner_view(desc.base, name).dtype), name)
    d = object.__new__(type(desc))
    d.base, d.shape, d.strides = base, [int(s) for s in desc.shape], [int(s) for s in desc.strides]
    d.block_shape, d.padding = [int(b) for b in desc.block_shape], desc.padding
    return d


def argument(a, name):
    """(what Triton's binder is given, the array or descriptor the launch keeps, or None) of any
    launch argument: a descriptor's stand-in (above) or args.stand_in's."""
    if is_descriptor(a):
        return stand_in(a, name), a
    return A.stand_in(a, name)


def width(meta, rank):
    """How many PTX parameters a descriptor of `rank` dimensions expands to (what expand returns):
    map, shape, strides; or base, shape and strides twice, and the padding flag."""
    return 1 + 2 * rank if meta is not None else 2 + 4 * rank


def expand(desc, meta, name):
    """(the PTX arguments of a descriptor parameter, their names, the array its base lies in):
    Triton 3.6's make_tensordesc_arg. The first argument (the map, or the base pointer) is the one
    whose Run.buffers entry is that array's final content."""
    owner, offset = placement(desc, name)
    shape, strides = [int(s) for s in desc.shape], [int(s) for s in desc.strides]
    ints = [np.int32(s) for s in shape] + [np.int64(s) for s in strides]
    int_names = [f"{name}.shape[{i}]" for i in range(len(shape))] + [f"{name}.strides[{i}]" for i in range(len(shape))]
    if meta is None:
        if offset:
            raise LayoutsimError(f"{_who(name)}: this kernel reads the descriptor through its base pointer, which "
                                 f"must be the start of its array (it is {offset} bytes in)")
        values = [owner] + [np.int64(v) for v in shape + strides] + [np.int8(desc.padding == "nan")] + ints
        names = [name] + [f"{name} (shape, strides)"] * (2 * len(shape)) + [f"{name}.padding"] + int_names
        return values, names, owner
    if meta.get("fp4_padded"):
        raise LayoutsimError(f"{_who(name)}: an FP4-padded tensor map (Blackwell's mxf4 operands) is not modelled")
    if meta["swizzle"] not in ENCODE_SWIZZLE:
        raise LayoutsimError(f"{_who(name)}: swizzle mode {meta['swizzle']} of the compile is not a CUtensorMap "
                             f"swizzle")
    e = int(meta["elem_size"])
    if e != owner.itemsize:
        raise LayoutsimError(f"{_who(name)}: the kernel was compiled for {e}-byte elements; the array has "
                             f"{owner.itemsize}-byte ones")
    tmap = TensorMapArg(buffer=owner, dims=tuple(reversed(shape)), box=tuple(int(b) for b in reversed(meta["block_size"])),
                        swizzle=ENCODE_SWIZZLE[meta["swizzle"]], elem_bytes=e,
                        strides_bytes=tuple(e * s for s in reversed(strides[:-1])), offset=offset,
                        oob_fill="nan" if desc.padding == "nan" else 0)
    return [tmap] + ints, [f"{name} (tensor map)"] + int_names, owner
