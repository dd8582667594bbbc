"""Tensor memory (TMEM) of a batch of CTAs: the cells, the columns each CTA has allocated, and the
allocation permit (PTX ISA 9.x 9.7.16.2.2 'Tensor Memory', 9.7.16.7 'tcgen05.alloc, dealloc,
relinquish_alloc_permit'; the sizes are archs.tmem's).

Each CTA has its own 128 lanes x 512 columns of 32-bit cells (the model gives every CTA an SM of
its own: CTAs that share an SM on the GPU share its TMEM, so an alloc that would wait there for
another CTA's dealloc cannot be told apart here and is refused as a fault). The cells start 0
(the GPU's are undefined until written). An allocation is nCols columns, a power of 2 in 32..512;
the model places it first-fit at a multiple of nCols (the address is the hardware's choice, opaque
to a correct kernel) and tcgen05.alloc writes lane 0 << 16 | column to shared memory.
Faults (kind "tensor_memory"): a bad nCols, an alloc after the CTA's relinquish_alloc_permit, an
alloc with no nCols free columns, a dealloc that is not exactly one live allocation, and
tcgen05.ld/st/mma/cp of a column no allocation holds.
"""
import numpy as np

from ..archs import tmem as tmem_facts
from .state import Fault

KIND = "tensor_memory"


def fault(thread, taddr, what, kind=KIND):
    """A Fault at a TMEM address (lane << 16 | column): its report names the lane and column, not a
    global buffer the number happens to lie near."""
    return Fault(thread, taddr, what, kind, space="tmem")


