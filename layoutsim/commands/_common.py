"""Pieces shared by the catalog commands (query, show, list): their arguments and how they are
read. How an operand is named in text (header, element and register labels) is layoutsim/labels.py."""
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


def parse_element(text):
    try:
        parts = [int(p) for p in str(text).replace(" ", "").split(",")]
    except ValueError:
        parts = []
    if len(parts) != 2:
        raise LayoutsimError(f"--element wants ROW,COL (two integers), not {text!r}")
    return parts
