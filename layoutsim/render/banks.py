"""Bank pictures: which shared-memory (LDS) words a warp access touches, phase by phase.

The numbers come from the bank model (`layoutsim.banks.analyze`); this module only lays them
out. Memory is drawn as rows of 4-byte words, one per bank (one row = one pass over all banks:
`BANKS` = 32, 128 bytes; the arch's count where it differs, 64 on gfx950), only the rows the
access touches. One grid per phase, stacked: a word is coloured by
its bank and names the lanes that read or write it and the wavefront (w0, w1, ...) that serves
it; words of a bank asked for more than one distinct word in a phase (a bank conflict) get a
red border. Several accesses (a padded tile against a swizzled one) are drawn side by side.
"""
from dataclasses import dataclass

import numpy as np

from ..errors import LayoutsimError
from . import colors
from .scene import Cell, Scene, Text, draw_grid, text_width

MARGIN = 16
GAP = 36
BANKS = 32
WORD = 4


@dataclass
class Access:
    """One warp access to draw: a label, the op, one byte offset per lane (32; CDNA wave64: 64;
    None = no address) or an expression in lane, the arch."""
    label: str
    op: str
    offsets: list
    arch: str = None
    active: object = None        # lanes taking part: a lane mask (None = all)


def _lane_text(lanes):
    from ..access import lane_ranges
    return "T" + lane_ranges(sorted(lanes))


def _words_of(spec, offsets, lane):
    first = int(offsets[lane]) // WORD
    return [WORD * (first + k) for k in range(spec.words)]


def analyze(access):
    """(report, spec, offsets int[lanes]) for one Access, through the bank model's public API."""
    from ..banks import model, ops
    spec = ops.parse(access.op)
    report = model.analyze(access.op, access.offsets, arch=access.arch, active=access.active)
    if isinstance(access.offsets, str):
        from ..address import lane_offsets
        offs = [int(v) for v in lane_offsets(access.offsets, lanes=model.lanes_of(report.arch))]
    else:
        offs = [0 if v is None else int(v) for v in access.offsets]
    if len(offs) != 32 and spec.is_matrix:           # only the row-address lanes were given
        lanes = np.asarray(spec.address_lanes()).reshape(-1)
        full = [0] * 32
        for lane, v in zip(lanes, offs):
            full[int(lane)] = v
        offs = full
    return report, spec, offs


def phase_cells(report, spec, offs, phase_index, rows):
    """Cells of one phase over the given memory rows (word address // (banks*WORD))."""
    ph = report.phases[phase_index]
    touch = {}                                  # word address -> lanes
    for lane in ph.lanes:
        for w in _words_of(spec, offs, lane):
            touch.setdefault(w, []).append(lane)
    wave = {}
    for k, (_, ws) in enumerate(ph.serves):
        for w in ws:
            wave.setdefault(w, k)
    banks = report.banks
    counts = ph.banks or tuple(0 for _ in range(banks))

    def cell(w, b):
        lanes = touch.get(w)
        if not lanes:
            return None
        conflict = counts[b] > 1
        lines = (_lane_text(lanes), f"w{wave.get(w, 0)}")
        title = (f"word at byte {w} (bank {b}): lanes {', '.join(map(str, sorted(set(lanes))))}, "
                 f"served in wavefront {wave.get(w, 0)} of phase {phase_index}"
                 + (f"; bank {b} is asked for {counts[b]} distinct words in this phase" if conflict else ""))
        c = Cell(lines=lines, fill=colors.bank_color(b, banks), title=title,
                 data={"bank": b, "word": w, "phase": phase_index, "lane": " ".join(map(str, sorted(set(lanes)))),
                       "wavefront": wave.get(w, 0), "conflict": int(conflict)})
        if conflict:
            c.border, c.bold, c.text_color = colors.CONFLICT, True, colors.CONFLICT_TEXT
        return c
    return bank_grid(rows, cell, banks)


