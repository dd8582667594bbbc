"""Where results go and where inputs come from: files written atomically, archives read with
their sizes checked first, and a stdout that a closed pipe cannot crash.

Every file layoutsim and gpu-check write (pictures, reports, corpora, recorded dumps, markdown,
generated sources, the build cache) goes through `write_atomic` (or `write_all` for several
files that are written all or nothing):

  * only into a regular file: an existing symbolic link, device, FIFO, socket or folder at the
    path is refused (as root, `-o /dev/null` must not replace the device);
  * never through a symbolic link (`_no_link_on_the_way`): the folder the path names (`out` of
    `out/x.png`, `/tmp/d` of `/tmp/d/x.png`) and, for a relative path, every folder of it below the
    current folder must not be a symbolic link, so an output never lands outside the folder named
    (the folders above an absolute path's own, such as a /tmp that is a link, are the system's);
  * an empty path is an error, never "the current folder";
  * the folder must exist: it is never created on the way (`make_dir` is for the folders a
    command owns, such as the tree under `gpu-check run --record DIR`: it creates that folder,
    never its missing parents, and refuses a symbolic link);
  * the data goes to a temporary file beside the target, is synced, then renamed over it, so a
    reader sees the old file or the new one, never half of one; the temporary file is removed
    on any failure, Ctrl-C included;
  * a file that exists keeps its permission bits (and its owner where we may set it) except
    setuid, setgid and sticky, which are dropped (a rewritten file is not the program that was
    trusted with them); a new one gets the usual 0666 minus the umask.

Files given as input (`read_regular`, `read_npy`, `read_npz`) must be regular files, and their
sizes are bounded before anything is allocated: an .npz member's declared size (or a .npy file's
size), its .npy header's shape and dtype (no pickled objects) and what it really holds must agree
and stay under the limit, so a small archive cannot inflate into gigabytes and a header cannot
claim terabytes.

Failures are one LayoutsimError naming the path and the reason.

`measured_data` says where the GPU measurements of the source tree (tests/data) are, `cache_dir`
where the caches layoutsim keeps between processes are.
"""
import contextlib
import os
import stat
import struct
import sys
import tokenize
import zipfile
import zlib
from pathlib import Path

from .errors import LayoutsimError

_KINDS = ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a folder"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"))


