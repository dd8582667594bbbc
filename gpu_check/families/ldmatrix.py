"""ldmatrix: aux = shared-memory image (per warp region), in[case][lane] = row byte offset,
out[case][lane][register].

Probe `ids`: shared memory holds unique b16 ids; each lane gives a random row address (case 0:
contiguous rows); registers are compared with the catalog per lane, register and half. Lanes
the catalog says are ignored give distinct rows too. The row-address helpers here serve
stmatrix as well.
"""
import numpy as np

from ..checks.common import Result, diff_fragment
from ..codegen import cuda
from .base import Probe, RegionSpec

REGION_BYTES = 2048          # 128 rows of 16 bytes per warp
ROWS = REGION_BYTES // 16


class LdmatrixSpec(RegionSpec):
    """ldmatrix from a region of unique ids, at row addresses the host chooses."""
    kind = "ldmatrix"
    catalog_families = ("ldmatrix",)
    region_bytes = REGION_BYTES

    def __init__(self, instr):
        super().__init__(instr)
        self.frag = instr.operands["R"].fragment
        self.count = self.frag.regs
        self.in_words = 32
        self.out_words = 32 * self.count
        ids = np.arange(REGION_BYTES // 2, dtype=np.uint32)     # b16 element e holds id e
        self.aux = (ids[0::2] | (ids[1::2] << 16)).astype(np.uint32)

    def body(self):
        regs = [f"r{i}" for i in range(self.count)]
        text = f"{self.entry} {cuda.operand_list(0, self.count)}, [%{self.count}];"
        head, loop = cuda.warp_loop([
            "const unsigned addr = base + in[(size_t)cs * 32 + lane];",
            f"unsigned {', '.join(regs)};",
            cuda.asm(text, [f'"=r"({r})' for r in regs], ['"r"(addr)'], clobber_memory=True),
            *(f"out[((size_t)cs * 32 + lane) * {self.count} + {i}] = {r};" for i, r in enumerate(regs)),
        ], smem_region_words=self.region_words)
        fill = [f"for (int i = lane; i < {self.region_words}; i += 32) region[i] = aux[i];",
                "__syncwarp();"]
        return cuda.lines(head, fill, loop)

    def regs(self, out):
        return np.asarray(out, np.uint32).reshape(-1, 32, self.count)

    def probes(self, rng, cases=32):
        return [Probe("ids", row_addresses(rng, cases).astype(np.uint32), {})]

    def compare(self, check, inp, out, meta, aux):
        frag = self.frag
        addr = np.asarray(inp, np.int64).reshape(-1, 32)
        region = np.ascontiguousarray(np.asarray(aux, np.uint32)).view(np.uint16)
        elem = element_index(self, addr)                                      # (n, 32, regs, 2)
        vals = region[elem].astype(np.uint32)
        expected = vals[..., 0] | (vals[..., 1] << 16)
        got = self.regs(out)
        n, compared, details = diff_fragment(frag, "b16", expected, got, letter="M")
        for d in details:
            d.note = ("got " + row_source(self, addr[d.case], d.got) + "; expected "
                      + row_source(self, addr[d.case], d.expected))
        return Result("layouts", self.entry, "ids", cases=len(addr), compared=compared, mismatches=n,
                      details=details).finish()


def row_addresses(rng, cases):
    """(cases, 32) byte offsets of distinct 16-byte rows; case 0 is contiguous."""
    addr = np.zeros((cases, 32), np.int64)
    addr[0] = np.arange(32) * 16
    for i in range(1, cases):
        addr[i] = rng.permutation(ROWS)[:32] * 16
    return addr


def element_index(spec, addr):
    """b16 element index of the region each (lane, register, slot) moves, (n, 32, regs, 2), from
    the lanes' row addresses: the catalog's fragment and its addressing rule."""
    t = spec.frag.table.astype(np.int64)
    src = spec.instr.addressing.lanes[t[..., 0], t[..., 1]]                 # (32, regs, 2)
    return addr[:, src] // 2 + t[..., 2]


def row_source(spec, inp_case, elem):
    """Describe b16 element `elem` of the region: which lane's row address it lies in."""
    byte = 2 * int(elem)
    row = byte - byte % 16
    lanes = np.nonzero(inp_case == row)[0]
    alanes = spec.instr.addressing.lanes
    if len(lanes):
        lane = int(lanes[0])
        hit = np.argwhere(alanes == lane)
        who = f"row addressed by lane {lane}" + (f" (matrix {hit[0][0]} row {hit[0][1]})" if len(hit) else
                                                  " (a lane the catalog says is ignored)")
    else:
        who = "a row no lane addressed"
    return f"smem byte {byte:#x} = {who}, col {(byte % 16) // 2}"
