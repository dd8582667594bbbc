"""The data files layoutsim ships (package data under layoutsim/**/data: the catalog's measured
wmma maps, confirmed.json, the lowering and wmma SASS data, the SFU tables), read through one door.

Every loader reads its file with `load` / `load_json` (or decodes inside `reading(path)`) and
checks the shape of what it will read (`check`), so a damaged file (truncated, edited, an entry
missing a key) is one line that names the file and how to restore it, never a KeyError or a
traceback deep inside a command. The same checks guard what `gpu-check discover --apply` may
write into the catalog.

`source_checkout()` says whether the package is imported from a git work tree (a checkout, or
an editable install of one): only there may a command write package data, and only there is
`git checkout -- PATH` the way to restore a file.
"""
import contextlib
import json
import lzma
import struct
import zipfile
import zlib
from pathlib import Path

from .errors import LayoutsimError, one_line
from .files import read_regular

ROOT = Path(__file__).resolve().parents[1]
# what decoding a damaged file can raise (json, bz2, zipfile, numpy, a missing key or a wrong type)
_DAMAGE = (ValueError, TypeError, KeyError, IndexError, AttributeError, AssertionError, RecursionError,
           OSError, EOFError, zlib.error, lzma.LZMAError, struct.error, zipfile.BadZipFile)


class DamagedData(LayoutsimError):
    """A package data file that cannot be what its loader reads."""


def source_checkout():
    """The root of the git work tree layoutsim is imported from, or None for an installed copy
    (site-packages): a `.git` (folder, or file of a worktree) beside pyproject.toml."""
    return ROOT if (ROOT / ".git").exists() and (ROOT / "pyproject.toml").is_file() else None


def restore_hint(path):
    """How to get a package data file back as it was shipped."""
    root, full = source_checkout(), Path(path).resolve()
    if root is not None and full.is_relative_to(root):
        return f"restore it with `git checkout -- {full.relative_to(root)}` (a source checkout)"
    return "restore it by reinstalling layoutsim (pip install --force-reinstall layoutsim)"


def damaged(path, reason):
    return DamagedData(f"layoutsim data file {path} is damaged ({one_line(reason, 300)}); {restore_hint(path)}")


@contextlib.contextmanager
def reading(path):
    """Whatever goes wrong in the block while decoding `path` becomes the one line of `damaged`."""
    try:
        yield
    except DamagedData:
        raise
    except LayoutsimError as e:
        raise damaged(path, str(e)) from None
    except _DAMAGE as e:
        raise damaged(path, f"{type(e).__name__}: {e}") from None


def load(path, parse=bytes, check=None, max_bytes=1 << 26):
    """parse(the bytes of `path`), checked by check(value) (which raises on a wrong shape)."""
    with reading(path):
        value = parse(read_regular(path, "layoutsim data file", max_bytes))
        if check is not None:
            check(value)
        return value


def load_json(path, check=None, max_bytes=1 << 26):
    return load(path, json_value, check, max_bytes)


def json_value(raw):
    """json.loads that turns nesting too deep for Python's parser into a ValueError."""
    try:
        return json.loads(raw)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


# ---- the shapes of the documents ------------------------------------------------------------------
class MapOf:
    """A JSON object with any string keys, each value of shape `spec`."""

    def __init__(self, spec):
        self.spec = spec


def check(value, spec, where="the document"):
    """Raise ValueError naming where `value` differs from `spec`: a type or tuple of types (int
    never accepts a bool); {key: spec} an object with those keys (a key written "name?" may be
    missing; other keys are allowed); [spec] a list of such items; MapOf(spec); a function
    value -> None or the problem."""
    if isinstance(spec, dict):
        if not isinstance(value, dict):
            raise ValueError(f"{where} is {_kind(value)}, not an object")
        for key, sub in spec.items():
            name = key.rstrip("?")
            if name in value:
                check(value[name], sub, f"{where}[{name!r}]")
            elif not key.endswith("?"):
                raise ValueError(f"{where} has no {name!r}")
    elif isinstance(spec, list):
        if not isinstance(value, list):
            raise ValueError(f"{where} is {_kind(value)}, not a list")
        for i, item in enumerate(value):
            check(item, spec[0], f"{where}[{i}]")
    elif isinstance(spec, MapOf):
        if not isinstance(value, dict):
            raise ValueError(f"{where} is {_kind(value)}, not an object")
        for key, item in value.items():
            check(item, spec.spec, f"{where}[{key!r}]")
    elif isinstance(spec, (type, tuple)):
        types = spec if isinstance(spec, tuple) else (spec,)
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            raise ValueError(f"{where} is {_kind(value)}, not {' or '.join(_name(t) for t in types)}")
    else:
        problem = spec(value)
        if problem:
            raise ValueError(f"{where} {problem}")


def _name(t):
    return {str: "a string", int: "an integer", float: "a number", bool: "true/false", list: "a list",
            dict: "an object", type(None): "null"}.get(t, t.__name__)


def _kind(value):
    return _name(type(value)) if type(value) in (str, int, float, bool, list, dict, type(None)) else type(value).__name__
