"""Pieces shared by the catalog commands (query, show, list)."""
from ..errors import LayoutsimError


def add_instruction_args(p):
    p.add_argument("instruction", help="PTX spelling (full or short), AMD mnemonic (with --arch; MFMA modifiers "
                        "after it: 'v_mfma_f32_4x4x4_16b_f16 cbsz:2 abid:1 blgp:3') or clang builtin")
    p.add_argument("--arch", help="target arch: sm_80, sm_90, gfx1100, gfx1201, gfx942, ... "
                                  "(needed for RDNA mnemonics)")
    p.add_argument("--wave", type=int, choices=(32, 64), help="AMD wave size (default 32)")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def resolve(args):
    from ..isa.registry import get
    inst = get(args.instruction, arch=args.arch, wave=args.wave)
    arch = args.arch
    from ..archs import normalize
    arch = normalize(arch) if arch else inst.archs[0]
    return inst, arch


def default_operand(inst, name):
    if name is None:
        if len(inst.operands) == 1:
            return inst.operand(next(iter(inst.operands)))
        raise LayoutsimError(f"give --operand: {inst.name} has operands {', '.join(inst.operands)}")
    return inst.operand(name)


def parse_element(text):
    try:
        parts = [int(p) for p in str(text).replace(" ", "").split(",")]
    except ValueError:
        parts = []
    if len(parts) != 2:
        raise LayoutsimError(f"--element wants ROW,COL (two integers), not {text!r}")
    return parts


def arithmetic(inst, arch):
    """The `layoutsim.mma` arithmetic line of an AMD WMMA/SWMMAC on `arch` (what backs it: AMD's
    hardware captures, or why it is an assumption), or None for other families."""
    if inst.vendor != "amd" or inst.family not in ("wmma", "swmmac"):
        return None
    from ..numerics.api import evidence
    return evidence(inst, arch)


def header(inst, op, arch):
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
    mat = f"{m}" if op.fragment.shape[0] > 1 else ""
    base = {"R": "M"}.get(op.name, op.name)
    return f"{base}{mat}[{r}][{c}]"


def bits_label(frag, reg, slot):
    if frag.slots == 1:
        return f"reg {reg}"
    lo, hi = frag.bit_range(slot)
    return f"reg {reg} bits {lo}-{hi}"
