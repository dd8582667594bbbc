"""End to end, anchored to memory: A and B (and a 16-bit C) come from shared memory through
ldmatrix at host-computed row addresses, a 16-bit D goes back through stmatrix; the host compares
the memory with numpy. Which 8x8 block each register covers, and whether .trans is needed, is
derived from the catalog (`layoutsim.isa.moves`), never written here.
  in[case] = [region image words][lane][addrA, addrB, (addrC | C words), (addrD)]
  out[case] = region words (D by stmatrix) or [lane][D words]
Probe `e2e` (smallint): random small integers in A, B, C; the whole region (or D) compared.
"""
import numpy as np

from layoutsim import archs
from layoutsim.isa import moves
from layoutsim.packing import pack, unpack, words_per_lane

from ..checks.common import MAX_DETAILS, Mismatch, Result, diff_fragment
from ..codegen import cuda
from .base import Probe, RegionSpec
from .operand_maps import exact_d, small

REGION_BYTES = 4096


def lane_row_addresses(move, origins, base, pitch):
    """Byte offset each lane gives: lane addressing.lanes[j, r] -> row r of block j."""
    addr = np.zeros(32, np.uint32)
    lanes = move.addressing.lanes
    for j, (r0, c0) in enumerate(origins):
        for r in range(lanes.shape[1]):
            addr[lanes[j, r]] = base + (r0 + r) * pitch + 2 * c0
    used = np.zeros(32, bool)
    used[lanes.ravel()] = True
    addr[~used] = addr[lanes.ravel()[np.arange(32)[~used] % lanes.size]]   # ignored lanes: any valid row
    return addr


def _moves(instr):
    """{operand: (ldmatrix/stmatrix Instruction, origins)} for the operands that go through
    memory, or None when one of them cannot (16-bit C by ldmatrix, 16-bit D by stmatrix)."""
    ops, f = instr.operands, instr.formats
    wanted = {"A": "ldmatrix", "B": "ldmatrix"}
    if f["c"] == "f16":
        wanted["C"] = "ldmatrix"
    if f["d"] == "f16":
        wanted["D"] = "stmatrix"
    out = {}
    for key, op in wanted.items():
        found = moves.find(ops[key].fragment, op)
        if found is None:
            return None
        out[key] = found
    return out


