"""AMD CDNA MFMA kernels (HIP, clang builtins), generated from the layoutsim catalog like the
RDNA WMMA ones (kernels.AmdWmmaSpec, whose wave-per-case harness they reuse): one wave64 per
case, in[case][lane][A | B | C words], out[case][lane][D words].

Each MFMA is compiled for the newest CDNA target clang knows that has it (gfx950 only when the
installed clang accepts --offload-arch=gfx950, else the gfx950-only forms are reported as not
compiled) and its disassembly checked (backends/hip.check_spec). No AMD GPU: nothing runs.
"""
import layoutsim
from layoutsim.isa import amd_mfma

from .kernels import AmdWmmaSpec, MmaSpec, select

TARGETS = ("gfx942", "gfx950", "gfx90a")       # preference order for an MFMA's compile target


def _vec(ctype, n):
    return ctype, n


def hip_types(instr):
    """(C type, vector length) of the builtin's A, B, C, D arguments (BuiltinsAMDGPU.def)."""
    ops = instr.operands
    out = {}
    gfx950 = instr.archs == ("gfx950",)
    for key in "AB":
        f = ops[key].fragment
        words = f.regs * f.reg_bits // 32
        fmt = ops[key].fmt
        if "f8f6f4" in instr.name:
            out[key] = ("int", 8)                      # V8i whatever the format (padded)
        elif fmt == "f16":
            out[key] = ("_Float16", f.regs * f.slots)
        elif fmt == "bf16":
            out[key] = ("__bf16" if gfx950 else "short", f.regs * f.slots)
        elif fmt == "f32":
            out[key] = ("float", words)
        elif fmt == "f64":
            out[key] = ("double", 1)
        else:                                          # i8 / fp8 / bf8 words
            out[key] = {1: ("int", 1), 2: ("long", 1)}.get(words, ("int", words))
    for key in "CD":
        f = ops[key].fragment
        c = {"f32": "float", "s32": "int", "f64": "double"}[ops[key].fmt]
        out[key] = (c, f.regs)
    return out


class MfmaSpec(AmdWmmaSpec):
    def __init__(self, instr, target):
        self.extra_in = ()
        MmaSpec.__init__(self, instr)              # AmdWmmaSpec's names are RDNA-specific
        self.threads = self.lanes
        self.gen = target
        self.wave = 64
        self.offload_arch = target
        old = next((a for a in instr.aliases if a.startswith("v_mfma")), None)
        # LLVM prints the gfx908/gfx90a spelling on gfx90a, the current one on gfx942/gfx950
        self.mnemonic = old if target == "gfx90a" and old else instr.name
        self.builtin = next(a for a in instr.aliases if a.startswith("__builtin_amdgcn_"))

    def types(self):
        return hip_types(self.instr)

    def expected_counts(self):
        """32-bit VGPRs of D, A, B, C as the disassembly names them."""
        ops = self.instr.operands
        return [ops[k].fragment.regs * ops[k].fragment.reg_bits // 32 for k in "DABC"]

    def builtin_args(self):
        o = self.instr.options
        if "_scale_" in self.instr.name:               # formats, then opsel/scale of A and B
            return ["a", "b", "c", str(o.get("cbsz", 0)), str(o.get("blgp", 0)), "0", "0", "0", "0"]
        if "f8f6f4" in self.instr.name:
            return ["a", "b", "c", str(o.get("cbsz", 0)), str(o.get("blgp", 0))]
        return ["a", "b", "c", str(o.get("cbsz", 0)), str(o.get("abid", 0)), str(o.get("blgp", 0))]


def target_for(entry, targets):
    """The compile target of an MFMA: the first of TARGETS it exists on that clang supports."""
    return next((t for t in TARGETS if t in entry.archs and t in targets), None)


def specs(only=None, targets=TARGETS):
    """(MfmaSpec list, names of entries no supported target can compile)."""
    out, skipped = [], []
    for e in layoutsim.listing(family="mfma"):
        if only and not select(e, only):
            continue
        t = target_for(e, targets)
        if t is None:
            skipped.append(e.name)
        else:
            out.append(MfmaSpec(e.instruction(), t))
    return out, skipped


__all__ = ["MfmaSpec", "specs", "hip_types", "amd_mfma"]
