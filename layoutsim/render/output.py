"""Writing pictures: format from the name or --format, atomic replace, and what --json reports."""
import os
import tempfile

from ..errors import LayoutsimError

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


def atomic_write(path, write):
    """Call write(fileobj) on a temporary file beside `path`, then rename it over `path`."""
    path = os.path.abspath(path)
    folder = os.path.dirname(path)
    if not os.path.isdir(folder):
        raise LayoutsimError(f"cannot write {path}: folder {folder} does not exist")
    fd, tmp = tempfile.mkstemp(dir=folder, prefix="." + os.path.basename(path) + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return path


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
    try:
        full = atomic_write(path, writer)
    except OSError as e:
        raise LayoutsimError(f"cannot write {path}: {e.strerror or e}") from None
    record = {"file": str(path), "format": fmt, "bytes": os.path.getsize(full),
              "width": round(scene.width), "height": round(scene.height)}
    if fmt == "png":
        from .png import png_scale
        s = png_scale(scene)
        record["width"], record["height"] = round(scene.width * s), round(scene.height * s)
    record.update(scene.meta.get("json", {}))
    return record
