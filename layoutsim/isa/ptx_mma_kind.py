"""sm_120a's `.kind::` forms of mma.sync: m16n8k32 .kind::f8f6f4 (FP8/FP6/FP4 in 8-bit
containers, no scales) and the block-scaled m16n8k32 .kind::mxf8f6f4 and m16n8k64 .kind::mxf4 /
.kind::mxf4nvf4 (.block_scale.scale_vec::1X/2X/4X with .ue8m0 / .ue4m3 scale factors), PTX ISA
9.x 9.7.14.5.14 'Multiply-and-Accumulate Instruction: mma' (.kind, .block_scale) and 9.7.14.5
'Matrix Fragments for mma.m16n8k32 / mma.m16n8k64'.

Lane maps are the mma.sync formulas (ptx_mma.LAYOUTS) by container width: the k32 forms hold
one FP8/FP6/FP4 element per byte (the 8-bit m16n8k32 maps), the k64 FP4 forms two per byte
(the 4-bit m16n8k64 maps); C/D are the m16n8 accumulators. The block-scaled forms' scale-factor
registers are operands SFA (scale-a-data: SFA[i][s] the scale of row i of A, K-chunk s) and SFB
(scale-b-data: SFB[s][j], column j of B), each lane's .b32 register byte by byte, for the selectors
{byte-id-a, thread-id-a} / {byte-id-b, thread-id-b} spelled after the name
("... .ue8m0 byte-id-a:1 thread-id-a:1 thread-id-b:3"; default 0): PTX ISA 9.x 9.7.14.3 'Block Scaling
for mma.sync' (sf_fragment below).
"""
import dataclasses

import numpy as np

from ..archs import compile_target
from ..errors import LayoutsimError
from ..formats import bits
from ..fragment import FragmentMap
from .instruction import Instruction, Operand
from .ptx_mma import LAYOUTS
from .registry import Entry, get

ARCHS = ("sm_120",)
SOURCE = ("PTX ISA 9.x 9.7.14.5.14 'mma' (.kind::f8f6f4 / mxf8f6f4 / mxf4 / mxf4nvf4, .block_scale) "
          "and 9.7.14.5 'Matrix Fragments for mma.m16n8k{k}' ({cls} elements)")
F8F6F4 = ("e4m3", "e5m2", "e3m2", "e2m3", "e2m1")

# ---- scale-factor registers -------------------------------------------------------------------
# PTX ISA 9.x 9.7.14.3 'Block Scaling for mma.sync': scale-a-data / scale-b-data are one .b32 register
# of every lane. thread-id-a picks the thread pair of each quad that gives SF_A (0: %laneid % 4 == 0 or 1,
# 1: == 2 or 3), thread-id-b the one thread of each quad (%laneid % 4 == thread-id-b); byte-id picks the
# byte (1X), the byte pair (2X: 0 the low two, 2 the high two) or all four (4X, byte-id 0) of the register.
# Table 37's valid values (ptxas 13.0 -arch=sm_120a rejects others with the same ranges): scale_vec ->
# (scales per row of A / column of B, byte-ids); thread-id-a 0-1 and thread-id-b 0-3 for every scale_vec.
SF_SOURCE = "PTX ISA 9.x 9.7.14.3 'Block Scaling for mma.sync' (Table 37, Figures 43-45)"
SF_SELECT = {"1X": (1, (0, 1, 2, 3)), "2X": (2, (0, 2)), "4X": (4, (0,))}
SF_THREADS = {"a": (0, 1), "b": (0, 1, 2, 3)}
SELECTORS = ("byte-id-a", "thread-id-a", "byte-id-b", "thread-id-b")
# Within the selected quad thread(s): row i of A in lane 4 * (i % 8) + 2 * thread-id-a + i // 8 (the pair's
# lower lane rows 0-7, the upper rows 8-15), column j of B in lane 4 * j + thread-id-b, and scale s of a row
# or column in byte byte-id + s (the first K-chunk in the low byte). The text above leaves which lane of the
# pair holds which row, and the byte order, to Figures 43 and 45 (images, not read here): assumed as CUTLASS
# 4.2's SM120 block-scaled traits give them (cute/atom/mma_traits_sm120.hpp SFALayout (T32,V) -> (M16,K):
# row = (t / 4) + 8 * (t % 2); SFBLayout: column t / 4; cute/arch/mma_sm120.hpp passes the K/VS scales as one
# uint8/16/32 register, K order from the low byte) and as Triton 3.6 lowers tl.dot_scaled for sm_120a
# (getSM120DotScaledScaleLayout: lane bit 0 -> row + 8, the scale registers built by its compiler): both run
# on RTX 50 GPUs; tests/isa/test_mma_kind_scales.py checks them against CuTe's printed layouts and runs
# Triton's kernels.
SF_ASSUMED = ("warning: assumed: which lane of the thread pair holds row i vs i + 8 of SFA, and the byte order of "
              "the 2X/4X scales (PTX ISA Figures 43 and 45 were not read here): as CUTLASS 4.2's SM120 traits and "
              "Triton 3.6's lowering for sm_120 place them")


