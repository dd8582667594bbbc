"""AMD LDS: RDNA3/RDNA4 (gfx11, gfx12; wave32) and CDNA3/CDNA4 (gfx942, gfx950; wave64): banks of
4 bytes (32; 64 on gfx950) and the lane phases.

NOT VERIFIED ON HARDWARE: no AMD GPU was available to this project. Every rule below says
where it comes from; the model prints "unverified on hardware" wherever it uses one.

Within a phase the counting is the NVIDIA one: bank = (address / 4) mod 32, lanes on the same
32-bit word are served together (broadcast), and a phase needs as many cycles ("wavefronts"
here) as the largest number of distinct words it asks of one bank. Phases never merge.
"""
LDS_BYTES = 64 * 1024     # per workgroup on gfx11 and gfx12 (RDNA3 / RDNA4 ISA guides, "LDS")

_QUARTERS = [list(range(8 * q, 8 * q + 8)) for q in range(4)]
_HALVES = [list(range(16)), list(range(16, 32))]
_ALL = [list(range(32))]
_GFX11_B128 = [list(range(0, 4)) + list(range(20, 24)), list(range(4, 8)) + list(range(16, 20)),
               list(range(8, 12)) + list(range(28, 32)), list(range(12, 16)) + list(range(24, 28))]

_ISSUE = "as reported from published gfx1201 LDS measurements (primary source not located)"
_CDNA3 = ("the same lane groups are documented for CDNA3 (MI300) ds_read_b128 in nod-ai/shark-ai "
          "docs/amdgpu_kernel_optimization_guide.md, 'Avoiding LDS Bank Conflicts'")

# (generation, width in bytes) -> (phases, source). Sub-dword accesses are taken to behave
# like b32 (an assumption: no source describes them).
RULES = {
    ("gfx12", 1): (_ALL, "assumed like ds_read_b32: one phase of 32 lanes (no source)"),
    ("gfx12", 2): (_ALL, "assumed like ds_read_b32: one phase of 32 lanes (no source)"),
    ("gfx12", 4): (_ALL, f"one phase of 32 lanes: {_ISSUE}; consistent with the published gfx1201 "
                         "experiment (stride 33 words as fast as stride 1, stride 32 ~5x slower)"),
    ("gfx12", 8): (_HALVES, f"two phases, lanes 0-15 and 16-31: {_ISSUE}"),
    ("gfx12", 16): (_QUARTERS, f"four phases, lanes 0-7, 8-15, 16-23, 24-31: {_ISSUE}"),
    ("gfx11", 1): (_ALL, "assumed like ds_read_b32: one phase of 32 lanes (no source)"),
    ("gfx11", 2): (_ALL, "assumed like ds_read_b32: one phase of 32 lanes (no source)"),
    ("gfx11", 4): (_ALL, "one phase of 32 lanes: assumed as on gfx12 (reported for gfx12 only)"),
    ("gfx11", 8): (_HALVES, "two phases, lanes 0-15 and 16-31: assumed as on gfx12 (reported for gfx12 only)"),
    ("gfx11", 16): (_GFX11_B128, f"four phases {{0-3,20-23}}, {{4-7,16-19}}, {{8-11,28-31}}, "
                                 f"{{12-15,24-27}}: {_ISSUE}; {_CDNA3} (for CDNA3 writes the doc "
                                 f"gives plain groups of 8: gfx11 writes may differ)"),
}

# CDNA (wave64). Sources:
_CK = ("AMD Composable Kernel docs, 'Understanding AMD GPU LDS and Bank Conflicts' (rocm.docs.amd.com: "
       "LDS 'organized into 32 or 64 banks depending on the hardware architecture, each bank has a "
       "4 bytes width'; ds_write_b128 'divided into 8 phases for 64 lane wavefront', lanes 0-7 .. 56-63)")
_CK_B128R = ("ds_read_b128 lane groups {0-3,20-23}, {4-7,16-19}, {8-11,28-31}, {12-15,24-27} and the "
             "same 32 higher: nod-ai/shark-ai docs/amdgpu_kernel_optimization_guide.md 'Avoiding LDS "
             "Bank Conflicts' (CDNA3)")
_HALF = ("AMD APP OpenCL Programming Guide (GCN wave64), 5.2 'Local Memory (LDS) Optimizations', as "
         "quoted on community.amd.com ('Still confused about LDS'): 'Threads 0 through 31 are checked "
         "for conflicts as are threads 32 through 63'")
