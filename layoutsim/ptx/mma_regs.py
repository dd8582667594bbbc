"""Whole-warp (or whole-warpgroup) MMA operands straight from the batch's registers, and D
straight back: one gather per operand, one for D.

The general path (ops_matrix.read_words / write_words around warpcore.mma or warpcore.wgmma)
stacks each operand's registers into per-lane words, unpacks them through the fragment map, and
packs D into words that it then splits into registers again: about twenty numpy calls per
mma.sync step, which cost more than the arithmetic on the few warps of a step, and for a wgmma
with 32 or 64 accumulator registers a transposing copy of all of them each way. Where every
element of every operand is a whole 8/16/32-bit item of a 32-bit register
(packing.fragment_index(...).items) and D fills every bit of its registers, those moves are each
one fancy index over the registers viewed as items: the element positions are the same
FragmentMap tables (packing's g_item / s_item), composed with where a lane's register lives in
the batch (register r of thread t is item (r * T + t) * slots + slot of the operand's registers
stacked in order). Anything else takes the general path.

A group is the threads one instance runs on: a warp (mma.sync, wmma: 32 lanes) or a warpgroup
(wgmma: 128), named by its first batch thread; lane l of the group is thread first + l.
"""
import numpy as np

from ..packing import fragment_index


def plan(b, ins, regs, frags):
    """(gather A, gather B, gather C, scatter D) for the register lists regs = (a, b, c, d) and the
    FragmentMaps frags = (A, B, C, D) of a warp MMA, or None where the general path must run."""
    moves = [gather(b, ins, ops, frag, 32) for ops, frag in zip(regs[:3], frags[:3])]
    moves.append(scatter(b, ins, regs[3], frags[3], 32))
    return None if any(m is None for m in moves) else moves


def _plain(b, ins, ops, frag, lanes, matrices=1):
    """(fragment index, (slots, storage)) where the register list holds the operand (`matrices`
    matrices; None: any number) of groups of `lanes` threads as whole items of 32-bit registers of
    one storage, one register per fragment register; else None."""
    plain = b.plain_words(ops, ins)
    p = fragment_index(frag)
    if plain is None or not p.items or matrices not in (None, frag.shape[0]) or frag.lanes != lanes or \
            len(plain[0]) != frag.regs:
        return None
    return p, plain


def gather(b, ins, ops, frag, lanes):
    """A Gather of the operand `frag` from the registers `ops`, or None (the general path)."""
    got = _plain(b, ins, ops, frag, lanes)
    return None if got is None else Gather(frag, got[0], *got[1])


def scatter(b, ins, ops, frag, lanes):
    """A Scatter of the result `frag` into the registers `ops`, or None (the general path)."""
    got = _plain(b, ins, ops, frag, lanes)
    if got is None or not (got[0].full and got[0].all_used):
        return None
    return Scatter(frag, got[0], *got[1])


