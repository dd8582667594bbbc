"""mma.sync fragments, from the PTX ISA, section "Matrix Fragments for mma.m16n8k*"
(9.7.14.5.x, "Warp-level Matrix Multiply-Accumulate Instructions"), PTX ISA 8.x/9.0.

Each fragment is the ISA's formula over groupID = lane >> 2 and threadID_in_group = lane % 4,
indexed by the element number i of a<i>, b<i>, c<i> (element i sits in register i // p, slot
i % p, where p elements are packed per register). These three-line formulas are the only
place in layoutsim that knows the mma.sync layouts.
"""
from itertools import product

from ..formats import bits
from ..fragment import FragmentMap
from .instruction import Instruction, Operand, nvidia_from
from .registry import Entry

def _source(shape, a):
    kind = {"f64": "floating point type .f64", "tf32": "floating point type .tf32",
            "s8": "integer type", "u8": "integer type", "s4": "integer type .s4/.u4",
            "u4": "integer type .s4/.u4"}.get(a, f"floating point type .{a}")
    return f"PTX ISA 9.0, 9.7.14.5 'Matrix Fragments for mma.{shape}' ({kind})"


def _g(lane):
    return lane >> 2


def _t(lane):
    return lane & 3


# (shape, operand) -> formula(lane, i) -> (row, col). Keys by element width class.
# "16b": f16/bf16, "32b": tf32, "8b": s8/u8/e4m3/e5m2, "4b": s4/u4, "64b": f64.
LAYOUTS = {
    # accumulators
    ("m16n8", "C"): lambda l, i: (_g(l) + 8 * (i >> 1), 2 * _t(l) + (i & 1)),
    ("m8n8", "C"): lambda l, i: (_g(l), 2 * _t(l) + i),
    # 16-bit inputs
    ("m16n8k16", "A", "16b"): lambda l, i: (_g(l) + 8 * ((i >> 1) & 1), 2 * _t(l) + (i & 1) + 8 * (i >> 2)),
    ("m16n8k16", "B", "16b"): lambda l, i: (2 * _t(l) + (i & 1) + 8 * (i >> 1), _g(l)),
    ("m16n8k8", "A", "16b"): lambda l, i: (_g(l) + 8 * (i >> 1), 2 * _t(l) + (i & 1)),
    ("m16n8k8", "B", "16b"): lambda l, i: (2 * _t(l) + i, _g(l)),
    # tf32 inputs
    ("m16n8k8", "A", "32b"): lambda l, i: (_g(l) + 8 * (i & 1), _t(l) + 4 * (i >> 1)),
    ("m16n8k8", "B", "32b"): lambda l, i: (_t(l) + 4 * i, _g(l)),
    ("m16n8k4", "A", "32b"): lambda l, i: (_g(l) + 8 * i, _t(l)),
    ("m16n8k4", "B", "32b"): lambda l, i: (_t(l), _g(l)),
    # 8-bit inputs (s8/u8 and e4m3/e5m2)
    ("m16n8k32", "A", "8b"): lambda l, i: (_g(l) + 8 * ((i >> 2) & 1), 4 * _t(l) + (i & 3) + 16 * (i >> 3)),
    ("m16n8k32", "B", "8b"): lambda l, i: (4 * _t(l) + (i & 3) + 16 * (i >> 2), _g(l)),
    ("m16n8k16", "A", "8b"): lambda l, i: (_g(l) + 8 * (i >> 2), 4 * _t(l) + (i & 3)),
    ("m16n8k16", "B", "8b"): lambda l, i: (4 * _t(l) + i, _g(l)),
    ("m8n8k16", "A", "8b"): lambda l, i: (_g(l), 4 * _t(l) + i),
    ("m8n8k16", "B", "8b"): lambda l, i: (4 * _t(l) + i, _g(l)),
    # 4-bit inputs
    ("m16n8k64", "A", "4b"): lambda l, i: (_g(l) + 8 * ((i >> 3) & 1), 8 * _t(l) + (i & 7) + 32 * (i >> 4)),
    ("m16n8k64", "B", "4b"): lambda l, i: (8 * _t(l) + (i & 7) + 32 * (i >> 3), _g(l)),
    ("m16n8k32", "A", "4b"): lambda l, i: (_g(l) + 8 * (i >> 3), 8 * _t(l) + (i & 7)),
    ("m16n8k32", "B", "4b"): lambda l, i: (8 * _t(l) + i, _g(l)),
    # f64 inputs
    ("m8n8k4", "A", "64b"): lambda l, i: (_g(l), _t(l)),
    ("m8n8k4", "B", "64b"): lambda l, i: (_t(l), _g(l)),
    ("m16n8k4", "A", "64b"): lambda l, i: (_g(l) + 8 * i, _t(l)),
    ("m16n8k4", "B", "64b"): lambda l, i: (_t(l), _g(l)),
    ("m16n8k8", "A", "64b"): lambda l, i: (_g(l) + 8 * (i & 1), _t(l) + 4 * (i >> 1)),
    ("m16n8k8", "B", "64b"): lambda l, i: (_t(l) + 4 * i, _g(l)),
    ("m16n8k16", "A", "64b"): lambda l, i: (_g(l) + 8 * (i & 1), _t(l) + 4 * (i >> 1)),
    ("m16n8k16", "B", "64b"): lambda l, i: (_t(l) + 4 * i, _g(l)),
}

