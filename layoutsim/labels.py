"""How an operand of a catalog instruction is named in text: its header lines (shape, registers,
source, arithmetic), an element (`A[3][5]`, `M1[0][2]`), a register slot (`reg 1 bits 16-31`),
and the operand a one-operand instruction stands for.

The commands (`query`, `show`, `render`) and the pictures of layoutsim.render print the same
words, so they live here, in the library, not in the command line.
"""
from .errors import LayoutsimError


def default_operand(inst, name):
    """Operand `name` of `inst`; without a name, its only operand (LayoutsimError if it has more)."""
    if name is None:
        if len(inst.operands) == 1:
            return inst.operand(next(iter(inst.operands)))
        raise LayoutsimError(f"give --operand: {inst.name} has operands {', '.join(inst.operands)}")
    return inst.operand(name)


def arithmetic(inst, arch):
    """The `layoutsim.mma` arithmetic line of an AMD WMMA/SWMMAC on `arch` (what backs it: AMD's
    hardware captures, or why it is an assumption), or None for other families."""
    if inst.vendor != "amd" or inst.family not in ("wmma", "swmmac"):
        return None
    from .numerics.api import evidence
    return evidence(inst, arch)


def header(inst, op, arch):
    """The lines above an operand's map: name and arch, shape and registers, source, notes."""
    frag = op.fragment
    nm, rows, cols = frag.shape
    mats = f"{nm} matrices of " if nm > 1 else ""
    lines = [f"{inst.name}  [{arch}]",
             f"operand {op.name}: {mats}{rows}x{cols} {op.fmt}, {frag.regs} x {frag.reg_bits}-bit "
             f"registers per lane ({frag.slots} element{'s' if frag.slots > 1 else ''} each), "
             f"{frag.lanes} lanes"]
    if frag.replication > 1:
        lines.append(f"every element is held in {frag.replication} places (replicated)")
    lines.append(f"source: {inst.source}; {inst.confirmed}")
    math = arithmetic(inst, arch)
    if math:
        lines.append(f"arithmetic (layoutsim.mma): {math}")
    lines.extend(f"note: {n}" for n in inst.notes)
    return lines


def element_label(op, m, r, c):
    """`A[3][5]`; `M1[0][2]` for matrix 1 of a several-matrix operand (R is spelled M)."""
    mat = f"{m}" if op.fragment.shape[0] > 1 else ""
    base = {"R": "M"}.get(op.name, op.name)
    return f"{base}{mat}[{r}][{c}]"


def bits_label(frag, reg, slot):
    """`reg 2`, or `reg 2 bits 16-31` when a register holds several elements."""
    if frag.slots == 1:
        return f"reg {reg}"
    lo, hi = frag.bit_range(slot)
    return f"reg {reg} bits {lo}-{hi}"
