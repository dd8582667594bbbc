"""The argument makers of the Triton corpus's cases (cases.py): arrays from numpy's PCG64 (each a
function of the case's generator), the tables of device addresses a grouped GEMM reads (Addresses)
and host tensor descriptors (Desc, whose value is a DescInput)."""
import numpy as np

from layoutsim.formats import numpy_dtype


def _cast(values, dtype):
    """float64 values as `dtype`. An ml_dtypes float (bfloat16, float8_*) is reached through float32:
    ml_dtypes releases differ in how they convert float64 (some round once, some through float32,
    which rounds twice), and the GPU machine's release made the measured inputs through float32 (in
    liger_swiglu_mlp_bwd_di one bf16 input of 49,152 differed by one unit in the last place).
    Through float32 every release makes the same array."""
    dt = numpy_dtype(dtype)
    return np.asarray(values, np.float32 if ml_dtype(dt) else None).astype(dt)


def ml_dtype(dt):
    """Whether a dtype is one of ml_dtypes' (bfloat16, float8_*): numpy kind "V" in some versions,
    "f" in others."""
    return dt.kind == "V" or type(dt).__module__.startswith("ml_dtypes") or dt.type.__module__.startswith("ml_dtypes")


def _rows(shape, dtype="float32"):
    return lambda rng: _cast(rng.standard_normal(shape), dtype)


def _zeros(shape, dtype="float32"):
    return lambda rng: np.zeros(shape, numpy_dtype(dtype))


def _scaled(shape, scale, dtype="float32"):
    return lambda rng: _cast(scale * rng.standard_normal(shape), dtype)


def _uniform(shape, lo, hi, dtype="float32"):
    return lambda rng: _cast(rng.uniform(lo, hi, shape), dtype)


def _ints(shape, lo, hi, dtype):
    return lambda rng: rng.integers(lo, hi, shape, endpoint=True).astype(numpy_dtype(dtype))


def _values(values, dtype):
    return lambda rng: np.array(values, numpy_dtype(dtype))


def _shifted(shape, mean, scale, dtype="float32"):
    return lambda rng: _cast(mean + scale * rng.standard_normal(shape), dtype)


class Addresses:
    """An int64 array argument of device addresses: entry i is the address of argument `arg` plus
    offsets[i] bytes (the tables of matrix pointers a grouped GEMM reads). Its input is zeros; the
    launch fills it with the addresses of the machine that runs it (measure.py: the tensor's
    data_ptr() on the GPU; replay.arguments: the model's address of that argument), and it is no
    output: both record the zeros it was given."""

    def __init__(self, arg, offsets):
        self.arg, self.offsets = arg, tuple(int(o) for o in offsets)

    def __call__(self, rng):
        return np.zeros(len(self.offsets), np.int64)

    def __repr__(self):
        return f"Addresses(arg {self.arg} + {list(self.offsets)})"


class Desc:
    """A host tensor descriptor argument (triton.tools.tensor_descriptor.TensorDescriptor, as the
    package's host code builds it): over a fresh array (`source` an array maker) or over the array of
    an earlier Desc argument (`source` its index: liger's A, G and U are slices of one tensor), seen
    through `view` (a function applied alike to the numpy array and to the GPU's torch tensor, e.g.
    lambda a: a[..., :128]), with the block shape the package's pre_hook sets for the case's config.
    Its shape and strides are the view's (TensorDescriptor.from_tensor); its recorded output is the
    whole array it lies in."""

    def __init__(self, source, block, view=None):
        self.source, self.block, self.view = source, tuple(int(b) for b in block), view

    def __repr__(self):
        return f"Desc({self.source if isinstance(self.source, int) else 'array'}, block {list(self.block)})"


class DescInput:
    """A Desc argument's value: the array it lies in, and the TensorDescriptor fields of its view
    (duck-typed for layoutsim.triton.descriptors.expand, which needs no Triton)."""

    def __init__(self, owner, desc):
        self.owner, self.desc = owner, desc
        self.base = desc.view(owner) if desc.view else owner
        self.shape = [int(n) for n in self.base.shape]
        self.strides = [int(s) // self.base.itemsize for s in self.base.strides]
        self.block_shape, self.padding = list(desc.block), "zero"

    def __repr__(self):
        return f"DescInput({self.owner.dtype}{list(self.owner.shape)}, shape {self.shape}, block {self.block_shape})"
