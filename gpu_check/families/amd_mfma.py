"""AMD CDNA MFMA through the clang builtins (HIP), one wave64 per case, in the word layout of the
gfx11/gfx12 WMMA kernels (`families.amd_wmma`):
  in[case][lane][A words | B words | C words], out[case][lane][D words]
A multi-block MFMA (v_mfma_f32_4x4x4_16b_f16: 16 blocks) holds every block in those words; the
probes (`operand_maps`) and the numerics cases (`checks.numerics`: one case per block) fill every
block.

Each MFMA is built for one CDNA target (`layoutsim.archs.check_target`: gfx942 where it exists,
else gfx950, else gfx90a) and its disassembly checked (`backends.hip.check_spec`); a target the
installed clang lacks is reported as skipped. No AMD GPU: nothing runs here.
"""
from layoutsim import archs
from layoutsim.isa.amd_mfma import disassembly_name

from ..codegen import hip
from .amd_wmma import AmdWmmaSpec


def builtin_types(instr):
    """{operand: (C element type, vector length)} the MFMA builtin takes (clang
    BuiltinsAMDGPU.def): 16-bit inputs as vectors of elements (bf16 as `short` before gfx950,
    `__bf16` on it), 8-bit inputs packed into int / long, the f8f6f4 forms an 8-int vector
    whatever the format; C and D as vectors of their registers."""
    ops = instr.operands
    out = {}
    for key in "AB":
        op = ops[key]
        f = op.fragment
        words = f.regs * f.reg_bits // 32
        if "f8f6f4" in instr.name:
            out[key] = ("int", 8)
        elif op.fmt == "bf16" and instr.archs == ("gfx950",):
            out[key] = ("__bf16", f.regs * f.slots)
        elif op.fmt in ("f16", "bf16", "f32", "f64"):
            out[key] = hip.operand_type(op)
        else:
            out[key] = {1: ("int", 1), 2: ("long", 1)}.get(words, ("int", words))
    for key in "CD":
        out[key] = hip.operand_type(ops[key])
    return out


class AmdMfmaSpec(AmdWmmaSpec):
    """A CDNA MFMA through its clang builtin, one wave64 per case."""
    kind = "mfma"
    catalog_families = ("mfma",)

    def __init__(self, instr):
        super().__init__(instr)
        self.offload_arch = archs.check_target(instr.archs)
        self.mnemonic = disassembly_name(instr.name, self.offload_arch)

    def types(self):
        return builtin_types(self.instr)

    def expected_counts(self):
        """32-bit VGPRs of D, A, B, C as the disassembly names them (an f64 register is two)."""
        ops = self.instr.operands
        return [ops[k].fragment.regs * ops[k].fragment.reg_bits // 32 for k in self.disassembly_operands()]

    def _arguments(self):
        """The builtin's arguments: the operands, then CBSZ, ABID, BLGP. The f8f6f4 forms share
        one builtin: the A and B format codes (CBSZ, BLGP), then the OPSEL and value of A's and
        B's scales: the constant 0 selects the unscaled MFMA; the scaled one gets 0x7F in every
        byte, the E8M0 scale 1.0, so its results are the unscaled ones."""
        o = self.instr.options
        cbsz, abid, blgp = (str(o.get(k, 0)) for k in ("cbsz", "abid", "blgp"))
        if "f8f6f4" in self.instr.name:
            scale = "0x7F7F7F7F" if "_scale_" in self.instr.name else "0"
            return ["a", "b", "c", cbsz, blgp, "0", scale, "0", scale]
        return ["a", "b", "c", cbsz, abid, blgp]
