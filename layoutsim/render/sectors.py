"""Picture of one warp's global access: the 128-byte lines it touches, one row each, 32 words
of 4 bytes per row, every word coloured by the lane that reads or writes it and labelled with
its lane(s); the darker lines every 8 words are the 32-byte sector boundaries, so a sector that
moves only a few used bytes is plain to see."""
from ..access import LANES
from .colors import lane_color
from .scene import Cell, Scene, draw_grid

MAX_ROWS = 64


def _label(lanes):
    if len(lanes) == 1:
        return str(lanes[0])
    if lanes == list(range(lanes[0], lanes[-1] + 1)):
        return f"{lanes[0]}-{lanes[-1]}"
    return f"{lanes[0]}+"


def sector_scene(op, offsets, active=None, arch=None, variables=None):
    """Scene of the lines `layoutsim.memory.coalesce(op, offsets, ...)` touches."""
    import numpy as np
    from ..memory import coalesce
    from ..memory.model import headline, prepare
    result = coalesce(op, offsets, active, arch, variables=variables)
    spec, _, off, part = prepare(op, offsets, active, arch, variables)
    words = {}                                   # byte address of a 4-byte word -> lanes
    for lane in np.flatnonzero(part):
        first = int(off[lane]) // 4
        for w in range(first, first + max(1, spec.width // 4)):
            words.setdefault(w * 4, []).append(int(lane))
    lines = sorted({a // 128 for a in words})
    shown = lines[:MAX_ROWS]
    cells = []
    for ln in shown:
        row = []
        for k in range(32):
            lanes = sorted(set(words.get(ln * 128 + 4 * k, [])))
            row.append(None if not lanes else Cell((_label(lanes),), lane_color(lanes[0]),
                                                   title=f"byte {ln * 128 + 4 * k:#x}: lanes {lanes}",
                                                   data={"lanes": lanes}))
        cells.append(row)
    title = [headline(result),                          # the first line `layoutsim coalesce` prints
             f"{result['active_lanes']} of {LANES} lanes active; one row per 128-byte line, darker "
             f"lines = {result['sector_bytes']}-byte sector boundaries"]
    if len(lines) > MAX_ROWS:
        title.append(f"first {MAX_ROWS} of {len(lines)} lines shown")
    scene = Scene(0, 0, title=title[0])
    if not cells:
        cells = [[None] * 32]
        shown = [0]
    font = 10.0
    w, h = draw_grid(scene, 12, 12, cells, font, title_lines=title, row_label="line", col_label="byte",
                     row_names=[f"{ln * 128:#x}" for ln in shown], col_names=[str(4 * k) for k in range(32)],
                     major=result["sector_bytes"] // 4, major_rows=len(shown) + 1)
    scene.width, scene.height = w + 24, h + 24
    scene.meta["json"] = {"op": result["op"], "lines_drawn": len(shown), "sectors": result["sectors"]}
    return scene
