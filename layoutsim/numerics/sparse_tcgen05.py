"""Structured sparsity of tcgen05.mma.sp's A (PTX ISA 9.x 9.7.16.10.8 'Sparse Matrices').

A is M x K with 50% zeros in each row; memory holds the M x K/2 kept values and the metadata maps
them to their K positions (9.7.16.10.8.1-2):
  .kind::tf32: 1:2, one 4-bit index per chunk of 2 elements; the only meaningful values are
      0b0100 (the kept element is the chunk's first) and 0b1110 (its second): the index names the
      chunk's two 16-bit halves the kept 32-bit element covers, as mma.sp's tf32 metadata does;
  .kind::f16, f8f6f4, i8: 2:4, one 4-bit index per chunk of 4 elements, two 2-bit positions (bits
      1:0 the first kept value's, 3:2 the second's); the only meaningful values are 0b0100, 0b1000,
      0b1100, 0b1001, 0b1101, 0b0110, 0b1110.
"Rest of the values result in undefined behavior": each is refused (LayoutsimError naming it).

Arithmetic (assumed: no source read here says, and MMA-Sim does not model .sp): the kind's dense
arithmetic on the logical A, K elements, blocks over logical k (the ISA: the metadata maps the K/2
values to the K elements "before performing the MMA operation"; the project's AMD SWMMAC rests on
the same assumption). For the f16 / tf32 / f8f6f4 kinds that is the chain of two dense MMAs of the
two K halves, each MMA-Sim's (tests/numerics/test_sparse_tcgen05.py). The other reading, one block
of the K/2 kept products (the dense datapath on the selected B rows), would round differently; no
GPU here can tell the two apart.
"""
import numpy as np

from ..errors import LayoutsimError

MEANINGFUL_24 = (0b0100, 0b1000, 0b1100, 0b1001, 0b1101, 0b0110, 0b1110)
TF32_POSITION = {0b0100: 0, 0b1110: 1}
SECTION = "PTX ISA 9.7.16.10.8"


def chunk(kind):
    """(kept, chunk size) of a kind's sparsity: (1, 2) for tf32, (2, 4) for f16 / f8f6f4 / i8."""
    if kind == "tf32":
        return 1, 2
    if kind in ("f16", "f8f6f4", "i8"):
        return 2, 4
    raise LayoutsimError(f"sparse .kind::{kind} is not modelled (tf32, f16, f8f6f4, i8 are)")


def positions(kind, index):
    """Positions int64 (..., chunks, kept) inside each chunk of the 4-bit metadata fields `index`
    (..., chunks); a value the ISA leaves undefined raises LayoutsimError naming the first."""
    index = np.asarray(index).astype(np.int64)
    if kind == "tf32":
        bad = ~np.isin(index, list(TF32_POSITION))
        pos = np.where(index == 0b1110, 1, 0)[..., None]
        legal = "0b0100, 0b1110"
    else:
        chunk(kind)
        bad = ~np.isin(index, MEANINGFUL_24)
        pos = np.stack([index & 3, index >> 2], axis=-1)
        legal = ", ".join(f"{v:#06b}" for v in MEANINGFUL_24)
    if bad.any():
        where = tuple(int(x) for x in np.argwhere(bad)[0])
        raise LayoutsimError(f"sparsity metadata {int(index[where]):#06b} at (row, chunk) {list(where[-2:])}: not a "
                             f"meaningful index of .kind::{kind} ({legal}); the ISA leaves the rest undefined "
                             f"({SECTION})")
    return pos


def expand(kind, values, index):
    """The logical A (..., M, K) raw bits from the kept values (..., M, K/2) and the metadata fields
    (..., M, K/chunk): each kept value at its position, zeros (raw 0) elsewhere."""
    kept, size = chunk(kind)
    values = np.asarray(values)
    pos = positions(kind, index)
    n = pos.shape[-2]
    if values.shape[-1] != n * kept:
        raise LayoutsimError(f"sparse A of .kind::{kind}: {values.shape[-1]} kept values per row for {n} metadata "
                             f"chunks (want {n * kept})")
    out = np.zeros(values.shape[:-1] + (n, size), values.dtype)
    np.put_along_axis(out, pos, values.reshape(values.shape[:-1] + (n, kept)), axis=-1)
    return out.reshape(values.shape[:-1] + (n * size,))


def check(kind, logical):
    """LayoutsimError unless the logical A (..., M, K) raw bits keep at most `kept` nonzero
    patterns in each chunk."""
    kept, size = chunk(kind)
    a = np.asarray(logical)
    if a.shape[-1] % size:
        raise LayoutsimError(f"sparse A of .kind::{kind}: K={a.shape[-1]} is not a multiple of {size}")
    count = (a.reshape(a.shape[:-1] + (-1, size)) != 0).sum(axis=-1)
    if (count > kept).any():
        where = tuple(int(x) for x in np.argwhere(count > kept)[0])
        raise LayoutsimError(f"A is not {kept}:{size} sparse: row {where[-2]}, k {size * where[-1]}.."
                             f"{size * where[-1] + size - 1} holds {int(count[where])} nonzero values ({SECTION})")
