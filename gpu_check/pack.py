"""Matrices <-> per-lane 32-bit register words, through a catalog FragmentMap only.

`pack(frag, mats)` turns raw element bits (n, [matrices,] rows, cols) into the words each lane
holds, (n, lanes, words): register r of a lane is word r (64-bit registers, f64: words 2r = low,
2r+1 = high), element `slot` of a register sits in bits slot*w .. slot*w+w-1. `unpack` is the
inverse. The kernels move these words and nothing else.
"""
import numpy as np


def words_per_lane(frag):
    return frag.regs * (frag.reg_bits // 32)


def _as4(frag, mats):
    mats = np.asarray(mats)
    nm = frag.shape[0]
    if mats.ndim == 3 and nm == 1:
        mats = mats[:, None]
    if mats.shape[1:] != tuple(frag.shape):
        raise ValueError(f"matrices of shape {mats.shape[1:]} do not fit a fragment of shape {frag.shape}")
    return mats


def pack(frag, mats):
    """(n, [m,] rows, cols) raw bits -> (n, lanes, words) uint32."""
    mats = _as4(frag, mats).astype(np.uint64)
    t = frag.table.astype(np.int64)
    used = t[..., 0] >= 0
    m, r, c = (np.where(used, t[..., i], 0) for i in range(3))
    w = frag.elem_bits
    mask = np.uint64((1 << w) - 1) if w < 64 else np.uint64(0xFFFFFFFFFFFFFFFF)
    vals = mats[:, m, r, c] & mask                                   # (n, lanes, regs, slots)
    vals = np.where(used[None], vals, np.uint64(0))
    shifts = (np.arange(frag.slots, dtype=np.uint64) * np.uint64(w))
    regs = np.bitwise_or.reduce(vals << shifts, axis=-1)             # (n, lanes, regs) uint64
    if frag.reg_bits == 64:
        lo = (regs & np.uint64(0xFFFFFFFF)).astype(np.uint32)
        hi = (regs >> np.uint64(32)).astype(np.uint32)
        return np.stack([lo, hi], axis=-1).reshape(regs.shape[0], frag.lanes, -1)
    return regs.astype(np.uint32)


def reg_values(frag, words):
    """(n, lanes, words) uint32 -> (n, lanes, regs, slots) uint64 element bits."""
    words = np.asarray(words, dtype=np.uint32)
    n = words.shape[0]
    words = words.reshape(n, frag.lanes, words_per_lane(frag)).astype(np.uint64)
    if frag.reg_bits == 64:
        regs = words[..., 0::2] | (words[..., 1::2] << np.uint64(32))
    else:
        regs = words
    w = frag.elem_bits
    mask = np.uint64((1 << w) - 1) if w < 64 else np.uint64(0xFFFFFFFFFFFFFFFF)
    shifts = np.arange(frag.slots, dtype=np.uint64) * np.uint64(w)
    return (regs[..., None] >> shifts) & mask


def unpack(frag, words):
    """(n, lanes, words) -> (n, matrices, rows, cols) uint64, read from each element's first holder."""
    vals = reg_values(frag, words)
    h = frag.holders[..., 0, :].astype(np.int64)                     # [m, r, c, (lane, reg, slot)]
    return vals[:, h[..., 0], h[..., 1], h[..., 2]]


def replica_disagreements(frag, words):
    """Positions where replicated holders of one element hold different bits (should be none)."""
    if frag.replication == 1:
        return []
    vals = reg_values(frag, words)
    h = frag.holders.astype(np.int64)
    v = vals[:, h[..., 0], h[..., 1], h[..., 2]]                     # (n, m, r, c, rep)
    bad = np.argwhere((v != v[..., :1]).any(-1))
    return [tuple(int(x) for x in b) for b in bad]