# gfx950's 64 banks: AMD's CK docs and Triton, the compiler, which swizzles LDS for 64 banks on
# gfx950 only (triton-lang/triton PR #6065 "changes number of banks to 64 for swizzling on GFX950";
# PR #9662: TritonGPUDialect getNumBanks(), 64 on gfx950, 32 on gfx942). LLVM's AMDGPU.td gives
# gfx950 (FeatureISAVersion9_5_Common, from 9_4_Common) FeatureLDSBankCount32: that subtarget
# value disagrees and is not what layoutsim uses; the same file gives it 160 KiB of LDS
# (FeatureAddressableLocalMemorySize163840).
_GFX950 = ("gfx950: 64 banks (AMD CK docs '32 or 64 banks'; Modular MAX docs 'AMD MI355X have 64 LDS "
           "banks x 4 bytes'; Triton, triton-lang/triton PRs #6065 and #9662: LDS swizzling for 64 "
           "banks on gfx950, 32 on gfx942; LLVM AMDGPU.td still lists FeatureLDSBankCount32 for "
           "gfx950); 160 KiB LDS (ROCm GPU specifications, MI355X/MI350X; LLVM AMDGPU.td "
           "FeatureAddressableLocalMemorySize163840)")
_PHASE_BYTES = ("assumed: every phase moves one bank row (banks x 4 bytes), lanes in order "
                "(no document gives this width's lane grouping)")


def _runs(lanes, size):
    return [list(range(i, i + size)) for i in range(0, lanes, size)]


_CDNA3_B128R = [list(g) for g in _GFX11_B128] + [[x + 32 for x in g] for g in _GFX11_B128]
CDNA_RULES = {
    "gfx942": {1: (_runs(64, 32), f"assumed like b32: {_HALF}"), 2: (_runs(64, 32), f"assumed like b32: {_HALF}"),
               4: (_runs(64, 32), f"two phases of 32 lanes: {_HALF}"),
               8: (_runs(64, 16), f"four phases of 16 lanes: {_PHASE_BYTES}, 32 banks x 4 bytes = 16 "
                                  f"lanes x 8 bytes"),
               "ld16": (_CDNA3_B128R, _CK_B128R), "st16": (_runs(64, 8), _CK)},
    "gfx950": {1: (_runs(64, 64), f"assumed like b32; {_GFX950}"), 2: (_runs(64, 64), f"assumed like b32; {_GFX950}"),
               4: (_runs(64, 64), f"one phase of 64 lanes: {_PHASE_BYTES}; {_GFX950}"),
               8: (_runs(64, 32), f"two phases of 32 lanes: {_PHASE_BYTES}; {_GFX950}"),
               "ld16": (_runs(64, 16), f"four phases of 16 lanes: {_PHASE_BYTES}; {_GFX950}"),
               "st16": (_runs(64, 16), f"four phases of 16 lanes: {_PHASE_BYTES}; {_GFX950}")},
}
CDNA_BANKS = {"gfx942": 32, "gfx950": 64}
CDNA_LDS_BYTES = {"gfx942": 64 * 1024, "gfx950": 160 * 1024}   # ROCm GPU specifications tables; _GFX950


def banks(arch):
    return CDNA_BANKS.get(arch, 32)


def lds_bytes(arch):
    return CDNA_LDS_BYTES.get(arch, LDS_BYTES)


def _rule(spec, generation):
    if generation in CDNA_RULES:
        r = CDNA_RULES[generation]
        return r.get(spec.width) or r[f"{spec.direction}{spec.width}"]
    return RULES[(generation, spec.width)]


UNVERIFIED = "unverified on hardware: no AMD GPU has been used"


def base_phases(spec, generation):
    phases, _ = _rule(spec, generation)
    return [list(p) for p in phases]


def source(spec, generation):
    return _rule(spec, generation)[1]


def phase_rule_text(spec, generation):
    phases = _rule(spec, generation)[0]
    if len(phases) == 1:
        return f"one phase of {len(phases[0])} lanes"
    return f"{len(phases)} phases: " + ", ".join(_span(p) for p in phases)


def _span(lanes):
    runs, start = [], None
    for i, lane in enumerate(lanes):
        if start is None:
            start = lane
        if i + 1 == len(lanes) or lanes[i + 1] != lane + 1:
            runs.append(f"{start}-{lane}" if lane != start else f"{start}")
            start = None
    return "{" + ",".join(runs) + "}"
