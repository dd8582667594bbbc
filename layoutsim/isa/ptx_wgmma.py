"""Hopper wgmma.mma_async fragments (registers only: the accumulator D and A-from-registers),
from the PTX ISA 9.0, 9.7.15.5.1 'Register Fragments' ('Matrix fragments for wgmma.m64nNk*').

A warpgroup is 128 threads; warp w = thread >> 5 owns rows 16w..16w+15. The ISA's figures are
the mma.sync fragments tiled, as CuTe composes its atoms (and nothing here restates them):
  A (64 x K)  each warp holds its 16 rows as the A operand of mma.sync m16n8kK (K = 16 for
              16-bit, 8 for tf32, 32 for 8-bit inputs);
  D (64 x N)  each warp holds its 16 rows as N/8 mma.sync m16n8 accumulators side by side:
              elements 4j..4j+3 of a thread are c0..c3 of column block j.
B (and A from a descriptor) live in shared memory and have no register fragment. wgmma exists
on sm_90 hardware, compiled for its arch-specific target (`archs.compile_target`).
"""
from itertools import product

from ..archs import compile_target
from ..formats import bits
from ..fragment import FragmentMap
from .instruction import Instruction, Operand
from .ptx_mma import lane_formula
from .registry import Entry

SOURCE = "PTX ISA 9.0, 9.7.15.5.1 'Register Fragments' (wgmma .m64nNk8/k16/k32 D and A figures)"
ARCHS = ("sm_90",)
K_OF = {"f16": 16, "bf16": 16, "tf32": 8, "e4m3": 32, "e5m2": 32, "s8": 32, "u8": 32}
INT_N = (8, 16, 24) + tuple(range(32, 257, 16))   # .s8/.u8 N values (PTX ISA 9.7.15.5 table)
WARP_ROWS = 16                                      # rows of the tile each warp of the group holds
ACC_ELEMS, ACC_COLS = 4, 8                          # one m16n8 accumulator: 4 elements, 8 columns


def _over_warps(formula):
    """A warp-level formula(lane, i) -> (row, col) as a warpgroup formula(thread, i): warp
    thread >> 5 holds rows WARP_ROWS * warp + row."""
    def f(t, i):
        row, col = formula(t & 31, i)
        return 0, WARP_ROWS * (t >> 5) + row, col
    return f


def _over_column_blocks(formula):
    """Accumulators side by side: element i is element i % 4 of the m16n8 block i // 4."""
    def f(lane, i):
        row, col = formula(lane, i % ACC_ELEMS)
        return row, ACC_COLS * (i // ACC_ELEMS) + col
    return f


def _a_formula(a):
    return _over_warps(lane_formula(f"m16n8k{K_OF[a]}", "A", a))


def _d_formula(d):
    return _over_warps(_over_column_blocks(lane_formula("m16n8k16", "D", d)))


def _frag(formula, rows, cols, fmt, prefix):
    w = bits(fmt)
    slots = 32 // w
    return FragmentMap.from_formula(128, rows * cols // 128, slots, w, (1, rows, cols), formula,
                                    prefix=prefix)


def _build(full, short, n, d, a, b):
    k = K_OF[a]

    def build():
        ops = {"A": Operand("A", a, _frag(_a_formula(a), 64, k, a, "a"), "input"),
               "D": Operand("D", d, _frag(_d_formula(d), 64, n, d, "d"), "output")}
        notes = ("B is read from shared memory through a matrix descriptor: no register fragment",
                 "A may come from registers (this map) or from shared memory (descriptor)",
                 f"compile for {compile_target(ARCHS[0], arch_specific=True)}: wgmma is an "
                 f"arch-specific feature of {ARCHS[0]}")
        return Instruction(name=full, family="wgmma", vendor="nvidia", threads=128, operands=ops,
                           shape=(64, n, k), archs=ARCHS, aliases=(short,),
                           formats={"a": a, "b": b, "d": d}, source=SOURCE, notes=notes,
                           arch_specific=True)
    return build


def _variants():
    out = []
    for n in range(8, 257, 8):
        for d in ("f16", "f32"):
            out.append((n, d, "f16", "f16"))
        out.append((n, "f32", "bf16", "bf16"))
        out.append((n, "f32", "tf32", "tf32"))
        for a, b in product(("e4m3", "e5m2"), repeat=2):
            for d in ("f16", "f32"):
                out.append((n, d, a, b))
    for n in INT_N:
        for a, b in product(("s8", "u8"), repeat=2):
            out.append((n, "s32", a, b))
    return out


def entries():
    out = []
    for n, d, a, b in _variants():
        k = K_OF[a]
        full = f"wgmma.mma_async.sync.aligned.m64n{n}k{k}.{d}.{a}.{b}"
        short = f"wgmma.m64n{n}k{k}.{d}.{a}.{b}"
        out.append(Entry(name=full, family="wgmma", vendor="nvidia", archs=ARCHS,
                         build=_build(full, short, n, d, a, b), aliases=(short,), arch_specific=True,
                         summary=f"64x{n}x{k} warpgroup D.{d} += A.{a} x B.{b}"))
    return out
