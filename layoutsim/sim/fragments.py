"""Moving raw bits between per-lane registers and operand matrices, through a FragmentMap.

Nothing here knows a layout: every position comes from the catalog's `FragmentMap`
(`table[lane, reg, slot] -> (matrix, row, col)` and its inverse `holders`). The index arrays
are built once per map and cached, so a gather or a scatter is two numpy fancy-indexing
operations, vectorised over lanes and over a leading batch of warps.

Registers are 32-bit. A fragment whose registers are 64 bits wide (PTX .f64) takes two
consecutive 32-bit registers per fragment register: the low word first, as a 64-bit PTX
register is a pair of 32-bit hardware registers.
"""
import numpy as np

# element width in bits -> the unsigned dtype that holds one element's raw bits
# (4-bit elements sit in the low nibble of a uint8, as layoutsim.mma takes them)
ELEM_DTYPE = {4: np.uint8, 8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}

_CACHE = {}


class _Plan:
    """Index arrays for one FragmentMap (built once)."""

    def __init__(self, frag):
        self.frag = frag
        t = frag.table.astype(np.int64)                     # [lanes, regs, slots, 3]
        w = frag.elem_bits
        self.elem_bits = w
        self.words = frag.reg_bits // 32                    # 32-bit registers per fragment register
        self.n_regs32 = frag.regs * self.words
        self.dtype = ELEM_DTYPE[w]
        self.mask = np.uint64((1 << w) - 1) if w < 64 else np.uint64(0xFFFFFFFFFFFFFFFF)
        # gather: the first holder of every element (flat index lane * regs + reg)
        h = frag.holders[..., 0, :].astype(np.int64)        # [m, r, c, 3]
        self.g_lane, self.g_reg = h[..., 0], h[..., 1]
        self.g_flat = h[..., 0] * frag.regs + h[..., 1]
        self.g_shift = (h[..., 2] * w).astype(np.uint64)
        # scatter: the element every used (lane, reg, slot) receives
        self.used = t[..., 0] >= 0                          # [lanes, regs, slots]
        self.all_used = bool(self.used.all())
        tc = np.where(self.used[..., None], t, 0)
        self.s_m, self.s_r, self.s_c = tc[..., 0], tc[..., 1], tc[..., 2]
        _, nr, nc = frag.shape
        self.s_flat = (self.s_m * nr + self.s_r) * nc + self.s_c      # into a flattened operand
        self.s_shift = (np.arange(frag.slots, dtype=np.uint64) * np.uint64(w))   # [slots]
        # bits of each register that the fragment writes (others are preserved on scatter)
        field = np.where(self.used, self.mask << self.s_shift, np.uint64(0))
        self.written = np.bitwise_or.reduce(field, axis=2)   # [lanes, regs] uint64
        self.full = bool((self.written == np.uint64((1 << frag.reg_bits) - 1
                                                    if frag.reg_bits < 64 else 0xFFFFFFFFFFFFFFFF)).all())


def plan(frag):
    p = _CACHE.get(id(frag))
    if p is None or p.frag is not frag:
        p = _CACHE[id(frag)] = _Plan(frag)
    return p


def join_words(words, n_words):
    """uint32 [..., lanes, regs*n_words] -> uint64 [..., lanes, regs] (low word first)."""
    w = words.astype(np.uint64)
    if n_words == 1:
        return w
    w = w.reshape(*w.shape[:-1], -1, n_words)
    return w[..., 0] | (w[..., 1] << np.uint64(32))


def split_words(regs, n_words):
    """uint64 [..., lanes, regs] -> uint32 [..., lanes, regs*n_words] (low word first)."""
    if n_words == 1:
        return regs.astype(np.uint32)
    lo = (regs & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    hi = (regs >> np.uint64(32)).astype(np.uint32)
    return np.stack([lo, hi], axis=-1).reshape(*regs.shape[:-1], -1)


def gather(frag, words):
    """Operand matrices from registers.

    words: uint32 [batch, lanes, n_regs32] (the fragment's registers of each warp, in order).
    Returns raw element bits [batch, matrices, rows, cols] in the element's unsigned dtype.
    """
    p = plan(frag)
    if p.words == 1:                                       # 32-bit registers: stay in uint32
        regs = np.asarray(words, np.uint32).reshape(words.shape[0], -1)
        vals = regs[:, p.g_flat]                           # [batch, m, r, c]
        return ((vals >> p.g_shift.astype(np.uint32)) & np.uint32(p.mask)).astype(p.dtype)
    regs = join_words(words, p.words)                      # [batch, lanes, regs] uint64
    vals = regs[:, p.g_lane, p.g_reg]                      # [batch, m, r, c]
    return ((vals >> p.g_shift) & p.mask).astype(p.dtype)


def scatter(frag, mats, old_words=None):
    """Registers from operand matrices (the inverse of `gather`).

    mats: raw element bits [batch, matrices, rows, cols] (any unsigned dtype).
    old_words: uint32 [batch, lanes, n_regs32] or None; bits of a register that the map leaves
    unused (gfx11's unused half of a 16-bit result) keep their old value (0 when None).
    Returns uint32 [batch, lanes, n_regs32].
    """
    p = plan(frag)
    m = np.asarray(mats)
    dt = np.uint32 if p.words == 1 else np.uint64          # 32-bit registers: stay in uint32
    vals = m.reshape(m.shape[0], -1)[:, p.s_flat].astype(dt) & dt(p.mask)   # [batch, lanes, regs, slots]
    if p.all_used:                                         # every slot holds an element: shift and or
        regs = vals[..., 0].copy()
        for s in range(1, vals.shape[3]):
            regs |= vals[..., s] << dt(s * p.elem_bits)
    else:
        vals = np.where(p.used, vals << p.s_shift.astype(dt), dt(0))
        regs = np.bitwise_or.reduce(vals, axis=3)          # [batch, lanes, regs]
    if p.words == 1 and (p.full or old_words is None):
        return regs.astype(np.uint32, copy=False)
    regs = regs.astype(np.uint64)
    if not p.full and old_words is not None:
        regs = regs | (join_words(old_words, p.words) & ~p.written)
    return split_words(regs, p.words)
