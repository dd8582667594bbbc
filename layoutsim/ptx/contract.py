"""What ptxas does to float arithmetic: the multiply-adds it contracts.

PTX `add/sub.f32` and `.f64` without a rounding modifier may be fused by ptxas with the `mul`
(also without one) that produced an operand, into one FFMA/DFMA rounded once (PTX ISA 9.7.3.3-5:
"add/sub/mul with no rounding modifier ... may be optimized aggressively by the code generator,
e.g. mul/add sequences with no rounding modifiers may be optimized to use fused-multiply-add
instructions"; nvcc's default -fmad=true emits such pairs). The executor computes what the SASS
computes, so it takes ptxas's decisions from the SASS ptxas emitted for this very PTX (sass.py:
ptxas + nvdisasm with every instruction tagged with its PTX line, lowering.py):

  an add/sub whose line's SASS holds an FFMA (f32) or DFMA (f64) and no FADD/DADD, with an operand
  defined in the same straight-line block by such a mul (same .ftz, no .sat, unpredicated or under
  the add's own guard, its sources not redefined between), is computed as fma(x, y, +-c) of that
  mul's sources, rounded once with the add's modifiers. Where both operands are such products, the
  one whose mul line has no FMUL/DMUL of its own is the one fused. The product may also be a
  div.full/div.approx.f32, whose SASS ends with an FMUL of MUFU.RCP's result and the dividend
  (numerics/sfu_div.py): ptxas fuses that FMUL with the add the same way (Triton's layer norm,
  tutorial 05: `var + eps` after `div.full.f32`, one FFMA on the H100, where the unfused sum
  differed by one ulp in one row's rstd). Nothing else is fused.

When ptxas or nvdisasm is not here, or the decision cannot be placed (the product from another
block, two candidate products and no way to tell), the add is computed as written, unfused, and
the run's fidelity line counts its executions as unknown (report.fidelity).
"""
from ..numerics import sfu_div
from . import ops_float as F
from . import types as T

ROUND = ("rn", "rz", "rm", "rp")
FMA = {32: "FFMA", 64: "DFMA"}
ADD = {32: "FADD", 64: "DADD"}
MUL = {32: "FMUL", 64: "DMUL"}


class Contraction:
    """ptxas's decisions for one Program: which add steps were fused, and which sites' decision
    is unknown (None when ptxas was not consulted: `note` says why)."""

    def __init__(self, available, note=None):
        self.available = available
        self.note = note
        self.fused = {}              # add pc -> mul pc
        self.unknown = {}            # site -> why


def _float_type(ins):
    tys = T.types_in(tuple(ins.mods))
    t = tys[-1] if tys else None
    return t if t is not None and t.name in ("f32", "f64") else None


def _plain(ins, opcodes, allowed):
    """The f32/f64 type of an instruction of `opcodes` without a rounding modifier whose other
    modifiers are among `allowed`; else None."""
    if ins is None or ins.opcode not in opcodes:
        return None
    t = _float_type(ins)
    if t is None or any(m in ROUND for m in ins.mods):
        return None
    if any(m not in allowed and m != t.name for m in ins.mods):
        return None
    return t


def _dests(prog, ins):
    out = set()
    if not ins.operands:
        return out
    op = ins.operands[0]
    for o in (op.value if op.kind in ("vec", "pair", "list") else (op,)):
        if getattr(o, "kind", None) == "reg":
            try:
                out.add(prog.reg_slot(o.value, ins))
            except Exception:      # noqa: BLE001 - a special register or sink: no slot to track
                pass
    return out


def _slot(prog, op, ins):
    if op.kind != "reg":
        return None
    try:
        return prog.reg_slot(op.value, ins)
    except Exception:              # noqa: BLE001 - special registers (%tid.x...) have none
        return None


def _products(prog, pc):
    """[(operand index 1|2, mul step)] for the add at pc: its reg operands whose definition in the
    same straight-line block is a plain mul whose sources are not redefined before the add.
    Also True when an operand's definition lies outside the block (undecidable here)."""
    add = prog.steps[pc].ins
    targets = set(prog.labels.values())
    want = {}
    for k in (1, 2):
        s = _slot(prog, add.operands[k], add)
        if s is not None:
            want.setdefault(s, []).append(k)
    found, written = [], set()
    j = pc - 1
    open_ = dict(want)
    while open_ and j >= 0 and (j + 1) not in targets:
        st = prog.steps[j]
        if st.kind != "op" or st.ins is None:
            break
        ds = _dests(prog, st.ins)
        for s in ds & set(open_):
            mul = st.ins
            t = _plain(mul, ("mul",), ("ftz",)) or _division(mul)
            srcs = {_slot(prog, o, mul) for o in mul.operands[1:]} - {None}
            ok = (t is not None and len(mul.operands) == 3 and not (srcs & written)
                  and (mul.guard is None or (mul.guard == add.guard and
                                             prog.reg_slot(mul.guard[0], mul) not in written)))
            if ok:
                found += [(k, st) for k in open_[s]]
            del open_[s]
        written |= ds
        j -= 1
    return found, bool(open_)


def _division(ins):
    """The f32 type of a division whose SASS sequence ends with FMUL d = r * a (div.full/div.approx.f32:
    numerics/sfu_div.FACTORS), which ptxas may fuse with an add as it fuses a mul; else None."""
    if ins is None or ins.opcode != "div" or ins.name not in sfu_div.FACTORS:
        return None
    return _float_type(ins)


def decide(prog, sass_by_line, note=None):
    """The Contraction of `prog` from {PTX line: SASS opcodes} (None: ptxas not consulted)."""
    c = Contraction(sass_by_line is not None, note)
    for pc, st in enumerate(prog.steps):
        add = st.ins
        t = _plain(add, ("add", "sub"), ("ftz", "sat"))
        if t is None or len(add.operands) != 3:
            continue
        products, outside = _products(prog, pc)
        products = [(k, m) for k, m in products if _float_type(m.ins) == t and
                    ("ftz" in m.ins.mods) == ("ftz" in add.mods)]
        if sass_by_line is None:
            if products:
                c.unknown[st.site] = "ptxas's contraction decision not known (ptxas not consulted)"
            continue
        ops = [s.split(".")[0] for s in sass_by_line.get(add.line, ())]
        if FMA[t.bits] not in ops or ADD[t.bits] in ops:
            continue                                        # computed as written
        if len(products) > 1:
            alone = [(k, m) for k, m in products
                     if MUL[t.bits] not in [s.split(".")[0] for s in sass_by_line.get(m.ins.line, ())]]
            products = alone if len(alone) == 1 else products
        if len(products) != 1:
            why = "two products and no way to tell which was fused" if products else (
                "the product comes from another block" if outside else "no mul operand")
            c.unknown[st.site] = f"ptxas fused this {add.opcode} ({FMA[t.bits]}), but {why}: computed unfused"
            continue
        k, mul = products[0]
        fields = F.contracted(add, mul.ins, k, prog.builder, t)
        st.fn = fields["fn"]
        st.info["contracted"] = mul.ins.line
        c.fused[pc] = mul.pc
    return c
