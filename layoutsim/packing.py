"""Operand matrices <-> the 32-bit register words each lane holds, through a FragmentMap only.

The one place that turns matrices into per-lane register words and back. gpu_check packs the
words its kernels load and unpacks what they store with it; the simulator moves its registers
with it; nothing here knows a layout: every position comes from the catalog's `FragmentMap`
(`table[lane, reg, slot] -> (matrix, row, col)` and its inverse `holders`).

Words: uint32 [batch, lanes, words_per_lane(frag)]. Fragment register r of a lane is word r;
a 64-bit register (PTX .f64) is the pair of words 2r (low) and 2r+1 (high), as a 64-bit PTX
register is a pair of 32-bit hardware registers. Element `slot` of a register sits in bits
slot*w .. slot*w+w-1 (w = element bits).

Matrices: raw element bits [batch, matrices, rows, cols] (a 3-dimensional [batch, rows, cols]
is taken for single-matrix operands). `unpack` returns them in the element's raw dtype
(`layoutsim.formats.raw_dtype_of_width`), read from each element's first holder.

The index arrays of a map are built once and cached, so a pack or an unpack is a few numpy
fancy-indexing operations, vectorised over lanes and over the batch.
"""
import sys

import numpy as np

from .errors import LayoutsimError
from .formats import raw_dtype_of_width

_ALL64 = np.uint64(0xFFFFFFFFFFFFFFFF)
_CACHE = {}


