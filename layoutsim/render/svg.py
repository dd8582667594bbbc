"""Scene -> SVG text, written directly (no dependency).

Each cell is a `<g class="cell">` with `data-*` attributes (lane, reg, row, col, ...) and a
`<title>` tooltip, so the file can be inspected by tools and by a mouse alike.
"""
from xml.sax.saxutils import escape, quoteattr

from .scene import FONT, Rect, Text


def _num(v):
    return f"{v:.1f}".rstrip("0").rstrip(".")


def _rect(r, in_cell=False):
    if r.w == 0 or r.h == 0:                     # a grid line
        return (f'<path d="M{_num(r.x)} {_num(r.y)}{"v" + _num(r.h) if r.w == 0 else "h" + _num(r.w)}" '
                f'stroke="{r.stroke}" stroke-width="{_num(r.stroke_width)}"/>')
    stroke = "" if in_cell and (r.stroke, r.stroke_width) == ("#9a9a9a", 0.5) else \
        f' stroke="{r.stroke}" stroke-width="{_num(r.stroke_width)}"'
    return (f'<rect x="{_num(r.x)}" y="{_num(r.y)}" width="{_num(r.w)}" height="{_num(r.h)}" '
            f'fill="{r.fill}"{stroke}/>')


def _text(t):
    weight = ' font-weight="bold"' if t.bold else ""
    fill = "" if t.color == "#000000" else f' fill="{t.color}"'
    anchor = "" if t.anchor == "middle" else f' text-anchor="{t.anchor}"'
    return (f'<text x="{_num(t.x)}" y="{_num(t.y)}" font-size="{_num(t.size)}"'
            f'{anchor}{fill}{weight}>{escape(t.text)}</text>')


def _item(it, in_cell=False):
    if isinstance(it, Rect):
        return _rect(it, in_cell)
    if isinstance(it, Text):
        return _text(it)
    attrs = "".join(f" data-{k}={quoteattr(str(v))}" for k, v in it.data.items())
    title = f"<title>{escape(it.title)}</title>" if it.title else ""
    return f'<g class="{it.cls}"{attrs}>{title}' + "".join(_item(x, True) for x in it.items) + "</g>"


def to_svg(scene, standalone=True):
    w, h = _num(scene.width), _num(scene.height)
    head = '<?xml version="1.0" encoding="UTF-8"?>\n' if standalone else ""
    out = [f'{head}<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
           f'viewBox="0 0 {w} {h}" font-family={quoteattr(FONT)} dominant-baseline="central" '
           f'text-anchor="middle">',
           '<style>.cell > rect { stroke: #9a9a9a; stroke-width: 0.5; }</style>',
           f"<title>{escape(scene.title)}</title>",
           f'<rect x="0" y="0" width="{w}" height="{h}" fill="#ffffff"/>']
    out.extend(_item(it) for it in scene.items)
    out.append("</svg>\n")
    return "\n".join(out)