class E2eSpec(RegionSpec):
    """ldmatrix -> mma.sync -> stmatrix through the warp's shared-memory region, for the 16-bit
    mma.sync forms whose operands ldmatrix/stmatrix move whole."""
    kind = "e2e"
    catalog_families = ("mma",)
    region_bytes = REGION_BYTES

    def __init__(self, instr):
        super().__init__(instr)
        ops = instr.operands
        self.fmt = {x.lower(): ops[x].fmt for x in "ABCD"}
        self.fa, self.fb, self.fc, self.fd = (ops[x].fragment for x in "ABCD")
        m, n, k = instr.shape
        self.M, self.N, self.K = m, n, k
        self.moves = _moves(instr)
        self.c_mem = "C" in self.moves
        self.d_mem = "D" in self.moves
        # memory: 16-bit matrices row-major with 8 elements of padding per row
        self.pitch = {"A": 2 * (k + 8), "B": 2 * (n + 8), "C": 2 * (n + 8), "D": 2 * (n + 8)}
        rows = {"A": m, "B": k, "C": m, "D": m}
        self.base, off = {}, 0
        for key in "ABCD":
            self.base[key] = off
            off += rows[key] * self.pitch[key]
            off = -(-off // 128) * 128
        if off > REGION_BYTES:
            raise ValueError("e2e operands exceed the region")
        self.wc = 1 if self.c_mem else words_per_lane(self.fc)
        self.wd = words_per_lane(self.fd)
        self.lane_in = 2 + self.wc + (1 if self.d_mem else 0)
        self.in_words = self.region_words + 32 * self.lane_in
        self.out_words = self.region_words if self.d_mem else 32 * self.wd

    @classmethod
    def supports(cls, instr):
        if instr.family not in cls.catalog_families:
            return False
        f = instr.formats
        if f["a"] not in ("f16", "bf16") or f["b"] != f["a"]:
            return False
        return _moves(instr) is not None

    def available(self, target):
        return (archs.target_runs(target, self.instr.archs)
                and all(archs.target_runs(target, mv.archs) for mv, _ in self.moves.values()))

    def _ld(self, key, prefix, addr):
        move, _ = self.moves[key]
        n = move.operands["R"].fragment.regs
        regs = [f"{prefix}{i}" for i in range(n)]
        return regs, [f"unsigned {', '.join(regs)};",
                      cuda.asm(f"{move.name} {cuda.operand_list(0, n)}, [%{n}];", [f'"=r"({r})' for r in regs],
                               [f'"r"({addr})'], clobber_memory=True)]

    def body(self):
        ops = self.instr.operands
        a, la = self._ld("A", "a", "base + p[0]")
        b, lb = self._ld("B", "b", "base + p[1]")
        code = [f"const unsigned *img = in + (size_t)cs * {self.in_words};",
                f"for (int i = lane; i < {self.region_words}; i += 32) region[i] = img[i];",
                "__syncwarp();",
                f"const unsigned *p = img + {self.region_words} + lane * {self.lane_in};", *la, *lb]
        if self.c_mem:
            c, lc = self._ld("C", "c", "base + p[2]")
            code += lc
            cc = "r"
        else:
            c, cc, cw = cuda.registers("c", ops["C"])
            code += [cuda.load(v, cc, "p", 2 + i * cw) for i, v in enumerate(c)]
        d, dc, dw = cuda.registers("d", ops["D"])
        code.append(f"{cuda.ctype(dc)} {', '.join(d)};")
        nd = len(d)
        text = f"{self.entry} {cuda.operand_list(0, nd)}, {cuda.operand_list(nd, len(a))}, " \
               f"{cuda.operand_list(nd + len(a), len(b))}, {cuda.operand_list(nd + len(a) + len(b), len(c))};"
        code.append(cuda.asm(text, [f'"={dc}"({v})' for v in d],
                             [f'"r"({v})' for v in a + b] + [f'"{cc}"({v})' for v in c]))
        if self.d_mem:
            move, _ = self.moves["D"]
            code += ["__syncwarp();",
                     'asm volatile("%s [%%0], %s;" :: "r"(base + p[%d]), %s : "memory");'
                     % (move.name, cuda.operand_list(1, nd), self.lane_in - 1, ", ".join(f'"r"({v})' for v in d)),
                     "__syncwarp();",
                     f"for (int i = lane; i < {self.region_words}; i += 32) "
                     f"out[(size_t)cs * {self.region_words} + i] = region[i];",
                     "__syncwarp();"]
        else:
            code.append(f"unsigned *q = out + ((size_t)cs * 32 + lane) * {self.wd};")
            code += [cuda.store(v, dc, "q", i * dw) for i, v in enumerate(d)]
        head, loop = cuda.warp_loop(code, smem_region_words=self.region_words)
        return cuda.lines(head, loop)

    # host side ------------------------------------------------------------------------
    def mem_index(self, key, rows, cols):
        """b16 element index in the region of operand element [r][c], as [rows, cols]."""
        r = np.arange(rows)[:, None]
        c = np.arange(cols)[None, :]
        return (self.base[key] + r * self.pitch[key] + 2 * c) // 2

    def shapes(self):
        return {"A": (self.M, self.K), "B": (self.K, self.N), "C": (self.M, self.N), "D": (self.M, self.N)}

    def pack_inputs(self, a, b, c, extra=None):
        """a, b (and c when 16-bit) raw bits -> (n, in_words)."""
        n = len(a)
        region = np.zeros((n, self.region_words * 2), np.uint16)
        shapes = self.shapes()
        mats = {"A": a, "B": b}
        if self.c_mem:
            mats["C"] = c
        for key, mat in mats.items():
            idx = self.mem_index(key, *shapes[key])
            region[:, idx] = np.asarray(mat).astype(np.uint16)
        lane = np.zeros((n, 32, self.lane_in), np.uint32)
        for slot, key in enumerate("AB"):
            move, origins = self.moves[key]
            lane[:, :, slot] = lane_row_addresses(move, origins, self.base[key], self.pitch[key])
        if self.c_mem:
            move, origins = self.moves["C"]
            lane[:, :, 2] = lane_row_addresses(move, origins, self.base["C"], self.pitch["C"])
        else:
            lane[:, :, 2:2 + self.wc] = pack(self.fc, c)
        if self.d_mem:
            move, origins = self.moves["D"]
            lane[:, :, -1] = lane_row_addresses(move, origins, self.base["D"], self.pitch["D"])
        return np.concatenate([region.view(np.uint32), lane.reshape(n, -1)], axis=1)

    def unpack_inputs(self, inp):
        inp = np.asarray(inp, np.uint32).reshape(-1, self.in_words)
        region = np.ascontiguousarray(inp[:, :self.region_words]).view(np.uint16)
        shapes = self.shapes()
        a = region[:, self.mem_index("A", *shapes["A"])].astype(np.uint64)
        b = region[:, self.mem_index("B", *shapes["B"])].astype(np.uint64)
        if self.c_mem:
            c = region[:, self.mem_index("C", *shapes["C"])].astype(np.uint64)
        else:
            lane = inp[:, self.region_words:].reshape(-1, 32, self.lane_in)
            c = unpack(self.fc, lane[..., 2:2 + self.wc])[:, 0]
        return a, b, c

    def pack_d(self, d):
        return pack(self.fd, d)

    # the layouts group ----------------------------------------------------------------------
    def probes(self, rng, cases=8):
        f = self.fmt
        a = small(rng, f["a"], (cases, self.M, self.K))
        b = small(rng, f["b"], (cases, self.K, self.N))
        c = small(rng, f["c"], (cases, self.M, self.N), -8, 8)
        return [Probe("e2e", self.pack_inputs(a, b, c), {})]

    def compare(self, check, inp, out, meta, aux):
        a, b, c = self.unpack_inputs(inp)
        d = exact_d(self.fmt, a, b, c)
        if not self.d_mem:
            bad, compared, details = diff_fragment(self.fd, self.fmt["d"], self.pack_d(d),
                                                   np.asarray(out, np.uint32).reshape(-1, 32, self.wd))
            return Result("layouts", self.entry, "e2e", cases=len(d), compared=compared, mismatches=bad,
                          details=details, note="A, B from memory by ldmatrix; C, D through the catalog maps").finish()
        inp = np.asarray(inp, np.uint32).reshape(len(d), -1)
        expected = np.ascontiguousarray(inp[:, :self.region_words]).view(np.uint16).copy()
        idx = self.mem_index("D", self.M, self.N)
        expected[:, idx] = d.astype(np.uint16)
        got = np.ascontiguousarray(np.asarray(out, np.uint32).reshape(len(d), -1)).view(np.uint16)
        bad = np.argwhere(expected != got)
        where_d = {int(e): (i, j) for (i, j), e in np.ndenumerate(idx)}
        details = []
        for case, e in bad[:MAX_DETAILS]:
            if int(e) in where_d:
                i, j = where_d[int(e)]
                where, fmt = f"D[{i}][{j}] at smem byte {2 * int(e):#x}", self.fmt["d"]
            else:
                where, fmt = f"smem byte {2 * int(e):#x} outside D (must be untouched)", "b16"
            details.append(Mismatch(int(case), where, fmt, int(expected[case, e]), int(got[case, e])))
        return Result("layouts", self.entry, "e2e", cases=len(d), compared=int(expected.size), mismatches=len(bad),
                      details=details, note="A, B, C read by ldmatrix, D written by stmatrix; whole region "
                                            "compared").finish()
