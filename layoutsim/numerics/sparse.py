"""2:4 structured sparsity of AMD gfx12 SWMMAC's A operand: compressed values and 4-bit index.

AMD "RDNA4" ISA guide, chapter 7 (SWMMAC), and AMD's matrix instruction calculator
(`--compression`): the logical A is M x K with at most 2 nonzero values in every group of 4
consecutive k (columns 4g..4g+3). The instruction takes the kept values as an M x K/2 matrix
(compressed column 2g and 2g+1 belong to group g) and one 4-bit field per (row, group): bits
[1:0] hold the position (0-3) inside the group of compressed column 2g, bits [3:2] that of
column 2g+1. This module converts between the logical A and that pair; it works on raw bits
and on values alike (an element the compressed form does not hold is 0 either way).

Not run on AMD hardware (no AMD GPU here). Two fields naming the same position would place two
values on one k; what the hardware then does is not documented, so `expand` rejects it.
"""
import numpy as np

from ..errors import LayoutsimError


def _check_k(k, what):
    if k % 4:
        raise LayoutsimError(f"{what}: K={k} is not a multiple of 4 (2:4 sparsity works on groups of 4)")


def expand(values, index, k):
    """Logical A (..., M, k) from compressed values (..., M, k/2) and 4-bit index fields
    (..., M, k/4), leading dimensions broadcast."""
    _check_k(k, "2:4 sparse A")
    values, index = np.asarray(values), np.asarray(index)
    if index.dtype.kind not in "iu":
        raise LayoutsimError(f"sparsity index: give integer 4-bit fields, not {index.dtype}")
    if values.ndim < 2 or values.shape[-1] != k // 2:
        raise LayoutsimError(f"compressed A must have shape (..., M, {k // 2}) for K={k}; got "
                             f"{values.shape}")
    if index.ndim < 2 or index.shape[-2:] != (values.shape[-2], k // 4):
        raise LayoutsimError(f"sparsity index must have shape (..., {values.shape[-2]}, {k // 4}) "
                             f"(one 4-bit field per row and group of 4 k); got {index.shape}")
    if ((index < 0) | (index > 15)).any():
        bad = index[(index < 0) | (index > 15)].flat[0]
        raise LayoutsimError(f"sparsity index field {int(bad)} is not a 4-bit value (0..15)")
    try:
        lead = np.broadcast_shapes(values.shape[:-2], index.shape[:-2])
    except ValueError:
        raise LayoutsimError(f"batch dimensions of the compressed A {values.shape[:-2]} and the "
                             f"sparsity index {index.shape[:-2]} do not broadcast") from None
    m = values.shape[-2]
    values = np.broadcast_to(values, lead + (m, k // 2))
    index = np.broadcast_to(index, lead + (m, k // 4)).astype(np.int64)
    p0, p1 = index & 3, index >> 2
    same = p0 == p1
    if same.any():
        *_, r, g = np.argwhere(same)[0]
        raise LayoutsimError(f"sparsity index row {r}, group {g} (k {4 * g}..{4 * g + 3}): both kept "
                             f"values name position {int(p0[same].flat[0])}; the two positions must "
                             f"differ")
    out = np.zeros(lead + (m, k // 4, 4), values.dtype)
    v = values.reshape(lead + (m, k // 4, 2))
    np.put_along_axis(out, p0[..., None], v[..., :1], axis=-1)
    np.put_along_axis(out, p1[..., None], v[..., 1:], axis=-1)
    return out.reshape(lead + (m, k))


PAIRS = tuple((p, q) for p in range(4) for q in range(p + 1, 4))   # the 6 valid fields (p < q)


def random_index(rng, shape):
    """Random valid 4-bit index fields of `shape` (..., M, K/4): two different positions per
    group, ascending (uint8)."""
    pick = np.array(PAIRS)[rng.integers(0, len(PAIRS), size=shape)]
    return (pick[..., 0] | (pick[..., 1] << 2)).astype(np.uint8)


def select(dense, index):
    """Compressed values (..., M, K/2): the elements of dense (..., M, K) at the two positions
    each 4-bit field of index (..., M, K/4) names; the other two of each group are dropped."""
    dense, index = np.asarray(dense), np.asarray(index).astype(np.int64)
    k = dense.shape[-1]
    _check_k(k, "A")
    groups = dense.reshape(dense.shape[:-1] + (k // 4, 4))
    pos = np.stack([index & 3, index >> 2], axis=-1)
    return np.take_along_axis(groups, pos, axis=-1).reshape(dense.shape[:-1] + (k // 2,))


def _groups(dense):
    """dense (..., M, K) as groups of 4 k (..., M, K/4, 4) and their nonzero mask, after
    checking that it is 2:4 sparse."""
    dense = np.asarray(dense)
    if dense.ndim < 2:
        raise LayoutsimError(f"2:4 sparse A must have shape (..., M, K); got {dense.shape}")
    k = dense.shape[-1]
    _check_k(k, "2:4 sparse A")
    groups = dense.reshape(dense.shape[:-1] + (k // 4, 4))
    nz = groups != 0
    count = nz.sum(axis=-1)
    if (count > 2).any():
        *_, r, g = np.argwhere(count > 2)[0]
        raise LayoutsimError(f"A is not 2:4 sparse: row {r}, k {4 * g}..{4 * g + 3} holds "
                             f"{int(count[..., r, g].max())} nonzero values (at most 2 of every 4)")
    return groups, nz


def check(dense):
    """Raise LayoutsimError unless dense (..., M, K) holds at most 2 nonzero elements in each
    group of 4 k."""
    _groups(dense)


def compress(dense):
    """(compressed values (..., M, K/2), 4-bit index (..., M, K/4) as uint8) of a logical A
    (..., M, K) with at most 2 nonzero elements in each group of 4 k. A group with fewer keeps
    zeros at its lowest free positions; the two positions of a group are always ascending."""
    groups, nz = _groups(dense)
    # positions: the nonzero ones first, then free ones, each in ascending order; keep 2, sort
    order = np.argsort(~nz, axis=-1, kind="stable")[..., :2]
    pos = np.sort(order, axis=-1)
    values = np.take_along_axis(groups, pos, axis=-1).reshape(groups.shape[:-2] + (-1,))
    index = (pos[..., 0] | (pos[..., 1] << 2)).astype(np.uint8)
    return values, index