def sf_fragment(vec, is_a, byte_id=0, thread_id=0):
    """The scale-factor register of the block-scaled mma.sync with .scale_vec::`vec` for the
    selectors (byte_id, thread_id): SFA (1, 16, n) or SFB (1, n, 8), n scales per row / column
    (SF_SELECT), one byte each; lanes and bytes the selectors leave out hold nothing."""
    n = SF_SELECT[vec][0]
    r, s = np.meshgrid(np.arange(16 if is_a else 8), np.arange(n), indexing="ij")
    lane = 4 * (r % 8) + 2 * thread_id + r // 8 if is_a else 4 * r + thread_id
    table = np.full((32, 1, 4, 3), -1, np.int16)
    table[lane, 0, byte_id + s] = np.stack([0 * r, r, s] if is_a else [0 * r, s, r], -1)
    return FragmentMap(table=table, shape=(1, 16, n) if is_a else (1, n, 8), elem_bits=8,
                       names=tuple(f"{'sfa' if is_a else 'sfb'}.b{k}" for k in range(4)))


def check_selectors(name, vec, sel):
    """Raise the one-line error for selectors {name: value} outside Table 37 (`vec`'s)."""
    for key, v in sel.items():
        ok = SF_SELECT[vec][1] if key.startswith("byte") else SF_THREADS[key[-1]]
        if v not in ok:
            raise LayoutsimError(f"{name}: {key}:{v} out of range: with .scale_vec::{vec} {key} is "
                                 f"{', '.join(map(str, ok))} (PTX ISA 9.7.14.3 Table 37)")


def selectors(text):
    """{"byte-id-a": 1, ...} from "byte-id-a:1 thread-id-a:1 ..." (the four default 0)."""
    out = dict.fromkeys(SELECTORS, 0)
    for tok in text.split():
        key, _, val = tok.partition(":")
        if key not in SELECTORS or not val.isdigit():
            raise LayoutsimError(f"unknown mma.sync selector {tok!r}; valid: "
                                 f"{' '.join(k + ':N' for k in SELECTORS)}")
        out[key] = int(val)
    return out


_SELECTED = {}        # (name, selectors) -> Instruction


def selected(inst, byte_a=0, thread_a=0, byte_b=0, thread_b=0):
    """`inst` (a block-scaled entry) with its SFA / SFB maps for these selectors."""
    key = (inst.name, byte_a, thread_a, byte_b, thread_b)
    if key not in _SELECTED:
        _SELECTED[key] = _select(inst, byte_a, thread_a, byte_b, thread_b)
    return _SELECTED[key]


