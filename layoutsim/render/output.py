"""Writing pictures: format from the name or --format, and what --json reports (the file is
written by layoutsim.files.write_atomic)."""
import os

from ..errors import LayoutsimError
from ..files import write_atomic

FORMATS = ("svg", "png", "html")


def resolve_format(fmt, path):
    """The output format: --format if given, else the file's extension."""
    if fmt:
        f = str(fmt).lower()
        if f not in FORMATS:
            raise LayoutsimError(f"unknown format {fmt!r}; valid: {', '.join(FORMATS)}")
        return f
    ext = os.path.splitext(str(path or ""))[1].lower().lstrip(".")
    if ext == "htm":
        ext = "html"
    if ext in FORMATS:
        return ext
    if not path:
        return "svg"
    raise LayoutsimError(f"cannot tell the format of {path!r} from its extension; "
                         f"give --format ({', '.join(FORMATS)})")


def save(scene, path, fmt=None):
    """Write a Scene as svg / html / png; returns the --json record."""
    fmt = resolve_format(fmt, path)
    if fmt == "png":
        from .png import _matplotlib, write_png
        _matplotlib()                       # fail with the one-line message before touching the file
        writer = lambda f: write_png(scene, f)          # noqa: E731
    else:
        from .html import to_html
        from .svg import to_svg
        text = to_svg(scene) if fmt == "svg" else to_html(scene)
        writer = lambda f: f.write(text.encode("utf-8"))  # noqa: E731
    full = write_atomic(path, writer, "picture")
    record = {"file": str(path), "format": fmt, "bytes": os.path.getsize(full),
              "width": round(scene.width), "height": round(scene.height)}
    if fmt == "png":
        from .png import png_scale
        s = png_scale(scene)
        record["width"], record["height"] = round(scene.width * s), round(scene.height * s)
    record.update(scene.meta.get("json", {}))
    return record