def bank_grid(rows, cell_of, banks=BANKS):
    """Cells of memory rows of `banks` words (row = word address // (banks*WORD)): cell_of(word
    byte address, bank) -> Cell, or None for a word nothing touches."""
    return [[cell_of((row * banks + b) * WORD, b) for b in range(banks)] for row in rows]


def _memory_rows(report):
    return sorted({w // (report.banks * WORD) for p in report.phases for w in p.words})


def access_panel(scene, x, y, access, font=10.0):
    """Draw one access (all its phases, stacked); returns (width, height, record)."""
    report, spec, offs = analyze(access)
    row_bytes = report.banks * WORD
    rows = _memory_rows(report)
    if max((len({w // row_bytes for w in p.words}) for p in report.phases), default=0) > 64:
        raise LayoutsimError(f"{access.label or access.op}: the access spans {len(rows)} rows of "
                             f"{row_bytes} bytes; pictures show at most 64 (draw fewer lanes or a smaller stride)")
    head = [access.label] if access.label else []
    head.append(f"{report.op} [{report.arch}]: {report.wavefronts} wavefronts "
                f"(ideal {report.ideal}, {report.conflicts} from conflicts)")
    size = font + 1.5
    y0 = y
    width = 0.0
    for i, line in enumerate(head):
        scene.add(Text(x, y + 0.7 * size, line, size, anchor="start", bold=(i == 0)))
        width = max(width, text_width(line, size))
        y += 1.45 * size
    y += 0.4 * font
    # each phase over the memory rows it touches; one cell size for all so the grids line up
    from .scene import grid_metrics
    rows_of = [sorted({w // row_bytes for w in p.words}) for p in report.phases]
    probe = [phase_cells(report, spec, offs, i, rows_of[i]) for i in range(len(report.phases))]
    sized = [g for g in probe if any(c is not None for row in g for c in row)]
    cw = max((grid_metrics(g, font)[0] for g in sized), default=30)
    ch = max((grid_metrics(g, font)[1] for g in sized), default=24)
    for i, grid in enumerate(probe):
        ph = report.phases[i]
        nconf = sum(1 for c in ph.banks if c > 1) if ph.banks else 0
        t = (f"phase {i}: lanes {_lane_text(ph.lanes)[1:] if ph.lanes else '-'}, "
             f"{ph.wavefronts} wavefront{'s' if ph.wavefronts != 1 else ''}"
             + (f", {nconf} conflicting bank{'s' if nconf != 1 else ''}" if nconf else ""))
        if not grid:
            scene.add(Text(x, y + 0.7 * size, t + " (no lane takes part)", size, anchor="start", bold=True))
            y += 1.45 * size + 0.5 * GAP
            continue
        w, h = draw_grid(scene, x, y, grid, font, title_lines=(t,), row_label="byte",
                         col_label="bank \u2192", row_names=[str(r * row_bytes) for r in rows_of[i]],
                         cell_size=(cw, ch))
        width = max(width, w)
        y += h + 0.7 * GAP
    record = {"label": access.label, **report.to_json()}
    for p in record["phases"]:
        p.pop("serves", None)
        p.pop("source", None)
    return width, y - y0, record


def access_scene(accesses, title=""):
    """Accesses side by side (e.g. the same read of a padded and of a swizzled tile)."""
    if not accesses:
        raise LayoutsimError("nothing to draw: give at least one access")
    scene = Scene(0, 0, title=title or " vs ".join(a.label or a.op for a in accesses))
    y = MARGIN
    if title:
        scene.add(Text(MARGIN, y + 10, title, 14, anchor="start", bold=True))
        y += 28
    key = ("colour = bank; a cell names the lanes that touch the word and the wavefront (w#) "
           "that serves it; red border = bank asked for more than one distinct word in that phase")
    panels = [lambda x, y, a=a: access_panel(scene, x, y, a) for a in accesses]
    return _side_by_side(scene, y, key, panels, {"kind": "banks"}, hover="phase")


def _side_by_side(scene, y, key, panels, json_head, hover):
    """The colour key, then panels(x, y) -> (w, h, record) left to right; sizes the scene."""
    scene.add(Text(MARGIN, y + 8, key, 11, anchor="start", color="#333333"))
    y += 26
    x, height, records = MARGIN, 0.0, []
    for panel in panels:
        w, h, rec = panel(x, y)
        records.append(rec)
        x += w + GAP
        height = max(height, h)
    scene.width = max(x - GAP, MARGIN + text_width(key, 11)) + MARGIN
    scene.height = y + height + MARGIN
    scene.meta = {"hover_key": hover, "notes": [key], "json": {**json_head, "accesses": records}}
    return scene


# ---- tile views --------------------------------------------------------------------------
def tile_cells(offset_of, rows, cols, elem_bytes, mark=None, conflicts=None):
    """A tile as its rows of 4-byte words, each coloured by the bank its address falls in.

    offset_of(r, c) -> byte offset of element (r, c); cells are per word of elements
    (4 // elem_bytes elements a word for 16- and 8-bit types). `mark` maps a byte word address
    to a label line (e.g. the lane reading it), `conflicts` is a set of conflicting words.
    """
    per = max(1, WORD // elem_bytes)
    grid = []
    for r in range(rows):
        line = []
        for c0 in range(0, cols, per):
            off = int(offset_of(r, c0))
            w = off - off % WORD
            b = (w // WORD) % BANKS
            lab = mark.get(w) if mark else None
            cell = Cell(lines=(f"b{b}", lab or ""), fill=colors.bank_color(b),
                        title=f"tile[{r}][{c0}{'..' + str(c0 + per - 1) if per > 1 else ''}] at byte {off}: bank {b}",
                        data={"row": r, "col": c0, "bank": b, "word": w})
            if mark is not None and lab is None:
                cell.fill, cell.text_color = colors.DIM, colors.DIM_TEXT
            if conflicts and w in conflicts:
                cell.border, cell.bold = colors.CONFLICT, True
            line.append(cell)
        grid.append(line)
    return grid


def draw_tile(scene, x, y, label, offset_of, rows, cols, elem_bytes, mark=None, conflicts=None,
              font=9.0, col_names=None):
    grid = tile_cells(offset_of, rows, cols, elem_bytes, mark, conflicts)
    per = max(1, WORD // elem_bytes)
    names = col_names or [str(c) for c in range(0, cols, per)]
    return draw_grid(scene, x, y, grid, font, title_lines=(label,) if label else (),
                     row_label="row", col_label=f"element col (one cell = {WORD} bytes) \u2192",
                     col_names=names)


def _blend(hex_color, white=0.6):
    r, g, b = (int(hex_color[i:i + 2], 16) for i in (1, 3, 5))
    return "#%02x%02x%02x" % tuple(round(v + (255 - v) * white) for v in (r, g, b))


LAYOUT_KEYS = ("pad", "pitch", "swizzle", "base", "unit")


def parse_layout(spec, rows, cols, dtype):
    """'pad=8', 'swizzle=3,3,3', 'pitch=72 swizzle=xor:7->4' -> address.Tile."""
    from ..address import Tile, parse_swizzle
    from ..errors import suggest
    from ..inputs import parse_int
    kw = {}
    for part in str(spec).replace(";", " ").split():
        if "=" not in part:
            raise LayoutsimError(f"layout {spec!r}: write KEY=VALUE with KEY one of {', '.join(LAYOUT_KEYS)}")
        k, v = part.split("=", 1)
        k = k.strip().lower()
        if k not in LAYOUT_KEYS:
            raise LayoutsimError(f"layout key {k!r}{suggest(k, LAYOUT_KEYS)}; valid: {', '.join(LAYOUT_KEYS)}")
        if k == "swizzle":
            kw[k] = parse_swizzle(v)
        elif k == "unit":
            kw[k] = v
        else:
            kw[k] = parse_int(v, f"layout {spec!r}: {k}")
    return Tile(rows, cols, dtype, **kw)


def tile_offsets(tile, op, fragment=None, at=(0, 0), stored="row", block=False, fill=None, lanes=32):
    """(offsets, one per lane, and a one-line description) of the warp access the user asked for
    on this tile; `lanes`: the warp's (32; CDNA wave64: 64)."""
    from .. import address
    from ..banks.ops import parse
    spec = parse(op)
    row, col = at
    if fragment:
        return (address.fragment_offsets(tile, spec, fragment, row, col, stored),
                f"{spec.name} moving {fragment} at tile ({row}, {col})")
    if block or (spec.is_matrix and fill is None):
        return (address.block_offsets(tile, spec, row, col),
                f"{spec.name} of the 8x8 blocks at tile ({row}, {col})")
    k = fill or 0
    accesses = address.fill_offsets(tile, spec.width, first=k, count=1, lanes=lanes)
    total = address.fill_count(tile, spec.width, lanes)
    return accesses[0], f"{spec.name}, access {k} of the {total} that fill the tile row by row"


def _word_cells(tile, touched, conflicts, row_range, banks=BANKS):
    """Tile rows as 4-byte words (data words, then padding words), coloured by bank."""
    from ..address import Tile
    eb = tile.elem_bytes
    pitch = tile.row_pitch
    wide = Tile(tile.rows, pitch, tile.dtype, base=tile.base, swizzle=tile.swizzle, unit=tile.unit)
    nwords = pitch * eb // WORD
    grid = []
    for r in row_range:
        line = []
        for k in range(nwords):
            byte = k * WORD
            e, sub = byte // eb, byte % eb
            addr = int(wide.offset(r, e)) + sub
            w = addr - addr % WORD
            b = (w // WORD) % banks
            pad = e >= tile.cols
            lanes = touched.get(w)
            what = f"padding after row {r}" if pad else f"tile[{r}][{e}{'..' + str(e + WORD // eb - 1) if eb < WORD else ''}]"
            title = f"{what} at byte {w}: bank {b}"
            if lanes:
                title += f"; lanes {', '.join(map(str, lanes))}"
            cell = Cell(lines=(f"b{b}", _lane_text(lanes) if lanes else ("pad" if pad else "")),
                        fill=colors.bank_color(b, banks), title=title,
                        data={"row": r, "col": e, "bank": b, "word": w, "pad": int(pad),
                              "lane": " ".join(map(str, lanes or ()))})
            if not lanes:
                cell.fill, cell.text_color = _blend(cell.fill, 0.72 if pad else 0.55), "#707070"
            elif w in conflicts:
                cell.border, cell.bold, cell.text_color = colors.CONFLICT, True, colors.CONFLICT_TEXT
            else:
                cell.bold = True
            line.append(cell)
        grid.append(line)
    return grid, [str(k * WORD // eb) for k in range(nwords)]


def tile_panel(scene, x, y, label, tile, op, offsets, what, arch=None, font=9.0, active=None):
    """One layout: its tile drawn as words coloured by bank (the access marked), then the phases."""
    report, spec, offs = analyze(Access(label, op, offsets, arch, active))
    touched, conflicts = {}, set()
    for p in report.phases:
        for lane in p.lanes:
            for w in _words_of(spec, offs, lane):
                touched.setdefault(w, []).append(lane)
        for w in p.words:
            if p.banks and p.banks[(w // WORD) % report.banks] > 1:
                conflicts.add(w)
    touched = {w: sorted(set(ls)) for w, ls in touched.items()}
    # rows of the tile the access touches, widened to whole groups of 8
    rows_hit = sorted({r for r in range(tile.rows) for k in range(tile.row_pitch * tile.elem_bytes // WORD)
                       if _row_word(tile, r, k) in touched})
    if tile.rows <= 32 or not rows_hit:
        rr = range(tile.rows)
    else:
        lo, hi = rows_hit[0] // 8 * 8, min(tile.rows, (rows_hit[-1] // 8 + 1) * 8)
        rr = range(lo, hi)
    head = [label or tile.describe(),
            f"{tile.describe()}: {tile.bytes} bytes, {tile.wasted_bytes} of them padding "
            f"({100.0 * tile.wasted_bytes / tile.bytes:.1f}%)",
            what,
            f"{report.wavefronts} wavefronts (ideal {report.ideal}, {report.conflicts} from conflicts)"]
    size = font + 2
    y0, width = y, 0.0
    for i, line in enumerate(head):
        scene.add(Text(x, y + 0.7 * size, line, size, anchor="start", bold=(i in (0, 3))))
        width = max(width, text_width(line, size))
        y += 1.45 * size
    y += 0.4 * font
    grid, names = _word_cells(tile, touched, conflicts, rr, report.banks)
    rows_note = "" if len(rr) == tile.rows else f" (rows {rr.start}-{rr.stop - 1} of {tile.rows})"
    w, h = draw_grid(scene, x, y, grid, font, title_lines=(f"tile as 4-byte words; colour = bank{rows_note}",),
                     row_label="row", col_label="element col \u2192", row_names=[str(r) for r in rr],
                     col_names=names)
    width = max(width, w)
    y += h + GAP
    pw, ph, record = access_panel(scene, x, y, Access("", op, offsets, arch, active), font=font + 1)
    width = max(width, pw)
    record.update({"label": label, "layout": tile.describe(), "bytes": tile.bytes,
                   "padding_bytes": tile.wasted_bytes, "access": what})
    return width, y + ph - y0, record


def _row_word(tile, r, k):
    from ..address import Tile
    eb = tile.elem_bytes
    wide = Tile(tile.rows, tile.row_pitch, tile.dtype, base=tile.base, swizzle=tile.swizzle, unit=tile.unit)
    byte = k * WORD
    addr = int(wide.offset(r, byte // eb)) + byte % eb
    return addr - addr % WORD


def tile_scene(op, shape, dtype, layouts, labels=(), arch=None, fragment=None, at="0,0",
               stored="row", block=False, fill=None, active=None):
    """One tile under several layouts (padding vs swizzle), the same access on each, side by side."""
    from ..banks.model import check_tile
    from ..inputs import pair, shape as parse_shape
    rows, cols = parse_shape(shape)
    r0, c0 = pair(at, "--block" if block else "--at", 0, max(rows, cols) - 1)
    if len(labels) > len(layouts):
        raise LayoutsimError(f"{len(labels)} --label for {len(layouts)} layouts")
    from ..banks.model import lanes_of
    tiles = [parse_layout(s, rows, cols, dtype) for s in layouts]
    lanes = 32
    for t in tiles:
        lanes = lanes_of(check_tile(t, op, arch))                # 64 on CDNA (wave64)
    scene = Scene(0, 0, title=f"{op} on a {rows}x{cols} {dtype} tile")
    y = MARGIN
    scene.add(Text(MARGIN, y + 10, scene.title + (": layouts side by side" if len(tiles) > 1 else ""),
                   14, anchor="start", bold=True))
    y += 28
    key = ("colour = bank; words the access touches are in full colour with their lanes named "
           "(faded: untouched, 'pad': padding); red outline = bank conflict in its phase; "
           "below, each phase over the memory rows it touches")

    def panel(i, t):
        offsets, what = tile_offsets(t, op, fragment, (r0, c0), stored, block, fill, lanes)
        label = labels[i] if i < len(labels) else layouts[i]
        return lambda x, y: tile_panel(scene, x, y, label, t, op, offsets, what, arch, active=active)

    return _side_by_side(scene, y, key, [panel(i, t) for i, t in enumerate(tiles)],
                         {"kind": "banks", "tile": f"{rows}x{cols}", "dtype": dtype}, hover="lane")
