"""Scene -> PNG through matplotlib (an optional dependency: `pip install "layoutsim[render]"`).

The scene's pixel coordinates become the axes' data coordinates; `scale` image pixels are
drawn per scene pixel, so small labels stay sharp.
"""
from ..errors import LayoutsimError
from .scene import Rect, Text

MAX_PIXELS = 30000          # matplotlib's Agg refuses images wider than 2**16 pixels


def _matplotlib():
    try:
        import matplotlib
    except ImportError:
        raise LayoutsimError('PNG output needs matplotlib, which is not installed: '
                             'pip install matplotlib (or pip install "layoutsim[render]"), '
                             'or use --format svg / html') from None
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt
    from matplotlib.collections import PatchCollection
    from matplotlib.patches import Rectangle
    return plt, PatchCollection, Rectangle


def png_scale(scene):
    """Image pixels per scene pixel: 2 for ordinary pictures, 1.5 for huge ones (64x256 grids)."""
    big = max(scene.width, scene.height)
    return min(2.0 if big < 4000 else 1.5, MAX_PIXELS / big)


def write_png(scene, fileobj, scale=None):
    plt, PatchCollection, Rectangle = _matplotlib()
    scale = scale or png_scale(scene)
    dpi = 100
    fig = plt.figure(figsize=(scene.width * scale / dpi, scene.height * scale / dpi), dpi=dpi)
    try:
        ax = fig.add_axes((0, 0, 1, 1))
        ax.set_xlim(0, scene.width)
        ax.set_ylim(scene.height, 0)
        ax.set_axis_off()
        pt = 72.0 / dpi * scale             # points per scene pixel
        rects = [it for it in scene.walk() if isinstance(it, Rect)]   # one collection, in order
        ax.add_collection(PatchCollection(
            [Rectangle((r.x, r.y), r.w, r.h) for r in rects],
            facecolors=[r.fill if r.fill != "none" else (0, 0, 0, 0) for r in rects],
            edgecolors=[r.stroke if r.stroke != "none" else (0, 0, 0, 0) for r in rects],
            linewidths=[r.stroke_width * pt for r in rects]))
        _draw_texts(ax, scene, scale)
        fig.savefig(fileobj, format="png", dpi=dpi, facecolor="white")
    finally:
        plt.close(fig)


def _draw_texts(ax, scene, scale):
    """Texts as glyph paths, one PathCollection per distinct (string, size, style, colour).

    A 64x256 grid has 32k labels but only a few hundred distinct strings: drawing each
    string's path at many offsets is ~50x faster than 32k Text artists.
    """
    from matplotlib.collections import PathCollection
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextPath
    from matplotlib.transforms import Affine2D, IdentityTransform

    groups = {}
    for it in scene.walk():
        if isinstance(it, Text) and it.text.strip():
            groups.setdefault((it.text, it.size, it.bold, it.color, it.anchor), []).append((it.x, it.y))
    props = {b: FontProperties(family="DejaVu Sans", weight="bold" if b else "normal") for b in (False, True)}
    for (text, size, bold, color, anchor), offsets in groups.items():
        px = size * scale                                   # glyph size in image pixels
        path = TextPath((0, 0), text, size=px, prop=props[bold])
        width = path.get_extents().x1 if path.vertices.size else 0.0
        dx = {"start": 0.0, "middle": -width / 2, "end": -width}[anchor]
        path = Affine2D().translate(dx, -0.36 * px).transform_path(path)   # centre on x-height
        ax.add_collection(PathCollection([path], offsets=offsets, offset_transform=ax.transData,
                                         transform=IdentityTransform(), facecolors=[color],
                                         edgecolors="none", zorder=3))
