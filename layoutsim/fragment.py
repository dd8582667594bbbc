"""FragmentMap: which (matrix, row, col) every [lane, reg, slot] of one operand holds.

`slot` is the position of a packed element inside a register: bits slot*w .. slot*w+w-1
where w is the element width. Registers are 32 bits, except f64 operands whose registers
are 64 bits (PTX .f64 registers); `reg_bits` says which.

A map is built once from a formula over numpy index arrays. Construction checks that every
element of the operand is held by the same number of [lane, reg, slot] positions: 1 for a
bijection, more for documented replication (gfx11 WMMA lanes 16-31 repeat lanes 0-15).
Positions that hold nothing (the unused half of a gfx11 16-bit output register) are -1.

An operand whose registers are broadcast (AMD MFMA CBSZ/ABID, BLGP: one register feeds several
blocks or lanes) is built from its holders instead (`from_holders`): every element has exactly
one holder, a position may feed several elements (`shared`); `table` then names the first.
"""
from dataclasses import dataclass, field

import numpy as np

from .errors import LayoutsimError, integer


@dataclass(frozen=True)
class FragmentMap:
    table: np.ndarray          # int16 [lanes, regs, slots, 3] -> (matrix, row, col), -1 = unused
    shape: tuple               # (matrices, rows, cols)
    elem_bits: int
    reg_bits: int = 32
    names: tuple = ()          # per (reg, slot), flattened reg*slots+slot: "a0", "c3", "d1.hi", ...
    replication: int = field(default=1, init=False)
    holders: np.ndarray = field(default=None, init=False, repr=False)   # [m, r, c, replication, 3]
    shared: bool = field(default=False, init=False)   # a position feeds several elements

    def __post_init__(self):
        if self.holders is not None:               # from_holders: checked there
            return
        t = self.table
        if t.ndim != 4 or t.shape[3] != 3:
            raise AssertionError(f"fragment table has shape {t.shape}, expected [lanes, regs, slots, 3]")
        if t.shape[2] * self.elem_bits > self.reg_bits:
            raise AssertionError(f"{t.shape[2]} slots of {self.elem_bits} bits exceed a {self.reg_bits}-bit register")
        used = t[..., 0] >= 0
        m, r, c = (t[..., i][used] for i in range(3))
        nm, nr, nc = self.shape
        if (m >= nm).any() or (r >= nr).any() or (c >= nc).any() or (r < 0).any() or (c < 0).any():
            raise AssertionError("fragment formula leaves the operand's shape")
        flat = (m.astype(np.int64) * nr + r) * nc + c
        counts = np.bincount(flat, minlength=nm * nr * nc)
        rep = int(counts[0])
        if rep == 0 or (counts != rep).any():
            raise AssertionError(f"fragment map is not a bijection or uniform replication "
                                 f"(element hold counts range {counts.min()}..{counts.max()})")
        object.__setattr__(self, "replication", rep)
        # inverse: for each element, every (lane, reg, slot) holding it, in lane order
        pos = np.argwhere(used)                     # rows of (lane, reg, slot), lexicographic
        order = np.argsort(flat, kind="stable")
        inv = pos[order].reshape(nm, nr, nc, rep, 3).astype(np.int16)
        object.__setattr__(self, "holders", inv)
        if not self.names:
            object.__setattr__(self, "names", tuple(f"r{i // t.shape[2]}.{i % t.shape[2]}"
                                                    for i in range(t.shape[1] * t.shape[2])))
        t.flags.writeable = False
        inv.flags.writeable = False

    # ---- construction -------------------------------------------------------------
    @classmethod
    def from_formula(cls, lanes, n_elems, slots, elem_bits, shape, formula, prefix=None,
                     reg_bits=32, names=None):
        """Build from formula(lane, i) -> (matrix, row, col) over index arrays.

        Element i of a lane lives in register i // slots, slot i % slots, which is how the
        PTX ISA numbers packed fragment elements (a0..a7 of four .f16x2 registers).
        """
        if n_elems % slots:
            raise AssertionError("elements per lane must fill whole registers")
        lane, i = np.meshgrid(np.arange(lanes), np.arange(n_elems), indexing="ij")
        mat, row, col = (np.broadcast_to(np.asarray(v), lane.shape) for v in formula(lane, i))
        table = np.stack([mat, row, col], axis=-1).astype(np.int16)
        table = table.reshape(lanes, n_elems // slots, slots, 3)
        if names is None and prefix is not None:
            names = tuple(f"{prefix}{k}" for k in range(n_elems))
        return cls(table=table, shape=tuple(shape), elem_bits=elem_bits, reg_bits=reg_bits,
                   names=tuple(names or ()))

    @classmethod
    def from_holders(cls, holders, lanes, regs, slots, elem_bits, shape, reg_bits=32, names=()):
        """Build from holders [m, r, c, (lane, reg, slot)]: one holder per element, a position
        may feed several elements (broadcast) or none; `table` names the first it feeds."""
        h = np.asarray(holders, np.int64)
        if h.shape != tuple(shape) + (3,):
            raise AssertionError(f"holders have shape {h.shape}, expected {tuple(shape) + (3,)}")
        lim = np.array([lanes, regs, slots])
        if (h < 0).any() or (h >= lim).any():
            raise AssertionError("a holder lies outside the registers")
        if slots * elem_bits > reg_bits:
            raise AssertionError(f"{slots} slots of {elem_bits} bits exceed a {reg_bits}-bit register")
        table = np.full((lanes, regs, slots, 3), -1, np.int16)
        elems = np.stack(np.meshgrid(*(np.arange(n) for n in shape), indexing="ij"), -1).reshape(-1, 3)
        flat = h.reshape(-1, 3)
        table[flat[::-1, 0], flat[::-1, 1], flat[::-1, 2]] = elems[::-1]   # first element wins
        pos = (flat[:, 0] * regs + flat[:, 1]) * slots + flat[:, 2]
        self = cls.__new__(cls)
        for k, v in dict(table=table, shape=tuple(shape), elem_bits=elem_bits, reg_bits=reg_bits,
                         names=tuple(names) or tuple(f"r{i // slots}.{i % slots}"
                                                     for i in range(regs * slots)),
                         replication=1, holders=h.reshape(tuple(shape) + (1, 3)).astype(np.int16),
                         shared=bool(len(np.unique(pos)) < len(pos))).items():
            object.__setattr__(self, k, v)
        self.table.flags.writeable = False
        self.holders.flags.writeable = False
        return self

    # ---- shape --------------------------------------------------------------------
    @property
    def lanes(self):
        return self.table.shape[0]

    @property
    def regs(self):
        return self.table.shape[1]

    @property
    def slots(self):
        return self.table.shape[2]

    def name(self, reg, slot):
        return self.names[reg * self.slots + slot]

    def bit_range(self, slot):
        lo = slot * self.elem_bits
        return lo, lo + self.elem_bits - 1

    # ---- queries ------------------------------------------------------------------
    def check_lane(self, lane):
        """lane as an int (a Python or numpy integer: not a bool, a float or a string)."""
        lane = integer(lane, "lane")
        if not 0 <= lane < self.lanes:
            raise LayoutsimError(f"lane {lane} out of range: this operand spans lanes 0-{self.lanes - 1}")
        return lane

    def check_element(self, matrix, row, col):
        """(matrix, row, col) as ints, inside the operand."""
        matrix, row, col = (integer(v, what) for v, what in ((matrix, "matrix"), (row, "row"), (col, "col")))
        nm, nr, nc = self.shape
        if not (0 <= matrix < nm and 0 <= row < nr and 0 <= col < nc):
            where = f"matrix {matrix} " if nm > 1 else ""
            raise LayoutsimError(f"element {where}[{row}][{col}] outside the operand "
                                 f"({nm} x {nr}x{nc})" if nm > 1 else
                                 f"element [{row}][{col}] outside the {nr}x{nc} operand")
        return matrix, row, col

    def lane_entries(self, lane):
        """[(reg, slot, matrix, row, col)] held by one lane, unused positions skipped."""
        lane = self.check_lane(lane)
        if self.shared:                            # every element each position feeds
            return sorted((int(p[1]), int(p[2]), int(e[0]), int(e[1]), int(e[2]))
                          for e, p in self._pairs() if p[0] == lane)
        out = []
        for reg in range(self.regs):
            for slot in range(self.slots):
                m, r, c = (int(v) for v in self.table[lane, reg, slot])
                if m >= 0:
                    out.append((reg, slot, m, r, c))
        return out

    def who_holds(self, row, col, matrix=0):
        """[(lane, reg, slot)] of every holder of one element, in lane order."""
        matrix, row, col = self.check_element(matrix, row, col)
        return [tuple(int(v) for v in h) for h in self.holders[matrix, row, col]]

    def _pairs(self):
        """(element (m, r, c), holder (lane, reg, slot)) for every element."""
        h = self.holders[..., 0, :].reshape(-1, 3)
        e = np.stack(np.meshgrid(*(np.arange(n) for n in self.shape), indexing="ij"), -1)
        return zip(e.reshape(-1, 3), h)

    def entries(self):
        """Every used (lane, reg, slot, matrix, row, col), lane-major."""
        if self.shared:
            rows = sorted(tuple(int(x) for x in (*p, *e)) for e, p in self._pairs())
            return np.array(rows, np.int64)
        used = self.table[..., 0] >= 0
        pos = np.argwhere(used)
        return np.concatenate([pos, self.table[used]], axis=1)

    def element_grid(self):
        """[matrix, row, col, replication, 3] holders; the first holder is what pictures show."""
        return self.holders
