"""Whole-warp MMA operands straight from the batch's registers, and D straight back: one gather
per operand, one for D.

The general path (ops_matrix.read_words / write_words around warpcore.mma) stacks each operand's
registers into per-lane words, unpacks them through the fragment map, and packs D into words
that it then splits into registers again: about twenty numpy calls per mma.sync step, which cost
more than the arithmetic on the few warps of a step. Where every element of every operand is a
whole 8/16/32-bit item of a 32-bit register (packing.fragment_index(...).items) and D fills every
bit of its registers, those moves are each one fancy index over the registers viewed as items:
the element positions are the same FragmentMap tables (packing's g_item / s_item), composed
with where a lane's register lives in the batch (register r of thread t is item
(r * T + t) * slots + slot of the operand's registers stacked in order). Anything else takes the
general path.
"""
import numpy as np

from ..packing import fragment_index


def plan(b, ins, regs, frags):
    """(gather A, gather B, gather C, scatter D) for the register lists regs = (a, b, c, d) and the
    FragmentMaps frags = (A, B, C, D), or None where the general path must run."""
    moves = []
    for k, (ops, frag) in enumerate(zip(regs, frags)):
        plain = b.plain_words(ops, ins)
        p = fragment_index(frag)
        if plain is None or not p.items or frag.shape[0] != 1 or frag.lanes != 32 or len(plain[0]) != frag.regs:
            return None
        if k == 3 and not (p.full and p.all_used):
            return None
        moves.append((Gather if k < 3 else Scatter)(frag, p, *plain))
    return moves


class Gather:
    """bt, warps -> raw element bits [n warps, rows, cols] of one operand (unpack's dtype)."""

    def __init__(self, frag, p, slots, storage):
        self.slots, self.dtype = list(slots), p.dtype
        self.per = 32 // frag.elem_bits                      # items per register
        self.shape = frag.shape[1:]
        g = np.asarray(p.g_item, np.int64).reshape(self.shape)   # item in [lanes, regs * per]
        lane, rest = np.divmod(g, frag.regs * self.per)
        self.reg, self.slot = np.divmod(rest, self.per)
        self.lane = lane
        self._by_T = {}                                       # T -> (base [rows, cols], every warp's index)

    def _base(self, T):
        got = self._by_T.get(T)
        if got is None:
            base = (self.reg * T + self.lane) * self.per + self.slot
            every = base + (np.arange(T // 32, dtype=np.int64) * (32 * self.per))[:, None, None]
            got = self._by_T[T] = (base, every)
        return got

    def __call__(self, bt, w):
        regs = bt.regs
        items = np.array([regs[s] for s in self.slots]).view(self.dtype).reshape(-1)
        base, every = self._base(bt.T)
        idx = every if len(w) == bt.W else base + (w * (32 * self.per))[:, None, None]
        return items.take(idx)


class Scatter:
    """bt, warps, D raw bits [n warps, rows, cols] -> D's registers (new arrays)."""

    def __init__(self, frag, p, slots, storage):
        self.slots, self.storage, self.dtype = list(slots), storage, p.dtype
        self.per = 32 // frag.elem_bits
        self.mn = int(np.prod(frag.shape[1:]))
        s = np.asarray(p.s_item, np.int64).reshape(32, frag.regs, self.per)
        self.src = np.transpose(s, (1, 0, 2))                # [regs, lanes, per]: D's element of each item
        self._by_n = {}

    def __call__(self, bt, w, D):
        n = len(w)
        idx = self._by_n.get(n)
        if idx is None:      # [regs, n, lanes, per]: warp j's element e is item j * mn + e of D
            idx = self._by_n[n] = self.src[:, None] + (np.arange(n, dtype=np.int64) * self.mn)[None, :, None, None]
        rows = D.reshape(-1).take(idx).view(np.uint32).reshape(len(self.slots), n * 32)
        if n != bt.W:        # the other warps keep their registers
            new = np.array([bt.regs[s] for s in self.slots]).view(np.uint32)
            new[:, (w[:, None] * 32 + np.arange(32)).reshape(-1)] = rows
            rows = new
        rows = rows.view(self.storage)
        for s, row in zip(self.slots, rows):
            bt.regs[s] = row