_CLASS = {"f16": "16b", "bf16": "16b", "tf32": "32b", "s8": "8b", "u8": "8b", "e4m3": "8b",
          "e5m2": "8b", "s4": "4b", "u4": "4b", "f64": "64b"}


def _dims(shape):
    m, rest = shape[1:].split("n")
    n, k = rest.split("k")
    return int(m), int(n), int(k)


def lane_formula(shape, name, fmt):
    """formula(lane, i) -> (row, col) of element i of operand `name` ("A".."D") of mma.sync
    `shape` ("m16n8k16") with elements of `fmt` (wgmma tiles these over its warps)."""
    if name in "CD":
        return LAYOUTS[(shape[:shape.index("k")], "C")]
    return LAYOUTS[(shape, name, _CLASS[fmt])]


def _mma_operand(name, shape, fmt, role):
    m, n, k = _dims(shape)
    rows, cols = {"A": (m, k), "B": (k, n), "C": (m, n), "D": (m, n)}[name]
    formula = lane_formula(shape, name, fmt)
    w = bits(fmt)
    reg_bits = 64 if w == 64 else 32
    slots = reg_bits // w
    n_elems = rows * cols // 32
    frag = FragmentMap.from_formula(32, n_elems, slots, w, (1, rows, cols),
                                    lambda l, i: (0, *formula(l, i)), prefix=name.lower(),
                                    reg_bits=reg_bits)
    return Operand(name, fmt, frag, role)


def _build(full, short, shape, d, a, b, c, minimum, satfinite):
    def build():
        ops = {"A": _mma_operand("A", shape, a, "input"), "B": _mma_operand("B", shape, b, "input"),
               "C": _mma_operand("C", shape, c, "input"), "D": _mma_operand("D", shape, d, "output")}
        return Instruction(name=full, family="mma", vendor="nvidia", threads=32, operands=ops,
                           shape=_dims(shape), archs=nvidia_from(minimum), aliases=(short,),
                           formats={"a": a, "b": b, "c": c, "d": d}, source=_source(shape, a),
                           options={"satfinite": satfinite})
    return build


def _variants():
    """(shape, d, a, b, c, first arch, satfinite) for every mma.sync form in the catalog."""
    out = []
    for shape in ("m16n8k8", "m16n8k16"):
        # .dtype and .ctype must match for these shapes: ptxas 13.0 rejects f16.f16.f16.f32 and
        # f32.f16.f16.f16 (seen on the H200 run of gpu-check, docs/validation/h200.md).
        for dc in ("f16", "f32"):
            out.append((shape, dc, "f16", "f16", dc, "sm_80", False))
        out.append((shape, "f32", "bf16", "bf16", "f32", "sm_80", False))
    out += [("m16n8k4", "f32", "tf32", "tf32", "f32", "sm_80", False),
            ("m16n8k8", "f32", "tf32", "tf32", "f32", "sm_80", False)]
    for a, b in product(("e4m3", "e5m2"), repeat=2):
        for d in ("f32", "f16"):
            out.append(("m16n8k32", d, a, b, d, "sm_89", False))
    for shape, first in (("m8n8k16", "sm_75"), ("m16n8k16", "sm_80"), ("m16n8k32", "sm_80")):
        for a, b in product(("s8", "u8"), repeat=2):
            for sat in (False, True):
                out.append((shape, "s32", a, b, "s32", first, sat))
    for shape in ("m16n8k32", "m16n8k64"):
        for a, b in product(("s4", "u4"), repeat=2):
            for sat in (False, True):
                out.append((shape, "s32", a, b, "s32", "sm_80", sat))
    out.append(("m8n8k4", "f64", "f64", "f64", "f64", "sm_80", False))
    for shape in ("m16n8k4", "m16n8k8", "m16n8k16"):
        out.append((shape, "f64", "f64", "f64", "f64", "sm_90", False))
    return out


def entries():
    out = []
    for shape, d, a, b, c, minimum, sat in _variants():
        sat_tok = ".satfinite" if sat else ""
        full = f"mma.sync.aligned.{shape}.row.col{sat_tok}.{d}.{a}.{b}.{c}"
        short = f"mma.{shape}{sat_tok}.{d}.{a}.{b}.{c}"
        m, n, k = _dims(shape)
        out.append(Entry(name=full, family="mma", vendor="nvidia", archs=nvidia_from(minimum),
                         build=_build(full, short, shape, d, a, b, c, minimum, sat),
                         aliases=(short,), summary=f"{m}x{n}x{k} D.{d} = A.{a} x B.{b} + C.{c}"))
    return out
