"""Pictures of layouts: fragment grids and shared-memory bank maps, as SVG, HTML or PNG.

    from layoutsim import render
    render.fragment("mma.m16n8k16.f32.f16.f16.f32", "C", "c.svg", lane=13)
    render.save(render.fragment_scene(inst, inst.operand("A"), "sm_90"), "a.png")

Pictures are built as a `Scene` (rectangles and text in pixels) and then written; SVG and
HTML need nothing beyond the standard library, PNG needs matplotlib (optional).
"""
from ..labels import default_operand
from .output import FORMATS, save
from .fragment import Highlight, fragment_scene, parse_reg


def fragment(instruction, operand, path, fmt=None, arch=None, wave=None, lane=None, lanes=None,
             reg=None, all_holders=True):
    """Draw one operand of a catalog instruction to `path`; returns the --json record."""
    from ..archs import normalize
    from ..isa.registry import get
    inst = get(instruction, arch=arch, wave=wave)
    arch = normalize(arch) if arch else inst.archs[0]
    op = default_operand(inst, operand or None)
    hl = highlight_for(op, lane=lane, lanes=lanes, reg=reg)
    return save(fragment_scene(inst, op, arch, hl, all_holders), path, fmt)


def highlight_for(op, lane=None, lanes=None, reg=None, phase_lanes=None, phase_label=""):
    """A Highlight from the user's options (None when nothing is to be highlighted)."""
    frag = op.fragment
    hl = Highlight()
    parts = []
    if lane is not None:
        frag.check_lane(int(lane))
        hl.lanes = frozenset({int(lane)})
        parts.append(f"lane {lane}")
    if lanes:
        from ..inputs import ranges
        hl.lanes = frozenset(ranges(lanes, frag.lanes, "lane", "this operand spans lanes")) | hl.lanes
        parts.append(f"lanes {lanes}")
    if phase_lanes is not None:
        bad = [l for l in phase_lanes if not 0 <= l < frag.lanes]
        if bad:
            raise ValueError(f"phase lanes {bad} outside the operand")
        hl.lanes = frozenset(phase_lanes) | hl.lanes
        parts.append(phase_label)
    if reg is not None:
        hl.regs = frozenset(parse_reg(reg, frag))
        parts.append(f"register {reg}")
    if not parts:
        return None
    hl.active, hl.label = True, " + ".join(parts)
    return hl


__all__ = ["FORMATS", "save", "fragment", "fragment_scene", "Highlight", "highlight_for",
           "parse_reg"]
