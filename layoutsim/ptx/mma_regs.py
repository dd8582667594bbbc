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


# The index tables of the moves, one per fragment (and instances, batch size), shared by every move
# of that form: a kernel has many steps of one form (an unrolled GEMM's hundred ldmatrix), and
# tables of their own would each be read from memory once a run, out of the caches.
_TABLES = {}             # (what, id(fragment index), ...) -> (fragment index, table)
TABLES_MAX = 256


def _table(key, p, make):
    got = _TABLES.get(key)
    if got is None or got[0] is not p:
        if len(_TABLES) >= TABLES_MAX:
            _TABLES.clear()
        got = _TABLES[key] = (p, make())
    return got[1]


class _Move:
    """What a Gather and a Scatter have: the registers (slots, their storage), the fragment's
    index tables p, its registers and lanes, and the instances k one call moves."""

    def __init__(self, frag, p, slots, storage):
        self.slots, self.storage, self.dtype = list(slots), storage, p.dtype
        self.p, self.k, self.regs = p, 1, frag.regs
        self.lanes = frag.lanes
        self.per = 32 // frag.elem_bits                      # items per register

    @classmethod
    def joined(cls, parts):
        """One move of the operands of several moves of one form (the same fragment): their
        registers stacked in order, each part one instance of the batch."""
        assert all(p.p is parts[0].p and p.k == 1 for p in parts)
        out = object.__new__(cls)
        out.__dict__.update(parts[0].__dict__)
        out.slots = [s for p in parts for s in p.slots]
        out.k = len(parts)
        return out


class Gather(_Move):
    """bt, first threads [n] -> raw element bits [n, rows, cols] of one operand (unpack's dtype);
    a joined Gather (Gather.joined) gives k operands' [k * n, rows, cols], instance i's first."""

    def __init__(self, frag, p, slots, storage):
        super().__init__(frag, p, slots, storage)
        self.shape = frag.shape[1:]

    def _base(self, T):
        """(base [k, rows, cols], every group's index [k, T / lanes, rows, cols]) for a batch of T."""
        def make():
            g = np.asarray(self.p.g_item, np.int64).reshape(self.shape)      # item in [lanes, regs * per]
            lane, rest = np.divmod(g, self.regs * self.per)
            reg, slot = np.divmod(rest, self.per)
            reg = reg[None] + (np.arange(self.k, dtype=np.int64) * self.regs)[:, None, None]    # instance i's registers
            base = (reg * T + lane) * self.per + slot
            every = base[:, None] + (np.arange(T // self.lanes, dtype=np.int64) * (self.lanes * self.per))[:, None, None]
            return base, every
        return _table(("gather", id(self.p), self.k, T), self.p, make)

    def __call__(self, bt, first):
        regs = bt.regs
        items = np.array([regs[s] for s in self.slots]).view(self.dtype).reshape(-1)
        base, every = self._base(bt.T)
        # groups of `lanes` distinct threads, in order, that cover the batch are its every group
        idx = every if len(first) * self.lanes == bt.T else base[:, None] + (first * self.per)[:, None, None]
        return items.take(idx).reshape((-1,) + self.shape)


class Scatter(_Move):
    """bt, first threads [n], D raw bits [n, rows, cols] -> D's registers (new arrays); a joined
    Scatter (Scatter.joined) takes k results' [k * n, rows, cols], instance i's first."""

    def __init__(self, frag, p, slots, storage):
        super().__init__(frag, p, slots, storage)
        self.mn = int(np.prod(frag.shape[1:]))

    def _index(self, n):
        """[k * regs, n, lanes, per]: instance i's group j's element e is item (i * n + j) * mn + e of D."""
        def make():
            s = np.asarray(self.p.s_item, np.int64).reshape(self.lanes, self.regs, self.per)
            src = np.tile(np.transpose(s, (1, 0, 2)), (self.k, 1, 1))       # [k * regs, lanes, per]
            inst = np.repeat(np.arange(self.k, dtype=np.int64), self.regs)   # the instance of each register
            at = (inst[:, None] * n + np.arange(n, dtype=np.int64)) * self.mn
            return src[:, None] + at[:, :, None, None]
        return _table(("scatter", id(self.p), self.k, n), self.p, make)

    def __call__(self, bt, first, D):
        n = len(first)
        rows = D.reshape(-1).take(self._index(n)).view(np.uint32).reshape(len(self.slots), n * self.lanes)
        _store(bt, self.slots, self.storage, first, self.lanes, rows)


def _store(bt, slots, storage, first, lanes, rows):
    """rows uint32 [registers, n * lanes]: the registers' new values for the groups of `lanes`
    threads from `first` [n]; the other threads keep theirs (new arrays, one block)."""
    if len(first) * lanes != bt.T:
        new = np.array([bt.regs[s] for s in slots]).view(np.uint32)
        new[:, (first[:, None] + np.arange(lanes)).reshape(-1)] = rows
        rows = new
    for s, row in zip(slots, rows.view(storage)):
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
        self.slots, self.storage, self.p = list(slots), storage, p
        self.e = frag.elem_bits // 8
        self.regs, self.per, self.cols = frag.regs, 32 // frag.elem_bits, frag.shape[2]
        self.rows = frag.shape[0] * frag.shape[1]

    def _index(self, n):
        """(the row of flat [regs, n, lanes, per] and the column [regs, 1, lanes, per] of each item)."""
        def make():
            s = np.asarray(self.p.s_item, np.int64).reshape(32, self.regs, self.per).transpose(1, 0, 2)
            row, col = s // self.cols, (s % self.cols)[:, None]     # the element's row (m * rows + r) and column
            # warp j's row k is row j * rows + k of flat
            return row[:, None] + (np.arange(n, dtype=np.int64) * self.rows)[None, :, None, None], col
        return _table(("rows", id(self.p), n), self.p, make)

    def __call__(self, bt, first, flat):
        n = len(first)
        at, col = self._index(n)
        idx = (flat // self.e).reshape(-1).take(at) + col                 # [regs, n, lanes, per]
        rows = bt.smem_v[self.e].take(idx).view(np.uint32).reshape(len(self.slots), n * 32)
        _store(bt, self.slots, self.storage, first, 32, rows)
