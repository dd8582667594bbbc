"""Fragment pictures: an operand as a grid of its elements, each cell naming lane and register.

Everything drawn comes from the operand's FragmentMap (`holders[m, r, c, rep]`), so the
picture can never disagree with `layoutsim query`. Multi-matrix operands (ldmatrix/stmatrix
.x2/.x4) are drawn as matrices side by side; replicated layouts (gfx11 WMMA) name every
holding lane in the cell.
"""
from dataclasses import dataclass, field

from ..errors import LayoutsimError
from ..labels import bits_label, element_label, header
from . import colors
from .scene import CHAR_EM, Cell, Scene, Text, draw_grid, font_for, text_width

MARGIN = 16
GAP = 28
PER_ROW = 4                       # matrices per row of panels

# (rows, cols) meaning of each operand's matrix
AXES = {"A": ("m", "k"), "B": ("k", "n"), "C": ("m", "n"), "D": ("m", "n"), "R": ("row", "b16 col")}


@dataclass
class Highlight:
    """Which cells to emphasise. Lane/register selectors match any holder of the element;
    row/column selectors match its position; when both kinds are given, both must match."""
    lanes: frozenset = frozenset()
    regs: frozenset = frozenset()       # (reg, slot) pairs
    rows: set = None
    cols: set = None
    matrices: set = None
    label: str = ""
    active: bool = field(default=False)

    def hits(self, holders, row=None, col=None, matrix=0):
        ok = True
        if self.lanes or self.regs:
            ok = any(int(l) in self.lanes or (int(g), int(s)) in self.regs for l, g, s in holders)
        if self.rows is not None:
            ok = ok and row in self.rows
        if self.cols is not None:
            ok = ok and col in self.cols
        if self.matrices is not None:
            ok = ok and matrix in self.matrices
        return ok


