"""Colours: light fills that keep black labels readable.

Lanes step around the hue circle by the golden angle, so lanes that sit next to each other
in a fragment (L, L+1, L+4) get clearly different hues. Banks use an even hue gradient, so a
padded tile shows its bank shift as a diagonal rainbow and a swizzle as a permutation.
"""
import colorsys

DIM = "#f0f0f0"          # fill of cells outside a highlight
DIM_TEXT = "#a8a8a8"
EMPHASIS = "#1a1a1a"     # border of highlighted cells
CONFLICT = "#d62728"     # border of conflicting shared-memory words
CONFLICT_TEXT = "#a00000"
PHASE_MARK = "#1f4e9c"


def _hex(r, g, b):
    return "#%02x%02x%02x" % tuple(round(255 * v) for v in (r, g, b))


def lane_color(lane):
    hue = (lane * 0.381966) % 1.0
    sat = 0.38 if (lane // 32) % 2 == 0 else 0.26      # warps of a warpgroup alternate
    return _hex(*colorsys.hsv_to_rgb(hue, sat, 1.0))


def bank_color(bank, banks=32):
    return _hex(*colorsys.hsv_to_rgb((bank / banks) % 1.0, 0.42, 1.0))