def _select(inst, byte_a, thread_a, byte_b, thread_b):
    vec = inst.options.get("scale_vec")
    if not vec:
        raise LayoutsimError(f"{inst.name} has no scale factors: the byte-id/thread-id selectors belong to "
                             f".block_scale forms")
    sel = dict(zip(SELECTORS, (byte_a, thread_a, byte_b, thread_b)))
    check_selectors(inst.name, vec, sel)
    fmt = inst.formats["scale"]
    ops = dict(inst.operands, SFA=Operand("SFA", fmt, sf_fragment(vec, True, byte_a, thread_a), "input"),
               SFB=Operand("SFB", fmt, sf_fragment(vec, False, byte_b, thread_b), "input"))
    note = (f"SFA: scale-a-data with {{byte-id-a, thread-id-a}} = {{{byte_a}, {thread_a}}}; SFB: scale-b-data with "
            f"{{byte-id-b, thread-id-b}} = {{{byte_b}, {thread_b}}}")
    notes = tuple(n for n in inst.notes if not n.startswith("SFA: scale-a-data")) + (note,)
    return dataclasses.replace(inst, operands=ops, notes=notes, options={**inst.options, **{
        k.replace("-", "_"): v for k, v in sel.items()}})


# FP6/FP4 of the m16n8k32 forms in their 8-bit containers: format -> (lowest bit, width). FP6 in bits 5-0, FP4 in
# bits 5-2: MMA-Sim's container (mmasim/nv_ptx, validated by its authors on RTX Blackwell), and CUTLASS 4.2
# shifts e2m1 left by 2 before the m16n8k32 MMAs (cute/atom/mma_traits_sm120.hpp fp4_shift_A/B; "the same
# transformation is NOT needed for FP6 and FP8"). layoutsim.mma takes them in the low bits.
CONTAINER = {"e2m1": (2, 4), "e2m3": (0, 6), "e3m2": (0, 6)}


def container(inst, key):
    """(lowest bit, width) of operand `key`'s ("a" or "b") FP6/FP4 elements in their bytes, or None
    (FP8, the 4-bit m16n8k64 forms, or another family)."""
    if inst.family != "mma_kind" or inst.shape[2] != 32:
        return None
    return CONTAINER.get(inst.formats[key])


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
            notes += [f"block scaling: one .{s} scale per {block} k of each A row and B column "
                      f"(scale_vec::{vec}): operands SFA / SFB are scale-a-data / scale-b-data for the "
                      "{byte-id, thread-id} selectors after the name "
                      f"('byte-id-a:{SF_SELECT[vec][1][-1]} thread-id-a:1 thread-id-b:3'; default 0); layoutsim.mma takes "
                      f"scale_a (M, {k // block}) and scale_b ({k // block}, N); {SF_SOURCE}", SF_ASSUMED]
        formats = {"a": a, "b": b, "c": d, "d": d, **({"scale": s} if s else {})}
        inst = Instruction(name=full, family="mma_kind", vendor="nvidia", threads=32, operands=ops,
                           shape=(16, 8, k), archs=ARCHS, aliases=(short,), formats=formats,
                           source=SOURCE.format(k=k, cls={"8b": "8-bit", "4b": "4-bit"}[cls]),
                           notes=tuple(notes), arch_specific=True,
                           options={"kind": kind, "scale_vec": vec, "block": block})
        return selected(inst) if vec else inst
    return build


def _modified(v):
    """Entry.modified of one form: the selectors after the name (`selectors`)."""
    def modified(arch, mods):
        sel = selectors(mods)
        return selected(get(_names(*v)[0], arch), *(sel[k] for k in SELECTORS))
    return modified


def entries():
    out = []
    for v in _variants():
        full, short = _names(*v)
        kind, shape, d, a, b, vec, s = v
        out.append(Entry(name=full, family="mma_kind", vendor="nvidia", archs=ARCHS,
                         build=_build(*v), aliases=(short,), arch_specific=True,
                         modified=_modified(v),
                         summary=f"16x8x{shape.split('k')[1]} D.{d} = A.{a} x B.{b} + C"
                                 + (f", {s} scales per {'16' if vec == '4X' else '32'} k" if s else "")))
    return out
