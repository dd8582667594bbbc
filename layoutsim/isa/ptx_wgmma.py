"""Hopper wgmma.mma_async fragments (registers only: the accumulator D and A-from-registers),
from the PTX ISA 9.0, 9.7.15.5.1 'Register Fragments' ('Matrix fragments for wgmma.m64nNk*').

A warpgroup is 128 threads; warp w = thread >> 5 owns rows 16w..16w+15. Inside a warp the
layout repeats the mma.sync m16n8 accumulator pattern over N/8 column blocks (D), and the
m16n8k* A patterns for the K of the input type (A). B (and A from a descriptor) live in
shared memory and have no register fragment. wgmma exists on sm_90 hardware, compiled for
the arch-specific target sm_90a.
"""
from itertools import product

from ..formats import bits
from ..fragment import FragmentMap
from .instruction import Instruction, Operand
from .registry import Entry

SOURCE = "PTX ISA 9.0, 9.7.15.5.1 'Register Fragments' (wgmma .m64nNk8/k16/k32 D and A figures)"
ARCHS = ("sm_90",)
K_OF = {"f16": 16, "bf16": 16, "tf32": 8, "e4m3": 32, "e5m2": 32, "s8": 32, "u8": 32}
INT_N = (8, 16, 24) + tuple(range(32, 257, 16))   # .s8/.u8 N values (PTX ISA 9.7.15.5 table)


def _row(t, hi):
    """Row of a warpgroup thread t in the 64-row tile; hi selects the +8 half."""
    return 16 * (t >> 5) + ((t & 31) >> 2) + 8 * hi


def _d_formula(t, i):
    g4 = t & 3
    return 0, _row(t, (i >> 1) & 1), 8 * (i >> 2) + 2 * g4 + (i & 1)


def _a_formula(k):
    def f(t, i):
        g4 = t & 3
        if k == 16:     # like mma m16n8k16 A
            return 0, _row(t, (i >> 1) & 1), 2 * g4 + (i & 1) + 8 * (i >> 2)
        if k == 8:      # like mma m16n8k8 tf32 A
            return 0, _row(t, i & 1), g4 + 4 * (i >> 1)
        return 0, _row(t, (i >> 2) & 1), 4 * g4 + (i & 3) + 16 * (i >> 3)   # k32, 8-bit
    return f


def _frag(formula, rows, cols, fmt, prefix):
    w = bits(fmt)
    slots = 32 // w
    return FragmentMap.from_formula(128, rows * cols // 128, slots, w, (1, rows, cols), formula,
                                    prefix=prefix)


def _build(full, short, n, d, a, b):
    k = K_OF[a]

    def build():
        ops = {"A": Operand("A", a, _frag(_a_formula(k), 64, k, a, "a"), "input"),
               "D": Operand("D", d, _frag(_d_formula, 64, n, d, "d"), "output")}
        notes = ("B is read from shared memory through a matrix descriptor: no register fragment",
                 "A may come from registers (this map) or from shared memory (descriptor)",
                 "compile for sm_90a: wgmma is an arch-specific feature of sm_90")
        return Instruction(name=full, family="wgmma", vendor="nvidia", threads=128, operands=ops,
                           shape=(64, n, k), archs=ARCHS, aliases=(short,),
                           formats={"a": a, "b": b, "d": d}, source=SOURCE, notes=notes)
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
                         build=_build(full, short, n, d, a, b), aliases=(short,),
                         summary=f"64x{n}x{k} warpgroup D.{d} += A.{a} x B.{b}"))
    return out