def words_per_lane(frag):
    """32-bit words one lane holds for the operand."""
    return frag.regs * (frag.reg_bits // 32)


def _mask(bits):
    return np.uint64((1 << bits) - 1) if bits < 64 else _ALL64


class _FragmentIndex:
    """Index arrays of one FragmentMap (built once, see `_index`)."""

    def __init__(self, frag):
        self.frag = frag
        t = frag.table.astype(np.int64)                     # [lanes, regs, slots, 3]
        w = frag.elem_bits
        self.words = frag.reg_bits // 32                    # 32-bit words per fragment register
        self.dtype = raw_dtype_of_width(w)
        self.mask = _mask(w)
        # unpack: the first holder of every element
        h = frag.holders[..., 0, :].astype(np.int64)        # [m, r, c, 3]
        self.g_lane, self.g_reg = h[..., 0], h[..., 1]
        self.g_flat = h[..., 0] * frag.regs + h[..., 1]    # into [lanes * regs]
        self.g_shift = (h[..., 2] * w).astype(np.uint64)
        # pack: the element every used (lane, reg, slot) receives
        self.used = t[..., 0] >= 0                          # [lanes, regs, slots]
        tc = np.where(self.used[..., None], t, 0)
        self.s_m, self.s_r, self.s_c = tc[..., 0], tc[..., 1], tc[..., 2]
        _, nr, nc = frag.shape
        self.s_flat = (self.s_m * nr + self.s_r) * nc + self.s_c   # into a flattened operand
        self.all_used = bool(self.used.all())
        self.shifts = np.arange(frag.slots, dtype=np.uint64) * np.uint64(w)   # [slots]
        # bits of each register that the fragment writes (the others keep their old value)
        field = np.where(self.used, self.mask << self.shifts, np.uint64(0))
        self.written = np.bitwise_or.reduce(field, axis=2)  # [lanes, regs] uint64
        self.full = bool((self.written == _mask(frag.reg_bits)).all())
        # 8/16/32-bit elements in 32-bit registers are whole items of the words' bytes: an
        # element is item g_flat * (32 / w) + slot of the words viewed as w-bit integers
        # (little-endian: slot 0 is the low bits), so unpack is one gather of that view and a
        # full pack one gather viewed back as words
        self.items = self.words == 1 and w in (8, 16, 32) and sys.byteorder == "little"
        if self.items:
            self.g_item = self.g_flat * (32 // w) + h[..., 2]
            self.s_item = self.s_flat.reshape(frag.lanes, -1)   # [lanes, regs * slots]


def fragment_index(frag):
    """The gather/scatter index tables of a FragmentMap, built once per map (pack, unpack and the
    executor's register-level MMA operands, ptx/mma_regs.py, use them)."""
    p = _CACHE.get(id(frag))
    if p is None or p.frag is not frag:
        p = _CACHE[id(frag)] = _FragmentIndex(frag)
    return p


def join_words(words, n_words):
    """uint32 [..., regs*n_words] -> uint64 [..., regs] (low word first)."""
    w = np.asarray(words).astype(np.uint64)
    if n_words == 1:
        return w
    w = w.reshape(*w.shape[:-1], -1, n_words)
    return w[..., 0] | (w[..., 1] << np.uint64(32))


def split_words(regs, n_words):
    """uint64 [..., regs] -> uint32 [..., regs*n_words] (low word first)."""
    if n_words == 1:
        return regs.astype(np.uint32)
    lo = (regs & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    hi = (regs >> np.uint64(32)).astype(np.uint32)
    return np.stack([lo, hi], axis=-1).reshape(*regs.shape[:-1], -1)


def _batch_of_matrices(frag, mats):
    mats = np.asarray(mats)
    if mats.ndim == 3 and frag.shape[0] == 1:
        mats = mats[:, None]
    if mats.shape[1:] != tuple(frag.shape):
        raise LayoutsimError(f"matrices of shape {mats.shape[1:]} do not fit a fragment of shape {frag.shape}")
    return mats


def pack(frag, mats, old_words=None):
    """Register words from operand matrices: raw bits [batch, (matrices,) rows, cols] (any
    unsigned dtype) -> uint32 [batch, lanes, words].

    old_words: uint32 [batch, lanes, words] or None; bits of a register that the map leaves
    unused (gfx11's unused half of a 16-bit result) keep their old value (0 when None).
    """
    p = fragment_index(frag)
    m = _batch_of_matrices(frag, mats)
    if p.items and p.full and p.all_used and m.dtype == p.dtype:
        vals = np.ascontiguousarray(m).reshape(m.shape[0], -1).take(p.s_item, axis=1)
        return vals.view(np.uint32).reshape(m.shape[0], frag.lanes, frag.regs)
    dt = np.uint32 if p.words == 1 else np.uint64          # 32-bit registers: stay in uint32
    vals = m.reshape(m.shape[0], -1)[:, p.s_flat].astype(dt) & dt(p.mask)   # [batch, lanes, regs, slots]
    if p.all_used:                                         # every slot holds an element: shift and or
        regs = vals[..., 0].copy()
        for s in range(1, vals.shape[3]):
            regs |= vals[..., s] << dt(s * frag.elem_bits)
    else:
        vals = np.where(p.used, vals << p.shifts.astype(dt), dt(0))
        regs = np.bitwise_or.reduce(vals, axis=3)          # [batch, lanes, regs]
    if p.words == 1 and (p.full or old_words is None):
        return regs.astype(np.uint32, copy=False)
    regs = regs.astype(np.uint64)
    if not p.full and old_words is not None:
        regs = regs | (join_words(old_words, p.words) & ~p.written)
    return split_words(regs, p.words)


def unpack(frag, words):
    """Operand matrices from register words: uint32 [batch, lanes, words] -> raw element bits
    [batch, matrices, rows, cols] in the element's raw dtype (each element from its first holder)."""
    p = fragment_index(frag)
    words = np.asarray(words, np.uint32).reshape(-1, frag.lanes, words_per_lane(frag))
    if p.items:
        items = np.ascontiguousarray(words).view(p.dtype).reshape(words.shape[0], -1)
        return items.take(p.g_item, axis=1)
    if p.words == 1:                                       # 32-bit registers: stay in uint32
        vals = words.reshape(words.shape[0], -1)[:, p.g_flat]   # [batch, m, r, c]
        return ((vals >> p.g_shift.astype(np.uint32)) & np.uint32(p.mask)).astype(p.dtype)
    regs = join_words(words, p.words)
    vals = regs[:, p.g_lane, p.g_reg]                      # [batch, m, r, c]
    return ((vals >> p.g_shift) & p.mask).astype(p.dtype)


def slot_values(frag, words):
    """Every slot's element bits: uint32 [batch, lanes, words] -> uint64 [batch, lanes, regs, slots]."""
    p = fragment_index(frag)
    regs = join_words(np.asarray(words, np.uint32).reshape(-1, frag.lanes, words_per_lane(frag)), p.words)
    return (regs[..., None] >> p.shifts) & p.mask


def replica_disagreements(frag, words):
    """[(batch, matrix, row, col)] where replicated holders of one element hold different bits."""
    if frag.replication == 1:
        return []
    vals = slot_values(frag, words)
    h = frag.holders.astype(np.int64)
    v = vals[:, h[..., 0], h[..., 1], h[..., 2]]            # [batch, m, r, c, rep]
    bad = np.argwhere((v != v[..., :1]).any(-1))
    return [tuple(int(x) for x in b) for b in bad]


def squeeze_matrices(mats):
    """[batch, matrices, rows, cols] -> [batch, rows, cols] for a one-matrix operand; the matrix
    axis of a multi-block MFMA (one matrix per block) is kept."""
    return mats[:, 0] if mats.shape[1] == 1 else mats
