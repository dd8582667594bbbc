"""Operand matrices <-> the 32-bit register words each lane holds, for the collective core.

Words: uint32 [batch, lanes, words_per_lane(frag)]; matrices: raw element bits
[batch, matrices, rows, cols] (`matrices`, `words`) or, for the operands an MMA computes with,
[batch, rows, cols] for a one-matrix operand and [batch, blocks, rows, cols] for a multi-block
MFMA (`operand`, `accumulator words`). Every position comes from the catalog's FragmentMap
through `layoutsim.packing`.
"""
import numpy as np

from ..formats import raw_dtype_of_width
from ..packing import pack, squeeze_matrices, unpack, words_per_lane

n_words = words_per_lane


def matrices(frag, words):
    """uint32 [batch, lanes, words] -> raw bits [batch, matrices, rows, cols]."""
    return unpack(frag, words)


def words(frag, mats, old=None):
    """raw bits [batch, (matrices,) rows, cols] -> uint32 [batch, lanes, words]; the bits a map
    leaves unused keep `old`'s (uint32 [batch, lanes, words] or None: 0)."""
    return pack(frag, mats, old)


def operand(frag, words_):
    """The operand an MMA computes with: [batch, rows, cols] (one matrix) or
    [batch, blocks, rows, cols] (a multi-block MFMA), raw bits."""
    return squeeze_matrices(unpack(frag, words_))


def result_words(frag, D, old=None):
    """Register words of a result D (`operand`'s shape, raw bits or values of the element's
    width: a float32 D is its bits) -> uint32 [batch, lanes, words]."""
    D = np.asarray(D)
    if D.dtype.kind != "u":                          # same width: a view, whatever the strides
        D = D.view(np.dtype(f"u{D.dtype.itemsize}"))
    return pack(frag, D[:, None] if frag.shape[0] == 1 else D, old)


def zeros(frag, batch):
    """A zero operand of `frag`'s shape (`operand`'s convention) for `batch` warps."""
    shape = frag.shape[1:] if frag.shape[0] == 1 else frag.shape
    return np.zeros((batch, *shape), raw_dtype_of_width(frag.elem_bits))
