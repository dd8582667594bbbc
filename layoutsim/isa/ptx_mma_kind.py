"""sm_120a's `.kind::` forms of mma.sync: m16n8k32 .kind::f8f6f4 (FP8/FP6/FP4 in 8-bit
containers, no scales) and the block-scaled m16n8k32 .kind::mxf8f6f4 and m16n8k64 .kind::mxf4 /
.kind::mxf4nvf4 (.block_scale.scale_vec::1X/2X/4X with .ue8m0 / .ue4m3 scale factors), PTX ISA
9.x 9.7.14.5.14 'Multiply-and-Accumulate Instruction: mma' (.kind, .block_scale) and 9.7.14.5
'Matrix Fragments for mma.m16n8k32 / mma.m16n8k64'.

Lane maps are the mma.sync formulas (ptx_mma.LAYOUTS) by container width: the k32 forms hold
one FP8/FP6/FP4 element per byte (the 8-bit m16n8k32 maps), the k64 FP4 forms two per byte
(the 4-bit m16n8k64 maps); C/D are the m16n8 accumulators. The scale-factor registers
(scale-a-data with {byte-id-a, thread-id-a}, scale-b-data likewise) are not mapped here.
"""
from ..archs import compile_target
from ..formats import bits
from ..fragment import FragmentMap
from .instruction import Instruction, Operand
from .ptx_mma import LAYOUTS
from .registry import Entry

ARCHS = ("sm_120",)
SOURCE = ("PTX ISA 9.x 9.7.14.5.14 'mma' (.kind::f8f6f4 / mxf8f6f4 / mxf4 / mxf4nvf4, .block_scale) "
          "and 9.7.14.5 'Matrix Fragments for mma.m16n8k{k}' ({cls} elements)")
F8F6F4 = ("e4m3", "e5m2", "e3m2", "e2m3", "e2m1")


def _operand(name, shape, cls, fmt, role):
    m, n, k = 16, 8, int(shape.split("k")[1])
    rows, cols = {"A": (m, k), "B": (k, n), "C": (m, n), "D": (m, n)}[name]
    key = (shape[:shape.index("k")], "C") if name in "CD" else (shape, name, cls)
    formula = LAYOUTS[key]
    w = {"8b": 8, "4b": 4}[cls] if name in "AB" else bits(fmt)     # f16 C/D: two per register
    frag = FragmentMap.from_formula(32, rows * cols // 32, 32 // w, w, (1, rows, cols),
                                    lambda l, i: (0, *formula(l, i)), prefix=name.lower())
    return Operand(name, fmt, frag, role)


def _variants():
    """(kind, shape, d, a, b, scale_vec, scale format) of every form."""
    out = [("f8f6f4", "m16n8k32", d, a, b, None, None)
           for d in ("f32", "f16") for a in F8F6F4 for b in F8F6F4]
    out += [("mxf8f6f4", "m16n8k32", "f32", a, b, "1X", "ue8m0") for a in F8F6F4 for b in F8F6F4]
    out += [("mxf4", "m16n8k64", "f32", "e2m1", "e2m1", "2X", "ue8m0"),
            ("mxf4nvf4", "m16n8k64", "f32", "e2m1", "e2m1", "2X", "ue8m0"),
            # ("mxf4nvf4", ..., "4X", "ue8m0"): ptxas 13.0 refuses it ("Illegal modifier
            # '.scale_vec::4X' for instruction 'mma' with type '.ue8m0'"); MMA-Sim lists it
            ("mxf4nvf4", "m16n8k64", "f32", "e2m1", "e2m1", "4X", "ue4m3")]
    return out


def _names(kind, shape, d, a, b, vec, s):
    bs = f".block_scale.scale_vec::{vec}" if vec else ""
    tail = f".{d}.{a}.{b}.{d}" + (f".{s}" if s else "")
    return (f"mma.sync.aligned.{shape}.row.col.kind::{kind}{bs}{tail}", f"mma.{shape}.kind::{kind}{bs}{tail}")


def _build(kind, shape, d, a, b, vec, s):
    full, short = _names(kind, shape, d, a, b, vec, s)
    cls = "4b" if shape == "m16n8k64" else "8b"
    k = int(shape.split("k")[1])

    def build():
        ops = {"A": _operand("A", shape, cls, a, "input"), "B": _operand("B", shape, cls, b, "input"),
               "C": _operand("C", shape, cls, d, "input"), "D": _operand("D", shape, cls, d, "output")}
        block = {"1X": 32, "2X": 32, "4X": 16}.get(vec)
        notes = [("one element per byte: FP8, FP6 in bits 5-0, FP4 in bits 5-2 (MMA-Sim's container, "
                  "validated on RTX Blackwell; layoutsim.mma takes FP6/FP4 raw bits in the low bits)")
                 if cls == "8b" else "two FP4 elements per byte",
                 f"compile for {compile_target(ARCHS[0], arch_specific=True)}: the .kind:: forms are an "
                 f"arch-specific feature of {ARCHS[0]}"]
        if vec:
            notes.append(f"block scaling: one .{s} scale per {block} k of each A row and B column "
                         f"(scale_vec::{vec}); the scale registers and their byte/thread selectors "
                         "are not mapped here (layoutsim.mma takes scale_a, scale_b as matrices)")
        formats = {"a": a, "b": b, "c": d, "d": d, **({"scale": s} if s else {})}
        return Instruction(name=full, family="mma_kind", vendor="nvidia", threads=32, operands=ops,
                           shape=(16, 8, k), archs=ARCHS, aliases=(short,), formats=formats,
                           source=SOURCE.format(k=k, cls={"8b": "8-bit", "4b": "4-bit"}[cls]),
                           notes=tuple(notes), arch_specific=True,
                           options={"kind": kind, "scale_vec": vec, "block": block})
    return build


def entries():
    out = []
    for v in _variants():
        full, short = _names(*v)
        kind, shape, d, a, b, vec, s = v
        out.append(Entry(name=full, family="mma_kind", vendor="nvidia", archs=ARCHS,
                         build=_build(*v), aliases=(short,), arch_specific=True,
                         summary=f"16x8x{shape.split('k')[1]} D.{d} = A.{a} x B.{b} + C"
                                 + (f", {s} scales per {'16' if vec == '4X' else '32'} k" if s else "")))
    return out
