"""Scene -> a standalone HTML page (inline SVG, a few lines of CSS and script, no dependency).

Pointing at a cell shows its tooltip below the title and outlines every cell of the same lane
(or bank phase, for bank pictures), so "what else does lane 13 hold?" is one mouse move.
"""
from html import escape

from .svg import to_svg

_STYLE = """
body { font-family: DejaVu Sans, Arial, Helvetica, sans-serif; margin: 1em; }
#info { font-family: monospace; min-height: 1.4em; margin: .4em 0; color: #333; }
svg .cell { cursor: crosshair; }
svg.pointing .cell { opacity: .35; }
svg.pointing .cell.same { opacity: 1; }
"""

_SCRIPT = """
(function () {
  var svg = document.querySelector('svg'), info = document.getElementById('info');
  var key = svg.getAttribute('data-key') || 'lane';
  svg.addEventListener('mouseover', function (e) {
    var g = e.target.closest('.cell'); if (!g) return;
    info.textContent = g.querySelector('title') ? g.querySelector('title').textContent : '';
    var v = g.getAttribute('data-' + key); if (v === null) return;
    var want = v.split(' ');
    svg.classList.add('pointing');
    svg.querySelectorAll('.cell').forEach(function (c) {
      var have = (c.getAttribute('data-' + key) || '').split(' ');
      c.classList.toggle('same', have.some(function (x) { return want.indexOf(x) >= 0; }));
    });
  });
  svg.addEventListener('mouseleave', function () { svg.classList.remove('pointing'); info.textContent = ''; });
})();
"""


def to_html(scene):
    svg = to_svg(scene, standalone=False)
    key = scene.meta.get("hover_key", "lane")
    svg = svg.replace("<svg ", f'<svg data-key="{escape(key)}" ', 1)
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>{escape(scene.title)}</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n"
            f"<h1 style=\"font-size:1.2em\">{escape(scene.title)}</h1>\n"
            + f"<p id=\"info\">point at a cell: its {escape(key)}'s other cells stay lit</p>\n"
            + svg + f"<script>{_SCRIPT}</script>\n</body>\n</html>\n")