class Gather:
    """bt, first threads [n] -> raw element bits [n, rows, cols] of one operand (unpack's dtype);
    a joined Gather (Gather.joined) gives k operands' [k * n, rows, cols], instance i's first."""

    def __init__(self, frag, p, slots, storage):
        self.slots, self.dtype, self.storage = list(slots), p.dtype, storage
        self.lanes = frag.lanes
        self.per = 32 // frag.elem_bits                      # items per register
        self.shape = frag.shape[1:]
        g = np.asarray(p.g_item, np.int64).reshape((1,) + self.shape)   # item in [lanes, regs * per]
        lane, rest = np.divmod(g, frag.regs * self.per)
        self.reg, self.slot = np.divmod(rest, self.per)      # [instances, rows, cols]
        self.lane = lane
        self._by_T = {}                                       # T -> (base [k, rows, cols], every group's index)

    @classmethod
    def joined(cls, parts):
        """One Gather of the operands of several Gathers of one form (the same fragment): their
        registers stacked in order, each part one instance of the batch."""
        out = object.__new__(cls)
        out.__dict__.update(parts[0].__dict__)
        out.slots = [s for p in parts for s in p.slots]
        n = len(parts[0].slots)
        out.reg = np.concatenate([p.reg + i * n for i, p in enumerate(parts)])
        out.lane = np.concatenate([p.lane for p in parts])
        out.slot = np.concatenate([p.slot for p in parts])
        out._by_T = {}
        return out

    def _base(self, T):
        got = self._by_T.get(T)
        if got is None:
            base = (self.reg * T + self.lane) * self.per + self.slot
            every = base[:, None] + (np.arange(T // self.lanes, dtype=np.int64) * (self.lanes * self.per))[:, None, None]
            got = self._by_T[T] = (base, every)
        return got

    def __call__(self, bt, first):
        regs = bt.regs
        items = np.array([regs[s] for s in self.slots]).view(self.dtype).reshape(-1)
        base, every = self._base(bt.T)
        # groups of `lanes` distinct threads, in order, that cover the batch are its every group
        idx = every if len(first) * self.lanes == bt.T else base[:, None] + (first * self.per)[:, None, None]
        return items.take(idx).reshape((-1,) + self.shape)


class Scatter:
    """bt, first threads [n], D raw bits [n, rows, cols] -> D's registers (new arrays); a joined
    Scatter (Scatter.joined) takes k results' [k * n, rows, cols], instance i's first."""

    def __init__(self, frag, p, slots, storage):
        self.slots, self.storage, self.dtype = list(slots), storage, p.dtype
        self.lanes = frag.lanes
        self.per = 32 // frag.elem_bits
        self.mn = int(np.prod(frag.shape[1:]))
        s = np.asarray(p.s_item, np.int64).reshape(frag.lanes, frag.regs, self.per)
        self.src = np.transpose(s, (1, 0, 2))                # [regs, lanes, per]: D's element of each item
        self.inst = np.zeros(frag.regs, np.int64)            # the instance each register belongs to
        self._by_n = {}

    @classmethod
    def joined(cls, parts):
        """One Scatter of the results of several Scatters of one form, as Gather.joined."""
        out = object.__new__(cls)
        out.__dict__.update(parts[0].__dict__)
        out.slots = [s for p in parts for s in p.slots]
        out.src = np.concatenate([p.src for p in parts])
        out.inst = np.concatenate([p.inst + i for i, p in enumerate(parts)])
        out._by_n = {}
        return out

    def __call__(self, bt, first, D):
        n = len(first)
        idx = self._by_n.get(n)
        if idx is None:      # [regs, n, lanes, per]: instance i's group j's element e is item (i * n + j) * mn + e of D
            at = (self.inst[:, None] * n + np.arange(n, dtype=np.int64)) * self.mn
            idx = self._by_n[n] = self.src[:, None] + at[:, :, None, None]
        rows = D.reshape(-1).take(idx).view(np.uint32).reshape(len(self.slots), n * self.lanes)
        if n * self.lanes != bt.T:        # the other groups keep their registers
            new = np.array([bt.regs[s] for s in self.slots]).view(np.uint32)
            new[:, (first[:, None] + np.arange(self.lanes)).reshape(-1)] = rows
            rows = new
        rows = rows.view(self.storage)
        for s, row in zip(self.slots, rows):
            bt.regs[s] = row


def row_load(b, ins, ops, frag, row_bytes):
    """A RowLoad of ldmatrix's fragment `frag` ([matrices, rows, cols]: each row `row_bytes`
    contiguous bytes of shared memory) into the registers `ops`, or None (the general path)."""
    got = _plain(b, ins, ops, frag, 32, None)
    if got is None or not (got[0].full and got[0].all_used) or frag.shape[2] * frag.elem_bits != row_bytes * 8:
        return None
    return RowLoad(frag, got[0], *got[1])


class RowLoad:
    """ldmatrix: bt, first threads [n], the rows' byte offsets in the batch's shared memory
    [n, matrices, rows] -> the registers (new arrays), each element read straight from shared
    memory: element (m, r, c) of warp j is item flat[j, m, r] / e + c of the memory viewed as
    e-byte items (the rows start at multiples of their size, which the caller checked), and the
    fragment's s_item says which element each register item is (what core_ldmatrix.load and
    write_words do through the words)."""

    def __init__(self, frag, p, slots, storage):
        self.slots, self.storage = list(slots), storage
        self.e = frag.elem_bits // 8
        per = 32 // frag.elem_bits
        cols = frag.shape[2]
        s = np.asarray(p.s_item, np.int64).reshape(32, frag.regs, per).transpose(1, 0, 2)   # [regs, lanes, per]
        self.row, self.col = s // cols, (s % cols)[:, None]    # the element's row (m * rows + r) and column
        self.rows = frag.shape[0] * frag.shape[1]
        self._by_n = {}

    def __call__(self, bt, first, flat):
        n = len(first)
        at = self._by_n.get(n)
        if at is None:       # [regs, n, lanes, per]: warp j's row k is row j * rows + k of flat
            at = self._by_n[n] = self.row[:, None] + (np.arange(n, dtype=np.int64) * self.rows)[None, :, None, None]
        idx = (flat // self.e).reshape(-1).take(at) + self.col          # [regs, n, lanes, per]
        rows = bt.smem_v[self.e].take(idx).view(np.uint32).reshape(len(self.slots), n * 32)
        if n * 32 != bt.T:                # the other warps keep their registers
            new = np.array([bt.regs[s] for s in self.slots]).view(np.uint32)
            new[:, (first[:, None] + np.arange(32)).reshape(-1)] = rows
            rows = new
        rows = rows.view(self.storage)
        for s, row in zip(self.slots, rows):
            bt.regs[s] = row
