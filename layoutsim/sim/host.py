"""Host-side values of the simulated machine: snapshots, global buffers, plain-number arrays."""
import warnings

import numpy as np

from ..errors import LayoutsimError


class State:
    """A copy of everything an instruction may change (for tests and for undo)."""

    def __init__(self, m):
        self.regs = {k: v.copy() for k, v in m._regs.items()}
        self.smem = m.smem.copy()
        self.globals = {k: v.data.copy() for k, v in m._global.items()}
        self.trace_len = len(m.trace)

    def __eq__(self, other):
        return (isinstance(other, State) and self.trace_len == other.trace_len
                and self.regs.keys() == other.regs.keys()
                and all(np.array_equal(v, other.regs[k]) for k, v in self.regs.items())
                and np.array_equal(self.smem, other.smem)
                and self.globals.keys() == other.globals.keys()
                and all(np.array_equal(v, other.globals[k]) for k, v in self.globals.items()))


class Buffer:
    """A named global buffer: the bytes of an array, with its dtype and shape."""

    def __init__(self, array):
        a = np.ascontiguousarray(array)
        self.dtype, self.shape = a.dtype, a.shape
        self.data = a.reshape(-1).view(np.uint8).copy()

    def array(self, dtype=None):
        dt = np.dtype(dtype) if dtype is not None else self.dtype
        out = self.data.view(dt)
        return out.reshape(self.shape) if dt == self.dtype else out.copy()


def numeric_dtype(dtype, what):
    """np.dtype of a plain number type (bool, int, uint, float), else a one-line error."""
    try:
        with warnings.catch_warnings():           # numpy warns about some spellings it still reads
            warnings.simplefilter("ignore")
            dt = np.dtype(dtype)
    except (TypeError, ValueError):
        dt = None
    if dtype is None or dt is None or dt.kind not in "biuf" or dt.shape:
        raise LayoutsimError(f"{what}: dtype {dtype!r}: give a number type such as np.uint32, 'u2' or 'f4'")
    return dt


def numeric_array(array, what):
    """A contiguous array of plain numbers (the bytes are what matters), else a one-line error."""
    try:
        a = np.ascontiguousarray(array)
    except (TypeError, ValueError):
        a = None
    if a is None or a.dtype.kind not in "biuf":
        raise LayoutsimError(f"{what}: give an array of numbers (its bytes are copied), not "
                             f"{a.dtype if a is not None else type(array).__name__}")
    return a
