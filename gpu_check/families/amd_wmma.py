"""AMD gfx11/gfx12 WMMA and SWMMAC through the clang builtins (HIP), one wave per case:
  in[case][lane][A words | B words | C words | (IDX word)], out[case][lane][D words]
(the word layout of mma.sync, `families.mma`, with SWMMAC's sparsity index after C). The
builtin's vector types come from the catalog's register counts and formats (`codegen.hip`);
probes: `operand_maps` (SWMMAC's sparse A decompressed through its IDX operand); numerics:
`checks.numerics` (a SWMMAC's cases made 2:4 sparse by a random IDX).
"""
from layoutsim import archs
from layoutsim.packing import words_per_lane

from ..codegen import SIGNATURE, hip
from .mma import MmaSpec


class AmdWmmaSpec(MmaSpec):
    """A gfx11/gfx12 WMMA or SWMMAC through its clang builtin, one wave per case."""
    kind = "amd"
    catalog_families = ("wmma", "swmmac")
    backend = "hip"
    cases_per_block = 1
    smem_bytes = 0

    def __init__(self, instr):
        self.extra_in = ("IDX",) if "IDX" in instr.operands else ()
        super().__init__(instr)
        self.threads = self.lanes
        self.mnemonic = instr.mnemonic
        self.builtin = instr.builtin
        self.gen = archs.generation(instr.archs[0])
        self.wave = instr.threads
        self.offload_arch = archs.compile_target(instr.archs[0])

    @classmethod
    def supports(cls, instr):
        return instr.vendor == "amd" and instr.family in cls.catalog_families


    def available(self, target):
        return target == self.offload_arch

    def grid(self, ncases):
        return max(1, ncases)

    def types(self):
        ops = self.instr.operands
        return {k: hip.operand_type(ops[k]) for k in ("A", "B", "C", "D", *self.extra_in)}

    def source(self):
        ops = self.instr.operands
        names = {k: hip.typename(*v) for k, v in self.types().items()}
        lines = [f'extern "C" __global__ void __attribute__((amdgpu_flat_work_group_size({self.wave}, {self.wave}))) '
                 f"{self.name}{SIGNATURE} {{",
                 "    const int lane = __builtin_amdgcn_workitem_id_x();",
                 "    const int cs = __builtin_amdgcn_workgroup_id_x();",
                 "    if (cs >= ncases) return;",
                 f"    const unsigned *p = in + ((unsigned long)cs * {self.wave} + lane) * {self.lane_in};",
                 f"    unsigned *q = out + ((unsigned long)cs * {self.wave} + lane) * {self.wd};",
                 f"    unsigned w[{self.lane_in}];",
                 f"    for (int i = 0; i < {self.lane_in}; ++i) w[i] = p[i];"]
        off = 0
        for key in ("A", "B", "C", *self.extra_in):
            var = key.lower()
            lines.append(f"    {names[key]} {var}; __builtin_memcpy(&{var}, w + {off}, sizeof({var}));")
            off += words_per_lane(ops[key].fragment)
        lines += [f"    {names['D']} d = {self.builtin}({', '.join(self._arguments())});",
                  f"    unsigned o[{self.wd}]; __builtin_memcpy(o, &d, sizeof(o));",
                  f"    for (int i = 0; i < {self.wd}; ++i) q[i] = o[i];",
                  "}"]
        return "\n".join(lines) + "\n"

    def disassembly_operands(self):
        """The register operands of the instruction in disassembly order."""
        return ("D", "A", "B", *(self.extra_in or ("C",)))

    def expected_counts(self):
        """The VGPR count of each of disassembly_operands(): the catalog's registers."""
        ops = self.instr.operands
        return [ops[k].fragment.regs for k in self.disassembly_operands()]

    def _arguments(self):
        """The builtin's arguments (clang BuiltinsAMDGPU.def): integer forms take the signedness
        of A and B and a clamp flag, SWMMAC the index, gfx11 16-bit results the OPSEL half."""
        opts, sparse = self.instr.options, self.instr.family == "swmmac"
        if "signed_a" in opts:
            args = [str(bool(opts["signed_a"])).lower(), "a", str(bool(opts["signed_b"])).lower(), "b", "c"]
            if sparse:
                args.append("idx")
            return args + [str(bool(opts.get("clamp", False))).lower()]
        args = ["a", "b", "c"] + (["idx"] if sparse else [])
        if "opsel" in opts and self.gen == "gfx11":
            args.append(str(bool(opts["opsel"])).lower())
        return args
