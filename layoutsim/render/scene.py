"""A picture as plain data: rectangles and text in pixel coordinates, grouped into cells.

Every picture layoutsim draws (fragment grids, bank maps) is built as a `Scene` first; the
writers (`svg`, `html`, `png`) only translate it, so the three formats show the same thing.
Text sizes are chosen so that labels fit their cells: `text_width` is a conservative estimate
of a sans-serif string's width (digits of DejaVu Sans are 0.636 em, Arial's 0.556 em).
"""
from dataclasses import dataclass, field

CHAR_EM = 0.64          # width of one character in em (upper bound for digits and lower case)
BOLD_EM = 0.72          # the same for bold text (cells may be bold when emphasised)
FONT = "DejaVu Sans, Arial, Helvetica, sans-serif"


def text_width(text, size):
    return len(text) * CHAR_EM * size


@dataclass
class Rect:
    x: float
    y: float
    w: float
    h: float
    fill: str = "none"
    stroke: str = "none"
    stroke_width: float = 0.0


@dataclass
class Text:
    x: float
    y: float            # baseline-independent: the vertical centre of the text
    text: str
    size: float
    anchor: str = "middle"      # start / middle / end
    color: str = "#000000"
    bold: bool = False


@dataclass
class Group:
    """A cell (or any unit a viewer may point at): its shapes, a tooltip and data attributes."""
    items: list
    cls: str = "cell"
    title: str = ""
    data: dict = field(default_factory=dict)


@dataclass
class Scene:
    width: float
    height: float
    title: str = ""
    items: list = field(default_factory=list)     # Rect | Text | Group, drawn in order
    meta: dict = field(default_factory=dict)      # what --json reports (cells, lanes, ...)

    def add(self, item):
        self.items.append(item)
        return item

    def walk(self):
        """Every Rect and Text, groups flattened, in drawing order."""
        for it in self.items:
            if isinstance(it, Group):
                yield from it.items
            else:
                yield it

    def groups(self, cls=None):
        return [g for g in self.items if isinstance(g, Group) and (cls is None or g.cls == cls)]


@dataclass
class Cell:
    """One grid cell before layout: up to three text lines, colours and a data record."""
    lines: tuple
    fill: str
    text_color: str = "#000000"
    border: str = ""           # "" (thin grey), or a colour for a thick emphasis border
    title: str = ""
    data: dict = field(default_factory=dict)
    bold: bool = False


def grid_metrics(cells, font):
    """(cell width, cell height) that fit the longest line of any cell at this font size."""
    longest = max((len(s) for row in cells for c in row if c is not None for s in c.lines), default=1)
    lines = max((len(c.lines) for row in cells for c in row if c is not None), default=1)
    w = max(longest * BOLD_EM * font + 1.0 * font, 1.6 * font)
    h = lines * 1.2 * font + 0.5 * font
    return round(w, 1), round(h, 1)


def font_for(rows, cols):
    """Label size for a grid: full size for small grids, smaller (never below 8 px) for big ones."""
    n = max(rows, cols)
    if n <= 32:
        return 12.0
    if n <= 64:
        return 10.0
    return 8.5


def draw_grid(scene, x0, y0, cells, font, title_lines=(), row_label="", col_label="",
              row_names=None, col_names=None, cell_size=None, major=8, major_rows=None):
    """Lay out a 2-D list of Cell (None = empty) with row/column numbers; returns (w, h) used.

    A darker line every `major` columns and `major_rows` rows (default `major`).
    Column numbers sit above the grid, row numbers to its left. Every label is sized from
    `font` and every cell is as wide as its longest line, so nothing overlaps.
    """
    rows, cols = len(cells), len(cells[0]) if cells else 0
    cw, ch = cell_size or grid_metrics(cells, font)
    hf = max(font - 1.5, 7.0)                     # header font
    row_names = row_names or [str(r) for r in range(rows)]
    col_names = col_names or [str(c) for c in range(cols)]
    rlw = max(text_width(max(row_names, key=len, default=""), hf), text_width(row_label, hf)) + 0.8 * hf
    y = y0
    tsize = font + 1.5
    for i, line in enumerate(title_lines):
        scene.add(Text(x0, y + 0.7 * tsize, line, tsize if i == 0 else font, anchor="start", bold=(i == 0)))
        y += 1.4 * (tsize if i == 0 else font)
    if title_lines:
        y += 0.3 * font
    gx = x0 + rlw
    # column header; if the numbers do not fit, show every k-th
    step = 1
    while text_width(max(col_names, key=len, default=""), hf) > step * cw - 2:
        step *= 2
    if col_label:
        scene.add(Text(gx, y + 0.7 * hf, col_label, hf, anchor="start", color="#555555"))
        y += 1.3 * hf
    for c in range(0, cols, step):
        scene.add(Text(gx + (c + 0.5) * cw, y + 0.7 * hf, col_names[c], hf, color="#555555"))
    y += 1.4 * hf
    gy = y
    if row_label:
        scene.add(Text(x0, gy - 0.7 * hf, row_label, hf, anchor="start", color="#555555"))
    for r in range(rows):
        scene.add(Text(x0 + rlw - 0.4 * hf, gy + (r + 0.5) * ch, row_names[r], hf, anchor="end",
                       color="#555555"))
    emph = []
    thin = "#b4b4b4"                                 # the grid itself: one line per row and column
    for c in range(1, cols):
        scene.add(Rect(gx + c * cw, gy, 0, rows * ch, stroke=thin, stroke_width=0.5))
    for r in range(1, rows):
        scene.add(Rect(gx, gy + r * ch, cols * cw, 0, stroke=thin, stroke_width=0.5))
    for r, row in enumerate(cells):
        for c, cell in enumerate(row):
            if cell is None:                         # empty: the grid lines are enough
                continue
            x, yy = gx + c * cw, gy + r * ch
            items = [Rect(x, yy, cw, ch, fill=cell.fill, stroke="#9a9a9a", stroke_width=0.5)]
            n = len(cell.lines)
            for k, line in enumerate(cell.lines):
                if not line:
                    continue
                ty = yy + ch / 2 + (k - (n - 1) / 2) * 1.2 * font
                items.append(Text(x + cw / 2, ty, line, font, color=cell.text_color, bold=cell.bold))
            scene.add(Group(items, title=cell.title, data=cell.data))
            if cell.border:
                thick = max(2.0, font / 5) * (1.5 if cell.border == "#d62728" else 1.0)
                emph.append(Rect(x + 1.5, yy + 1.5, cw - 3, ch - 3, stroke=cell.border,
                                 stroke_width=thick))
    grey = "#5c5c5c"                                 # a darker line every `major` cells
    for c in range(major, cols, major):
        scene.add(Rect(gx + c * cw, gy, 0, rows * ch, stroke=grey, stroke_width=1.0))
    for r in range(major_rows or major, rows, major_rows or major):
        scene.add(Rect(gx, gy + r * ch, cols * cw, 0, stroke=grey, stroke_width=1.0))
    for e in emph:                                   # drawn last, above every neighbour
        scene.add(e)
    scene.add(Rect(gx, gy, cols * cw, rows * ch, stroke="#404040", stroke_width=1.0))
    return rlw + cols * cw, gy - y0 + rows * ch
