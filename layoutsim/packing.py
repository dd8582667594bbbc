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
        self.g_shift = (h[..., 2] * w).astype(np.uint64)
        # pack: the element every used (lane, reg, slot) receives
        self.used = t[..., 0] >= 0                          # [lanes, regs, slots]
        tc = np.where(self.used[..., None], t, 0)
        self.s_m, self.s_r, self.s_c = tc[..., 0], tc[..., 1], tc[..., 2]
        self.shifts = np.arange(frag.slots, dtype=np.uint64) * np.uint64(w)   # [slots]
        # bits of each register that the fragment writes (the others keep their old value)
        field = np.where(self.used, self.mask << self.shifts, np.uint64(0))
        self.written = np.bitwise_or.reduce(field, axis=2)  # [lanes, regs] uint64
        self.full = bool((self.written == _mask(frag.reg_bits)).all())


def _index(frag):
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
    p = _index(frag)
    m = _batch_of_matrices(frag, mats).astype(np.uint64) & p.mask
    vals = m[:, p.s_m, p.s_r, p.s_c]                       # [batch, lanes, regs, slots]
    vals = np.where(p.used, vals << p.shifts, np.uint64(0))
    regs = np.bitwise_or.reduce(vals, axis=3)              # [batch, lanes, regs]
    if not p.full and old_words is not None:
        regs = regs | (join_words(old_words, p.words) & ~p.written)
    return split_words(regs, p.words)


def unpack(frag, words):
    """Operand matrices from register words: uint32 [batch, lanes, words] -> raw element bits
    [batch, matrices, rows, cols] in the element's raw dtype (each element from its first holder)."""
    p = _index(frag)
    regs = join_words(np.asarray(words, np.uint32).reshape(-1, frag.lanes, words_per_lane(frag)), p.words)
    vals = regs[:, p.g_lane, p.g_reg]                      # [batch, m, r, c]
    return ((vals >> p.g_shift) & p.mask).astype(p.dtype)


def slot_values(frag, words):
    """Every slot's element bits: uint32 [batch, lanes, words] -> uint64 [batch, lanes, regs, slots]."""
    p = _index(frag)
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