def parse_reg(text, frag):
    """A register name ('c2', 'a5', 'r1.hi') or a 32-bit register index ('1') -> {(reg, slot)}."""
    t = str(text).strip()
    if t.isdigit():
        reg = int(t)
        if reg >= frag.regs:
            raise LayoutsimError(f"register {reg} out of range: this operand has registers 0-{frag.regs - 1} per lane")
        return {(reg, s) for s in range(frag.slots)}
    names = list(frag.names)
    if t not in names:
        from ..errors import suggest
        raise LayoutsimError(f"operand has no register {t!r}{suggest(t, names)}; valid: "
                             f"{', '.join(names)} or a register index 0-{frag.regs - 1}")
    k = names.index(t)
    return {(k // frag.slots, k % frag.slots)}


def _lane_lines(lanes, per_line=2):
    tags = [f"T{l}" for l in lanes]
    return tuple(" ".join(tags[i:i + per_line]) for i in range(0, len(tags), per_line))


def operand_cells(op, highlight=None, all_holders=True):
    """[matrix][row][col] -> Cell for one operand."""
    frag = op.fragment
    nm, nr, nc = frag.shape
    hold = frag.holders
    names = frag.names
    out = []
    for m in range(nm):
        grid = []
        for r in range(nr):
            row = []
            for c in range(nc):
                hs = hold[m, r, c]
                lanes = [int(h[0]) for h in hs]
                regs = []
                for h in hs:
                    n = names[int(h[1]) * frag.slots + int(h[2])]
                    if n not in regs:
                        regs.append(n)
                if all_holders or len(lanes) == 1:
                    lane_lines = _lane_lines(lanes)
                else:
                    lane_lines = (f"T{lanes[0]}+",)
                lines = lane_lines + ("/".join(regs),)
                where = "; ".join(f"T{int(h[0])} {names[int(h[1]) * frag.slots + int(h[2])]} "
                                  f"({bits_label(frag, int(h[1]), int(h[2]))})" for h in hs)
                cell = Cell(lines=lines, fill=colors.lane_color(lanes[0]),
                            title=f"{element_label(op, m, r, c)} held by {where}",
                            data={"lane": " ".join(map(str, lanes)), "reg": " ".join(regs),
                                  "matrix": m, "row": r, "col": c})
                if highlight is not None and highlight.active:
                    if highlight.hits(hs, r, c, m):
                        cell.border, cell.bold = colors.EMPHASIS, True
                    else:
                        cell.fill, cell.text_color = colors.DIM, colors.DIM_TEXT
                row.append(cell)
            grid.append(row)
        out.append(grid)
    return out


def _wrap(lines, width):
    import textwrap
    out = []
    for line in lines:
        out.extend(textwrap.wrap(line, width, subsequent_indent="    ") or [""])
    return out


def fragment_scene(inst, op, arch, highlight=None, all_holders=True):
    """The picture of one operand: title lines, then one grid per matrix."""
    frag = op.fragment
    nm, nr, nc = frag.shape
    cells = operand_cells(op, highlight, all_holders)
    font = font_for(nr, nc * min(nm, PER_ROW))
    lines = header(inst, op, arch)
    key = "cell: lane (T) and register; colour = lane"
    if frag.replication > 1:
        key += (f"; every element is held by {frag.replication} lanes, all named in the cell"
                if all_holders else f"; '+' = replicated over {frag.replication} lanes (lowest shown)")
    lines.append(key)
    if highlight is not None and highlight.active:
        n = sum(c.border != "" for g in cells for row in g for c in row)
        lines.append(f"highlighted: {highlight.label} ({n} of {nm * nr * nc} elements)")
    title_font = max(font, 11.0)
    # wrap the header to the width of the grids (at least 90 characters)
    from .scene import grid_metrics
    cw, _ = grid_metrics(cells[0], font)
    grids_w = min(nm, PER_ROW) * (nc * cw + 4 * font + GAP)
    lines = _wrap(lines, max(90, int(grids_w / (CHAR_EM * title_font))))
    scene = Scene(width=0, height=0, title=f"{inst.name} operand {op.name} [{arch}]")
    y = MARGIN
    for i, line in enumerate(lines):
        size = title_font + (1.5 if i == 0 else 0)
        scene.add(Text(MARGIN, y + 0.7 * size, line, size, anchor="start", bold=(i == 0)))
        y += 1.45 * size
    y += 0.5 * title_font
    title_w = max(text_width(l, title_font + (1.5 if i == 0 else 0)) for i, l in enumerate(lines))
    ax_r, ax_c = AXES.get(op.name, ("row", "col"))
    x, row_h, width = MARGIN, 0.0, 0.0
    for m in range(nm):
        if m and m % PER_ROW == 0:
            x, y = MARGIN, y + row_h + GAP
            row_h = 0.0
        ptitle = ()
        if nm > 1:
            ptitle = (f"matrix {m}",)
            if inst.addressing is not None:
                ln = inst.addressing.lanes[m]
                ptitle = (f"matrix {m}: row r at the address of lane {int(ln[0])}+r",)
        w, h = draw_grid(scene, x, y, cells[m], font, title_lines=ptitle,
                         row_label=ax_r, col_label=f"{ax_c} \u2192")
        width = max(width, x + w)
        row_h = max(row_h, h)
        x += w + GAP
    scene.width = max(width, MARGIN + title_w) + MARGIN
    scene.height = y + row_h + MARGIN
    scene.meta = {"hover_key": "lane", "notes": lines[1:],
                  "json": {"instruction": inst.name, "arch": arch, "operand": op.name,
                           "matrices": nm, "rows": nr, "cols": nc,
                           "cells": nm * nr * nc, "replication": frag.replication,
                           "lanes": frag.lanes}}
    if highlight is not None and highlight.active:
        scene.meta["json"]["highlight"] = highlight.label
        scene.meta["json"]["highlighted_cells"] = sum(c.border != "" for g in cells for row in g for c in row)
    return scene
