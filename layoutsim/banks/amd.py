"""AMD LDS (gfx11 = RDNA3, gfx12 = RDNA4), wave32: 32 banks of 4 bytes and the lane phases.

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

UNVERIFIED = "unverified on hardware: no AMD GPU has been used"


def base_phases(spec, generation):
    phases, _ = RULES[(generation, spec.width)]
    return [list(p) for p in phases]


def source(spec, generation):
    return RULES[(generation, spec.width)][1]


def phase_rule_text(spec, generation):
    phases = RULES[(generation, spec.width)][0]
    if len(phases) == 1:
        return "one phase of 32 lanes"
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
