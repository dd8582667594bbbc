"""stmatrix: aux = initial region image (sentinel), in[case][lane][registers..., byte offset],
out[case][region words].

Probe `ids`: registers hold unique ids; after the store, the whole region is compared (every
id where the catalog puts it, every other byte untouched).
"""
import numpy as np

from ..checks.common import MAX_DETAILS, Mismatch, Result
from ..codegen import cuda
from .base import Probe, RegionSpec
from .ldmatrix import REGION_BYTES, element_index, row_addresses, row_source


class StmatrixSpec(RegionSpec):
    """stmatrix of unique ids into a region of sentinels, at row addresses the host chooses."""
    kind = "stmatrix"
    catalog_families = ("stmatrix",)
    region_bytes = REGION_BYTES
    SENTINEL = 0xFFFF

    def __init__(self, instr):
        super().__init__(instr)
        self.frag = instr.operands["R"].fragment
        self.count = self.frag.regs
        self.lane_in = self.count + 1
        self.in_words = 32 * self.lane_in
        self.out_words = self.region_words
        self.aux = np.full(self.region_words, self.SENTINEL | (self.SENTINEL << 16), np.uint32)

    def body(self):
        regs = [f"r{i}" for i in range(self.count)]
        text = f"{self.entry} [%0], {cuda.operand_list(1, self.count)};"
        head, loop = cuda.warp_loop([
            f"for (int i = lane; i < {self.region_words}; i += 32) region[i] = aux[i];",
            "__syncwarp();",
            f"const unsigned *p = in + ((size_t)cs * 32 + lane) * {self.lane_in};",
            *(f"const unsigned {r} = p[{i}];" for i, r in enumerate(regs)),
            f"const unsigned addr = base + p[{self.count}];",
            'asm volatile("%s" :: "r"(addr), %s : "memory");'
            % (text, ", ".join(f'"r"({r})' for r in regs)),
            "__syncwarp();",
            f"for (int i = lane; i < {self.region_words}; i += 32) "
            f"out[(size_t)cs * {self.region_words} + i] = region[i];",
            "__syncwarp();",
        ], smem_region_words=self.region_words)
        return cuda.lines(head, loop)

    def probes(self, rng, cases=32):
        ids = _ids(self.frag)
        words = ids[..., 0] | (ids[..., 1] << 16)                                 # (32, regs)
        addr = row_addresses(rng, cases)
        inp = np.zeros((cases, 32, self.lane_in), np.uint32)
        inp[:, :, :self.count] = words
        inp[:, :, self.count] = addr
        return [Probe("ids", inp.reshape(cases, -1), {})]

    def compare(self, check, inp, out, meta, aux):
        inp = np.asarray(inp, np.uint32).reshape(-1, 32, self.lane_in)
        n = len(inp)
        addr = inp[:, :, self.count].astype(np.int64)
        elem = element_index(self, addr)                                           # (n, 32, regs, 2)
        regs = inp[:, :, :self.count]
        ids = np.stack([regs & 0xFFFF, regs >> 16], axis=-1)                       # (n, 32, regs, 2)
        expected = np.tile(np.ascontiguousarray(np.asarray(aux, np.uint32)).view(np.uint16), (n, 1)).copy()
        rows = np.repeat(np.arange(n), elem[0].size)
        expected[rows, elem.reshape(-1)] = ids.reshape(-1)
        got = np.ascontiguousarray(np.asarray(out, np.uint32).reshape(n, -1)).view(np.uint16)
        bad = np.argwhere(expected != got)
        details = []
        for case, e in bad[:MAX_DETAILS]:
            exp, g = int(expected[case, e]), int(got[case, e])
            where = row_source(self, addr[case], e)
            details.append(Mismatch(int(case), where, "b16", exp, g,
                                    note=f"expected {_describe_id(exp, self.SENTINEL)}, got "
                                         f"{_describe_id(g, self.SENTINEL)}"))
        return Result("layouts", self.entry, "ids", cases=n, compared=int(expected.size), mismatches=len(bad),
                      details=details).finish()


def _ids(frag):
    """Unique nonzero b16 id per (lane, reg, slot)."""
    lane, reg, slot = np.meshgrid(np.arange(32), np.arange(frag.regs), np.arange(2), indexing="ij")
    return (1 + lane * 8 + reg * 2 + slot).astype(np.uint32)


def _describe_id(v, sentinel):
    if v == sentinel:
        return "untouched"
    i = int(v) - 1
    if not 0 <= i < 32 * 8:
        return "a value no lane stored"
    return f"lane {i // 8} r{(i % 8) // 2}.{'hi' if i % 2 else 'lo'}"
