"""nvcuda::wmma load / store / mma on whole warps: where each element of a fragment's matrix lies
(base address, leading dimension, row/col layout), how it reaches the registers (the catalog's
measured fragment maps), and an mma as the sequence of mma.sync tiles ptxas emits.

Which fragment map and which tile sequence an instruction has is the caller's (the PTX executor
reads both from its sm_90 data, layoutsim/ptx/wmma.py); this module moves and computes.
"""
import functools

import numpy as np

from ..formats import decode, encode
from ..numerics import mma as numeric_mma
from ..packing import pack, unpack
from .mma import planned


def element_addresses(layout, rows, cols, base, stride, esize):
    """int64 [batch, rows, cols]: the byte address of every element of each warp's matrix;
    base, stride: [batch] (stride in elements, the leading dimension)."""
    rr, cc = _grid(rows, cols)
    st = np.asarray(stride)[:, None, None]
    off = (rr * st + cc) if layout == "row" else (cc * st + rr)
    return np.asarray(base)[:, None, None] + off * esize


@functools.lru_cache(maxsize=None)
def _grid(rows, cols):
    """(row, col) index grids of a rows x cols matrix, built once per shape."""
    return np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")


def load(frag, unit, flat, esize):
    """wmma.load: register words uint32 [batch, 32, n] of the matrices whose elements lie at byte
    offsets `flat` [batch, rows, cols] of memory seen as `esize`-byte units (`unit`)."""
    mats = unit[flat // esize].reshape(-1, 1, *flat.shape[1:])
    return pack(frag, mats).reshape(flat.shape[0], frag.lanes, -1)


def store(frag, unit, flat, esize, words):
    """wmma.store: write the matrices the register words hold (uint32 [batch, 32, n]) at byte
    offsets `flat` of `unit` (memory as `esize`-byte units)."""
    unit[flat // esize] = unpack(frag, words)[:, 0].astype(f"<u{esize}")


def element_positions(frag):
    """[32, n_elems] (row, col) of each lane's x[i] (the fragment table flattened register-major)."""
    t = frag.table
    return t.reshape(t.shape[0], -1, 3)[..., 1:]


def register_positions(frag, reg):
    """[lanes * slots, 3] (matrix, row, col) of the elements register `reg` holds across the warp."""
    return frag.table[:, reg].reshape(-1, 3)


def tiled(plan, A, B, C, arch):
    """D (raw bits, [n, M, N]) = A [n, M, K] x B [n, K, N] + C [n, M, N] as `plan`'s tile
    sequence (plan: tile (catalog mma.sync name), tile_shape, transposed, c, d, acc types)."""
    if plan.transposed:
        return np.swapaxes(_tiles(plan, np.swapaxes(B, 1, 2), np.swapaxes(A, 1, 2),
                                  np.swapaxes(C, 1, 2), arch), 1, 2)
    if plan.c != plan.acc:                       # f16 C into an f32 tile: exact widening
        C = encode(plan.acc, decode(plan.c, C))
    D = _tiles(plan, A, B, C, arch)
    if plan.d != plan.acc:                       # f32 tile result stored as f16: round to nearest
        D = encode(plan.d, decode(plan.acc, D))
    return D


def _tiles(plan, A, B, C, arch):
    n, M, K = A.shape
    N = B.shape[2]
    mt, nt, kt = plan.tile_shape
    I, J, KK = M // mt, N // nt, K // kt
    acc = C.reshape(n, I, mt, J, nt).transpose(0, 1, 3, 2, 4).reshape(n * I * J, mt, nt)
    for k in range(KK):
        a = A[:, :, k * kt:(k + 1) * kt].reshape(n, I, mt, kt)
        b = B[:, k * kt:(k + 1) * kt, :].reshape(n, kt, J, nt)
        a = np.broadcast_to(a[:, :, None], (n, I, J, mt, kt)).reshape(n * I * J, mt, kt)
        b = np.broadcast_to(b.transpose(0, 2, 1, 3)[:, None], (n, I, J, kt, nt)).reshape(n * I * J, kt, nt)
        a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
        D = planned(plan.tile, arch, a, b, acc)          # the tile's Plan made once (warpcore.mma)
        acc = D if D is not None else numeric_mma(plan.tile, a, b, acc, arch=arch, raw=True)
    return acc.reshape(n, I, J, mt, nt).transpose(0, 1, 3, 2, 4).reshape(n, M, N)