class TensorMemory:
    def __init__(self, n_cta, arch="sm_100"):
        f = tmem_facts(arch)
        self.lanes, self.columns, self.unit = f["lanes"], f["columns"], f["alloc_min_columns"]
        self.slab = f["lanes_per_warp"]
        self.cells = np.zeros((n_cta, self.lanes, self.columns), np.uint32)
        self.owned = np.zeros((n_cta, self.columns), bool)
        self.allocs = [dict() for _ in range(n_cta)]            # per CTA: start column -> nCols
        self.relinquished = np.zeros(n_cta, bool)
        self.pending = {}           # cta_group::2: (CTA, peer) -> [(start, nCols)] the peer has yet to alloc
        self.collectors = {}        # (CTA, buffer) -> the matrix a tcgen05.mma collector::*::fill kept (collector.py)

    def alloc(self, cta, ncols, thread, also=None):
        """nCols columns of CTA `cta` (and, for a pair, the same columns of CTA `also`)."""
        ctas = [cta] if also is None else [cta, also]
        if ncols < self.unit or ncols > self.columns or ncols & (ncols - 1):
            raise Fault(thread, 0, f"tcgen05.alloc of {ncols} columns: nCols must be a power of 2 in "
                                   f"{self.unit}..{self.columns} (PTX ISA 9.7.16.7.1)", KIND)
        if self.relinquished[cta]:
            raise Fault(thread, 0, "tcgen05.alloc after the CTA's tcgen05.relinquish_alloc_permit "
                                   "(undefined behaviour, PTX ISA 9.7.16.7.1)", KIND)
        for start in range(0, self.columns, ncols):
            if not self.owned[ctas, start:start + ncols].any():
                for c in ctas:
                    self.owned[c, start:start + ncols] = True
                    self.allocs[c][start] = ncols
                return start
        peer = "" if also is None else " and its peer's"
        raise Fault(thread, 0, f"tcgen05.alloc of {ncols} columns: only {int((~self.owned[cta]).sum())} of "
                               f"{self.columns} columns are free in the CTA's tensor memory{peer} (the GPU would "
                               f"block until another CTA on the SM deallocates; here each CTA has its own)", KIND)

    def alloc_pair(self, cta, peer, ncols, thread):
        """tcgen05.alloc.cta_group::2: the warps of a CTA pair allocate together (PTX ISA 9.7.16.5
        Table 46: one warp in each CTA, the first to issue waits for the other). The first of the two
        takes nCols columns free in both CTAs' tensor memory; the second gets the same columns."""
        waiting = self.pending.get((peer, cta), [])
        if waiting:
            start, n = waiting.pop(0)
            if n != ncols:
                raise Fault(thread, 0, f"tcgen05.alloc.cta_group::2 of {ncols} columns: the peer CTA's warp "
                                       f"allocated {n} (the pair's operands must agree; PTX ISA 9.7.16.7.1)", KIND)
            return start
        if self.relinquished[peer]:
            raise Fault(thread, 0, "tcgen05.alloc.cta_group::2 after the peer CTA's "
                                   "tcgen05.relinquish_alloc_permit (undefined behaviour, PTX ISA 9.7.16.7.1)", KIND)
        start = self.alloc(cta, ncols, thread, also=peer)
        self.pending.setdefault((cta, peer), []).append((start, ncols))
        return start

    def dealloc(self, cta, taddr, ncols, thread):
        lane, col = taddr >> 16, taddr & 0xFFFF
        if lane or self.allocs[cta].get(col) != ncols:
            held = ", ".join(f"{c}+{n}" for c, n in sorted(self.allocs[cta].items())) or "none"
            raise fault(thread, taddr, f"tcgen05.dealloc of {ncols} columns at TMEM address {taddr:#x}: not an "
                                       f"allocation of the CTA (held: column+nCols {held}; PTX ISA 9.7.16.7.1)",
                        KIND)
        del self.allocs[cta][col]
        self.owned[cta, col:col + ncols] = False

    def exit_notes(self, where):
        """Notes for the CTAs that ended holding allocations (PTX ISA 9.7.16.7.1: every allocation is
        released with tcgen05.dealloc before the kernel exits); where(cta) names a batch CTA."""
        return [f"{where(c)} ended holding tensor memory (column+nCols "
                f"{', '.join(f'{k}+{n}' for k, n in sorted(a.items()))}): PTX ISA 9.7.16.7.1 asks every "
                f"tcgen05.alloc to be released with tcgen05.dealloc before the kernel exits"
                for c, a in enumerate(self.allocs) if a]

    def relinquish(self, cta):
        self.relinquished[cta] = True

    def check(self, cta, lanes, cols, threads, what):
        """Every (lane, column) [n, ...] of CTAs `cta` [n] lies in TMEM and in a column its CTA
        allocated; `threads` [n]: who is named when one does not."""
        cta = np.asarray(cta).reshape((-1,) + (1,) * (np.ndim(cols) - 1))
        outside = (lanes < 0) | (lanes >= self.lanes) | (cols < 0) | (cols >= self.columns)
        bad = outside | ~self.owned[cta, np.clip(cols, 0, self.columns - 1)]
        if bad.any():
            k = tuple(np.argwhere(bad)[0])
            lane, col = int(lanes[k]), int(cols[k])
            raise fault(np.asarray(threads).reshape(-1)[k[0]], (max(lane, 0) << 16) | (col & 0xFFFF),
                        f"{what}: TMEM lane {lane} column {col} is "
                        + ("outside tensor memory" if outside[k] else
                           "not in a column the CTA allocated (tcgen05.alloc)"), KIND)

    def warp_slab(self, warp, lanes, threads, what):
        """A warp reaches only TMEM lanes 32*(warp%4) .. +31 (PTX ISA 9.7.16.2.2 'Access
        restrictions'); warp, threads [n] (the warp in its CTA), lanes [n, ...]."""
        lo = (self.slab * (np.asarray(warp) % 4)).reshape((-1,) + (1,) * (np.ndim(lanes) - 1))
        bad = (lanes < lo) | (lanes >= lo + self.slab)
        if bad.any():
            k = tuple(np.argwhere(bad)[0])
            w, lane = int(np.asarray(warp).reshape(-1)[k[0]]), int(lanes[k])
            base = self.slab * (w % 4)
            raise fault(np.asarray(threads).reshape(-1)[k[0]], lane << 16,
                        f"{what}: warp {w} of its CTA reaches TMEM lanes {base}..{base + self.slab - 1} only "
                        f"(warp id % 4), not lane {lane} (PTX ISA 9.7.16.2.2)", KIND)


def of(bt):
    """The batch's TensorMemory (made on first use)."""
    if getattr(bt, "tmem", None) is None:
        bt.tmem = TensorMemory(bt.n_cta)
    return bt.tmem
