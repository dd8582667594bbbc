"""tcgen05.ld / tcgen05.st (sm_100a), through tensor memory.

The block's warp 0 allocates 512 TMEM columns (tcgen05.alloc); warp w works in its own 32-lane
slab, lanes 32*(w%4)... Word layout per case and lane:
  ld  in  = the slab's image, one word per column (written with tcgen05.st .32x32b.x1, one
            column at a time), out = the entry's registers after tcgen05.ld;
  st  in  = the entry's registers, stored with tcgen05.st; out = the slab's image, read back one
            column at a time with tcgen05.ld .32x32b.x1.
Probe `ids`: images and registers of distinct ids (lane << 9 | column in the low 16 bits, a
per-case tag above); which TMEM cell a register word is compared with comes from the catalog's
map only (16x32bx2: the second half at column + immHalfSplitoff = the columns one half spans;
.pack/.unpack::16b: the low 16 bits of each column).
"""
import numpy as np

from ..checks.common import Result, diff_fragment
from ..codegen import cuda
from .base import Probe, Spec

ALLOC_COLUMNS = 512          # archs.tmem("sm_100")["columns"]: every entry fits


# the block's TMEM: warp 0 allocates ALLOC_COLUMNS columns into tmem_base_ and gives up the permit; every
# thread then sees the address (the tcgen05 fences around the barrier, PTX ISA 9.7.16.6)
FENCE = ('asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");', "__syncthreads();",
         'asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");')


def tmem_alloc():
    """Kernel lines: `warp`, the allocation, the fenced barrier (tcgen05.mma's kernels too)."""
    return ["__shared__ unsigned tmem_base_;", "const int warp = threadIdx.x >> 5;", "if (warp == 0) {",
            "    " + cuda.asm(f"tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], {ALLOC_COLUMNS};",
                              [], ['"r"((unsigned)__cvta_generic_to_shared(&tmem_base_))'], clobber_memory=True),
            '    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;" ::: "memory");',
            "}", *FENCE]


def tmem_dealloc():
    return "if (warp == 0) " + cuda.asm(f"tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, {ALLOC_COLUMNS};",
                                        [], ['"r"(tmem_base_)'], clobber_memory=True)


def _asm_block(*texts):
    return "\\n\\t".join(texts)


class Tcgen05Spec(Spec):
    """A tcgen05.ld or tcgen05.st entry against a TMEM image of distinct ids."""
    kind = "tcgen05"
    catalog_families = ("tcgen05.ld", "tcgen05.st")
    named_by_entry = True

    def __init__(self, instr):
        super().__init__(instr)
        self.frag = instr.operands["R"].fragment
        self.load = instr.family == "tcgen05.ld"
        mats, _, cols = self.frag.shape
        self.split = cols                       # 16x32bx2: the second half's column offset
        self.columns = cols * mats
        self.regs = self.frag.regs
        self.in_words = 32 * (self.columns if self.load else self.regs)
        self.out_words = 32 * (self.regs if self.load else self.columns)

    def _op(self, first_reg, addr_op):
        tail = f", {self.split}" if self.instr.name.split(".")[4] == "16x32bx2" else ""
        regs = cuda.operand_list(first_reg, self.regs)
        if self.load:
            return f"{self.entry} {regs}, [%{addr_op}]{tail};"
        return f"{self.entry} [%{addr_op}]{tail}, {regs};"

    def body(self):
        regs = [f"r{i}" for i in range(self.regs)]
        C, R = self.columns, self.regs
        setup = [*tmem_alloc(), "const unsigned taddr = tmem_base_ + (((unsigned)(warp & 3) * 32u) << 16);"]
        fill = cuda.asm("tcgen05.st.sync.aligned.32x32b.x1.b32 [%0], {%1};", [], ['"r"(taddr + c)', '"r"(p[c])'],
                        clobber_memory=True)
        drain = cuda.asm(_asm_block("tcgen05.ld.sync.aligned.32x32b.x1.b32 {%0}, [%1];",
                                    "tcgen05.wait::ld.sync.aligned;"), ['"=r"(v)'], ['"r"(taddr + c)'],
                         clobber_memory=True)
        if self.load:
            body = [f"const unsigned *p = in + ((size_t)cs * 32 + lane) * {C};",
                    f"for (int c = 0; c < {C}; ++c) {fill}",
                    'asm volatile("tcgen05.wait::st.sync.aligned;" ::: "memory");',
                    f"unsigned {', '.join(regs)};",
                    cuda.asm(_asm_block(self._op(0, R), "tcgen05.wait::ld.sync.aligned;"),
                             [f'"=r"({r})' for r in regs], ['"r"(taddr)'], clobber_memory=True),
                    *(f"out[((size_t)cs * 32 + lane) * {R} + {i}] = {r};" for i, r in enumerate(regs))]
        else:
            body = [f"const unsigned *p = in + ((size_t)cs * 32 + lane) * {R};",
                    *(f"const unsigned {r} = p[{i}];" for i, r in enumerate(regs)),
                    cuda.asm(_asm_block(self._op(1, 0), "tcgen05.wait::st.sync.aligned;"), [],
                             ['"r"(taddr)', *(f'"r"({r})' for r in regs)], clobber_memory=True),
                    f"for (int c = 0; c < {C}; ++c) {{",
                    "    unsigned v;",
                    "    " + drain,
                    f"    out[((size_t)cs * 32 + lane) * {C} + c] = v;",
                    "}"]
        head, loop = cuda.warp_loop(body)
        teardown = [*FENCE[:2], tmem_dealloc()]
        return cuda.lines(head, setup, loop, teardown)

    # host side ------------------------------------------------------------------------
    def cells(self):
        """(row, column) of the TMEM cell each [lane, reg, slot] moves, from the catalog."""
        t = self.frag.table.astype(np.int64)
        return t[..., 1], t[..., 2] + t[..., 0] * self.split

    def words_from_image(self, image):
        """Register words [case, lane, reg] an image [case, 32 lanes, columns] gives."""
        row, col = self.cells()
        cell = image[:, row, col].astype(np.uint64)            # [case, lane, reg, slot]
        if self.frag.slots == 1:
            return cell[..., 0].astype(np.uint32)
        return ((cell[..., 0] & 0xFFFF) | ((cell[..., 1] & 0xFFFF) << 16)).astype(np.uint32)

    def probes(self, rng, cases=8):
        lane = np.arange(32, dtype=np.uint32)[:, None] << 9
        col = np.arange(self.columns, dtype=np.uint32)[None, :]
        tags = rng.integers(1, 1 << 15, cases, dtype=np.uint32)[:, None, None] << 16
        image = (tags | lane | col).astype(np.uint32)               # [case, 32, columns]
        if self.load:
            return [Probe("ids", image.reshape(cases, -1), {})]
        return [Probe("ids", self.words_from_image(image).reshape(cases, -1), {})]

    def compare(self, check, inp, out, meta, aux=None):
        fmt = self.instr.operands["R"].fmt
        if self.load:
            image = np.asarray(inp, np.uint32).reshape(-1, 32, self.columns)
            expected = self.words_from_image(image)
            got = np.asarray(out, np.uint32).reshape(-1, 32, self.regs)
        else:
            expected = np.asarray(inp, np.uint32).reshape(-1, 32, self.regs)
            got = self.words_from_image(np.asarray(out, np.uint32).reshape(-1, 32, self.columns))
        n, compared, details = diff_fragment(self.frag, fmt, expected, got, letter="TMEM")
        return Result("layouts", self.entry, "ids", cases=len(expected), compared=compared, mismatches=n,
                      details=details).finish()