def _existing(path, what):
    """os.lstat of path, or None if nothing is there; refuses anything but a regular file."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise LayoutsimError(f"cannot write {what} {path}: {e.strerror or e}") from None
    if not stat.S_ISREG(st.st_mode):
        kind = next((k for test, k in _KINDS if test(st.st_mode)), "not a regular file")
        raise LayoutsimError(f"cannot write {what} {path}: it is {kind}; give the path of a regular file")
    return st


def check_target(path, what="file"):
    """(shown path, absolute path, lstat or None) if `path` can be written by write_atomic;
    otherwise the one-line error it would raise. Call it before long work whose result goes there."""
    try:
        shown = os.fspath(path)
    except TypeError:
        raise LayoutsimError(f"cannot write {what}: {path!r} is not a file path") from None
    if not isinstance(shown, str) or not shown or "\0" in shown:
        raise LayoutsimError(f"cannot write {what}: {shown!r} is not a file path")
    full = os.path.abspath(shown)
    folder, name = os.path.split(full)
    if shown.endswith(os.sep) or not name:
        raise LayoutsimError(f"cannot write {what} {shown}: the path names a folder, not a file")
    _no_link_on_the_way(shown, f"cannot write {what} {shown}")
    st = _existing(full, what)
    if not os.path.isdir(folder):
        raise LayoutsimError(f"cannot write {what} {shown}: folder {folder} does not exist (create it first)")
    return shown, full, st


def _no_link_on_the_way(shown, prefix, itself=False):
    """Refuse a path whose folders lead through a symbolic link (the module docstring's rule): the
    last folder of `shown` as written (itself=True: `shown` itself, a folder), and for a relative
    path every folder of it below the current folder, each as written (`a/../b` checks `a`)."""
    path = shown.rstrip(os.sep) if itself else os.path.dirname(shown)
    if os.path.isabs(shown):
        folders = [path] if path.strip(os.sep) else []
    else:
        parts = path.split(os.sep)
        folders = [os.sep.join(parts[:i]) for i in range(1, len(parts) + 1)] if path else []
    for folder in folders:
        if os.path.islink(folder):
            raise LayoutsimError(f"{prefix}: {folder} is a symbolic link; give the folder it points to "
                                 f"(outputs never go through a link)")


def source_tree():
    """The repository's root, for the committed files that are not installed with the package
    (tests/data, tests/ptx/kernels): the folder above the package when it holds tests/ (a checkout
    or an editable install), else the current directory (a package installed from the repository
    and run from its root, as CI does)."""
    beside = Path(__file__).resolve().parents[1]
    return beside if (beside / "tests").is_dir() else Path.cwd()


def measured_data(name):
    """tests/data/<name>: the GPU measurements kept in the source tree. $LAYOUTSIM_DATA/<name>
    when that is set, else under source_tree()."""
    env = os.environ.get("LAYOUTSIM_DATA")
    if env:
        return Path(env) / name
    return source_tree() / "tests" / "data" / name


def cache_dir(name):
    """$LAYOUTSIM_CACHE/<name> (default ~/.cache/layoutsim/<name>): where what layoutsim computes
    once and keeps for later processes lives (the SASS lowering of a PTX, decoded MUFU tables).
    Not created here: writers create it, best effort."""
    return Path(os.environ.get("LAYOUTSIM_CACHE") or Path.home() / ".cache" / "layoutsim") / name


def write_atomic(path, data, what="file"):
    """Write `data` (bytes, str as UTF-8, or a function called with the open binary file) to
    `path` as described in the module docstring. Returns the absolute path."""
    return write_all([(path, data, what)])[0]


def write_all(items):
    """Write several files [(path, data, what)] all or nothing: every target is checked first,
    each is written to its temporary file, and only then are they all renamed into place, so a
    refused target or a failing writer leaves every target as it was. Returns the absolute paths."""
    checked = [(check_target(path, what), data, what) for path, data, what in items]
    temps = []
    try:
        for (shown, full, st), data, what in checked:
            temps.append((_write_temp(shown, full, st, data, what), full, shown, what))
        for tmp, full, shown, what in temps:
            try:
                os.replace(tmp, full)
            except OSError as e:
                raise LayoutsimError(f"cannot write {what} {shown}: {e.strerror or e}") from None
    except BaseException:
        for tmp, *_ in temps:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise
    return [full for (_, full, _), _, _ in checked]


def _write_temp(shown, full, st, data, what):
    """The temporary file beside `full` holding `data`, synced, with the mode (and owner) of the
    file it will replace."""
    folder, name = os.path.split(full)
    tmp = os.path.join(folder, f".{name[:64]}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o666)
    except OSError as e:
        raise LayoutsimError(f"cannot write {what} {shown}: {e.strerror or e}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            if callable(data):
                data(f)
            else:
                f.write(data.encode("utf-8") if isinstance(data, str) else data)
            f.flush()
            os.fsync(f.fileno())
        if st is not None:                    # its mode, but never setuid/setgid/sticky
            os.chmod(tmp, stat.S_IMODE(st.st_mode) & ~(stat.S_ISUID | stat.S_ISGID | stat.S_ISVTX))
            if (st.st_uid, st.st_gid) != (os.geteuid(), os.getegid()):
                with contextlib.suppress(OSError):
                    os.chown(tmp, st.st_uid, st.st_gid)
    except BaseException as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(e, OSError):
            raise LayoutsimError(f"cannot write {what} {shown}: {e.strerror or e}") from None
        raise
    return tmp


def make_dir(path, what="folder", parents=False):
    """The folder `path` for a command that owns the tree under it (`--record DIR`, `ptx run --out
    DIR`): used as it is when it exists, created when it does not. Its parent must exist: a mistyped
    path must not grow a tree of folders on the way (parents=True only for folders inside a tree
    the command already owns, and for the build cache). A path that exists and is not a folder, or
    is a symbolic link (writes would land wherever it points), is refused. Returns the path."""
    full = check_dir(path, what, missing_ok=True)
    parent = os.path.dirname(full)
    if not parents and not os.path.isdir(parent):
        raise LayoutsimError(f"cannot create {what} {path}: folder {parent} does not exist (create it first)")
    try:
        os.makedirs(full, exist_ok=True)
    except OSError as e:
        raise LayoutsimError(f"cannot create {what} {path}: {e.strerror or e}") from None
    return full


def check_dir(path, what="folder", missing_ok=False):
    """The absolute path of `path` if it is a folder (not a symbolic link to one), or does not
    exist and missing_ok; otherwise the one-line error. Call it before work whose results go there."""
    try:
        shown = os.fspath(path)
        full = os.path.abspath(shown)
    except (TypeError, ValueError):
        raise LayoutsimError(f"cannot use {what}: {path!r} is not a folder path") from None
    if not isinstance(shown, str) or not shown or "\0" in shown:     # '' is not "the current folder"
        raise LayoutsimError(f"cannot use {what}: {shown!r} is not a folder path")
    _no_link_on_the_way(shown, f"cannot use {what} {shown}", itself=True)
    try:
        st = os.lstat(full)
    except FileNotFoundError:
        if missing_ok:
            return full
        raise LayoutsimError(f"cannot use {what} {path}: no such folder (create it first)") from None
    except (OSError, ValueError) as e:
        raise LayoutsimError(f"cannot use {what} {path}: {getattr(e, 'strerror', None) or e}") from None
    if not stat.S_ISDIR(st.st_mode):
        kind = next((k for test, k in _KINDS if test(st.st_mode)), "not a folder")
        raise LayoutsimError(f"cannot use {what} {path}: it is {kind}, not a folder")
    return full


def _input(path, what):
    """os.stat of an input, which must be a regular file (a FIFO or device would block or never end)."""
    try:
        st = os.stat(path)
    except (OSError, TypeError, ValueError) as e:
        raise LayoutsimError(f"cannot read {what} {path!r}: {getattr(e, 'strerror', None) or e}") from None
    if not stat.S_ISREG(st.st_mode):
        raise LayoutsimError(f"cannot read {what} {path}: not a regular file")
    return st


def read_regular(path, what="file", max_bytes=1 << 28):
    """The bytes of a regular file of at most max_bytes."""
    st = _input(path, what)
    if st.st_size > max_bytes:
        raise LayoutsimError(f"{what} {path} is {st.st_size} bytes; the limit is {max_bytes}")
    try:
        with open(path, "rb") as f:
            return f.read(max_bytes + 1)[:max_bytes]
    except OSError as e:
        raise LayoutsimError(f"cannot read {what} {path}: {e.strerror or e}") from None


# Everything a damaged or crafted archive can make zipfile, zlib or numpy's header parser raise
# (a bit flip inside a deflate stream is a zlib.error, a mangled header a SyntaxError from
# ast.literal_eval, unbalanced brackets a tokenize.TokenError from numpy's header filter, deep
# nesting a RecursionError or MemoryError): all of them mean "not a valid file", never a traceback.
_BAD_FORMAT = (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, struct.error, EOFError, ValueError,
               OSError, KeyError, IndexError, NotImplementedError, RuntimeError, TypeError, OverflowError,
               SyntaxError, tokenize.TokenError, MemoryError)


def _npy_header(f, size, where):
    """The dtype and shape a .npy stream of `size` bytes declares, read without reading the data,
    and checked: a known version, no Python objects, and exactly as many data bytes as the shape
    needs (counted with Python ints: a product in int64 wraps, and a wrapped 0 would pass)."""
    from numpy.lib import format as npformat
    version = npformat.read_magic(f)
    header = {(1, 0): npformat.read_array_header_1_0, (2, 0): npformat.read_array_header_2_0}.get(version)
    if header is None:
        raise LayoutsimError(f"{where} has .npy version {version}")
    shape, _, dtype = header(f)
    if dtype.hasobject:
        raise LayoutsimError(f"{where} holds Python objects (refused)")
    count = 1
    for n in shape:
        count *= n
    held = size - f.tell()
    if count * dtype.itemsize != held:
        raise LayoutsimError(f"{where} claims shape {shape} of {dtype} ({count * dtype.itemsize} bytes) "
                             f"but holds {held} bytes")
    return dtype, shape


def read_npy(path, what="array", max_bytes=1 << 30, accept=None):
    """The array of a .npy file, its header checked as an .npz member's is (`_npy_header`) and
    its data bounded by max_bytes before anything is allocated; accept(dtype, shape, nbytes), if
    given, may refuse it then too (by raising), as a caller's own limits do."""
    from numpy.lib import format as npformat
    st = _input(path, what)
    try:
        with open(path, "rb") as f:
            dtype, shape = _npy_header(f, st.st_size, f"{what} {path}")
            nbytes = st.st_size - f.tell()
            if nbytes > max_bytes:
                raise LayoutsimError(f"{what} {path}: shape {shape} of {dtype} is {nbytes} bytes; "
                                     f"the limit is {max_bytes}")
            if accept is not None:
                accept(dtype, shape, nbytes)
            f.seek(0)                              # read_array reads the header again
            return npformat.read_array(f, allow_pickle=False)
    except LayoutsimError:
        raise
    except _BAD_FORMAT as e:
        raise LayoutsimError(f"cannot read {what} {path}: not a valid .npy file "
                             f"({type(e).__name__}: {_short(e)})") from None


def read_npz(path, what="archive", max_bytes=1 << 30, max_members=1 << 13):
    """{name: array} of an .npz archive (numpy.savez), checked before anything is inflated (see
    the module docstring); max_bytes bounds the arrays together, max_members their number."""
    from numpy.lib import format as npformat
    _input(path, what)
    out, total = {}, 0
    try:
        with zipfile.ZipFile(path) as zf:
            infos = zf.infolist()
            if not infos:
                raise LayoutsimError(f"{what} {path} holds no arrays")
            if len(infos) > max_members:
                raise LayoutsimError(f"{what} {path} has {len(infos)} members; the limit is {max_members}")
            for info in infos:
                name = info.filename
                if not name.endswith(".npy") or "/" in name or name[:-4] in out:
                    raise LayoutsimError(f"{what} {path}: member {name!r} is not an array of an .npz archive")
                if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                    raise LayoutsimError(f"{what} {path}: member {name!r} uses an unexpected compression")
                total += info.file_size
                if total > max_bytes:
                    raise LayoutsimError(f"{what} {path}: its arrays inflate to more than {max_bytes} bytes "
                                         f"(member {name!r} alone {info.file_size})")
                with zf.open(info) as f:
                    _npy_header(f, info.file_size, f"{what} {path}: member {name!r}")
                with zf.open(info) as f:
                    out[name[:-4]] = npformat.read_array(f, allow_pickle=False)
    except LayoutsimError:
        raise
    except _BAD_FORMAT as e:
        raise LayoutsimError(f"cannot read {what} {path}: not a valid .npz archive "
                             f"({type(e).__name__}: {_short(e)})") from None
    return out


def _short(e):
    """An exception's text, on one line and short: it ends up in a one-line error."""
    return " ".join(str(e).split())[:120]


class _PipeSafe:
    """A text stream whose reader may go away (`layoutsim list | head`): on the first
    BrokenPipeError, stdout's descriptor is pointed at /dev/null and the command carries on
    quietly, so it ends with its own exit code and no traceback."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text):
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._closed()
            return len(text)

    def flush(self):
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._closed()

    def _closed(self):
        with contextlib.suppress(OSError, ValueError, AttributeError):
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, self._stream.fileno())
            os.close(null)

    def __getattr__(self, name):
        return getattr(self._stream, name)


@contextlib.contextmanager
def pipe_safe_stdout():
    """Run a command with sys.stdout wrapped in _PipeSafe; flushes it before leaving."""
    old = sys.stdout
    sys.stdout = safe = _PipeSafe(old)
    try:
        yield
    finally:
        safe.flush()
        sys.stdout = old
