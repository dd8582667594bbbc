"""A .cu file to PTX with nvcc: the flags a user may add, and the one way nvcc is called.

nvcc runs each of its steps through `sh -c` with file names and option values inside double
quotes, and escapes some characters and not others (nvcc 13.0 --dryrun: `$` is escaped in an
-I path but not in a -D value, a backtick in neither, a `"` in an -I path ends the quotes). A
name like `$(touch X).cu` therefore ran commands. So no text a user chose reaches those command
lines:

- the source is copied into a private folder (mkdtemp: mode 0700) under a fixed name, after a
  first line `#line 1 "PATH"`: nvcc's messages, `__FILE__` and the PTX's `.file` name the user's
  own file (a name holding `"`, a backslash or a control character cannot be written there: it
  is refused). The copy sits some folders deep, as deep as the original, so that an
  `#include "../x.h"` does not find a file beside the private folder first;
- the source's folder and every `-I` folder are reached through symbolic links with fixed names
  inside the private folder (`#include "h.h"` beside the source keeps working whatever the
  folders are called), and the `.file` lines of headers found through them are mapped back;
- a flag is one of ALLOWED (flags that change what is compiled, nothing that writes files, runs
  programs or prints instead of compiling), with its value checked: a macro name is a C
  identifier, a macro value holds none of the characters the shell reads inside quotes.

Kernels in an anonymous namespace get a mangled name holding a hash of the compiled file's path
(nvcc's rule), which changes from one compile to the next here: ask for them by name
(`--kernel k`, layoutsim.demangle).
"""
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from .. import archs
from ..archs import normalize, vendor
from ..errors import LayoutsimError, one_line
from ..files import read_regular

# What `--nvcc-flag` / flags= accept, as shown in the refusal. One flag per item; the two-token
# forms are given in one item, with a space or `=`: "-I DIR", "-Xptxas -O3", "-Xptxas=-O3".
ALLOWED = ("-std=c++NN", "-I DIR (or -IDIR)", "-D NAME[=VALUE]", "-U NAME", "--expt-relaxed-constexpr",
           "--expt-extended-lambda (and the other --expt-* flags)", "--extended-lambda",
           "-maxrregcount=N", "-O0..-O3", "-G", "-Xptxas -O0..-O3")
MAX_FLAGS = 256
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# A macro value: what C expressions and type names need, and none of `"'$\`;&|!` nor a control
# character (the shell reads `"`, `$`, backtick and backslash inside nvcc's double quotes).
_MACRO_VALUE = re.compile(r"[A-Za-z0-9 _.,+\-*/%()<>=:~^\[\]{}#@]*\Z")
# A folder or file name that can be written into `#line "..."` and a PTX `.file "..."`.
_UNWRITABLE = re.compile(r'["\\\x00-\x1f\x7f]')
# The private folder's own path is on nvcc's command lines: plain characters only.
_PLAIN_PATH = re.compile(r"[A-Za-z0-9_./+-]+\Z")
_FILE_LINE = re.compile(r'^(\s*\.file\s+\d+\s+")([^"]*)(")', re.M)


def _refuse(flag, why):
    raise LayoutsimError(f"--nvcc-flag {one_line(flag)!r}: {why}")


def _split(flag, *names):
    """(name, value) when `flag` is one of `names` followed by a value (`-I DIR`, `-IDIR`,
    `-I=DIR`, `--include-path=DIR`), else None."""
    for n in names:
        if flag.startswith(n) and len(flag) > len(n):
            rest = flag[len(n):]
            if n.startswith("--") and rest[0] not in " =":
                continue
            return n, rest[1:] if rest[0] in " =" else rest
    return None


def check_flags(flags):
    """Each user flag as ("tokens", [argv items]) or ("include", DIR); a one-line error for any
    other flag or a value that could reach a shell."""
    if isinstance(flags, (str, bytes)):
        raise LayoutsimError(f"flags {one_line(flags)!r}: give a list of flags, e.g. ['-std=c++17']")
    flags = list(flags)
    if len(flags) > MAX_FLAGS:
        raise LayoutsimError(f"{len(flags)} nvcc flags: at most {MAX_FLAGS}")
    out = []
    for flag in flags:
        if not isinstance(flag, str):
            raise LayoutsimError(f"nvcc flag {flag!r}: give a string such as '-std=c++17'")
        out.append(_check(flag.strip(), flag))
    return out


def _check(f, given):
    if f in ("-I", "-D", "-U", "-Xptxas", "--include-path", "--define-macro", "--undefine-macro"):
        _refuse(given, f"give the value in the same flag: --nvcc-flag='{f} VALUE' or --nvcc-flag={f}=VALUE")
    if re.fullmatch(r"--?std[= ]c\+\+\d\d", f):
        return "tokens", ["-std=" + f.split("=", 1)[-1].split()[-1]]
    if re.fullmatch(r"-O[0-3]", f) or f in ("-G", "--device-debug", "--extended-lambda"):
        return "tokens", [f]
    if re.fullmatch(r"--?expt-[a-z]+(-[a-z]+)*", f):
        return "tokens", ["--" + f.lstrip("-")]
    m = re.fullmatch(r"--?maxrregcount[= ](\d{1,3})", f)
    if m:
        if not 1 <= int(m.group(1)) <= archs.MAX_THREAD_REGISTERS:
            _refuse(given, f"give -maxrregcount=N with N from 1 to {archs.MAX_THREAD_REGISTERS}")
        return "tokens", [f"-maxrregcount={int(m.group(1))}"]
    m = re.fullmatch(r"(?:-Xptxas|--ptxas-options)[= ](\S+)", f)
    if m:
        if not re.fullmatch(r"-O[0-3]", m.group(1)):
            _refuse(given, "the ptxas options allowed are -O0..-O3 (e.g. -Xptxas=-O3)")
        return "tokens", [f"-Xptxas={m.group(1)}"]
    s = _split(f, "--include-path", "-I")
    if s:
        d = s[1].strip()
        if not d or _UNWRITABLE.search(d):
            _refuse(given, "give -I DIR with a folder name without '\"', backslash or control characters")
        return "include", d
    s = _split(f, "--define-macro", "-D")
    if s:
        name, eq, value = s[1].strip().partition("=")
        if not _IDENT.match(name):
            _refuse(given, "give -D NAME or -D NAME=VALUE with NAME a C identifier")
        if not _MACRO_VALUE.match(value):
            _refuse(given, "the macro value may hold letters, digits, spaces and _.,+-*/%()<>=:~^[]{}#@ "
                           "only (quotes, $, backtick, backslash, ;, &, |, ! and control characters could "
                           "reach nvcc's shell)")
        return "tokens", [f"-D{name}{eq}{value}"]
    s = _split(f, "--undefine-macro", "-U")
    if s:
        if not _IDENT.match(s[1].strip()):
            _refuse(given, "give -U NAME with NAME a C identifier")
        return "tokens", [f"-U{s[1].strip()}"]
    name = re.split(r"[= ]", f, maxsplit=1)[0] or f
    hint = (" (the target is --arch / arch=)" if name.lstrip("-") in ("arch", "gpu-architecture", "code", "gencode")
            else " (it is always given)" if name.lstrip("-") in ("lineinfo", "generate-line-info", "ptx") else "")
    _refuse(given, f"flag {one_line(name)!r} is not allowed{hint}; allowed: {', '.join(ALLOWED)}")


def _source_name(path):
    """The absolute path of the source as nvcc would have named it, checked writable into
    `#line` and `.file`."""
    full = os.path.abspath(os.fspath(path))
    if _UNWRITABLE.search(full):
        raise LayoutsimError(f"{one_line(full)!r}: a .cu path holding '\"', a backslash or a control character "
                             f"cannot be named in the PTX's line info; rename the file or its folder")
    return full


def compile_cu(path, arch="sm_90", flags=()):
    """The PTX text of a .cu file, as `nvcc -ptx -lineinfo -arch=ARCH FLAGS FILE` makes it, for
    ptx.run. nvcc compiles a private copy (no file name or flag value of yours reaches its shell
    steps); the PTX's CUDA lines and nvcc's messages name your own files, and `#include`s
    resolve as beside the original. `flags`: a list, one flag with its value each: -std=c++NN,
    "-I DIR", "-D NAME=VALUE", "-U NAME", --expt-*, --extended-lambda, -maxrregcount=N,
    -O0..-O3, -G, -Xptxas=-O0..-O3; any other is refused. One-line LayoutsimError when nvcc is
    not installed, a flag is refused or the compile fails (nvcc's first error line)."""
    what = f"{one_line(os.fspath(path))!r}" if isinstance(path, (str, os.PathLike)) else repr(path)
    if not isinstance(path, (str, os.PathLike)) or not str(os.fspath(path)).endswith(".cu"):
        raise LayoutsimError(f"compile_cu({what}): give the path of a .cu file")
    a = normalize(arch)
    if vendor(a) != "nvidia":
        raise LayoutsimError(f"--arch {a}: nvcc compiles for NVIDIA targets (sm_80, sm_90, ...)")
    checked = check_flags(flags)
    full = _source_name(path)
    source = read_regular(path, "CUDA source")
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        raise LayoutsimError(f"nvcc is not installed; cannot compile {what} (install the CUDA toolkit, or "
                             f"compile it where nvcc is with nvcc -ptx -lineinfo -arch={a} and give the .ptx)")
    try:
        private = tempfile.mkdtemp(prefix="layoutsim-nvcc-")      # mode 0700, a fresh name
    except OSError as e:
        raise LayoutsimError(f"cannot make a temporary folder to compile in: {e.strerror or e}") from None
    try:
        return _compile(Path(private), nvcc, full, source, a, checked)
    except OSError as e:                       # a link or the copy could not be made
        raise LayoutsimError(f"cannot prepare the compile of {what} in {private}: {e.strerror or e}") from None
    finally:
        shutil.rmtree(private, ignore_errors=True)


def _compile(tmp, nvcc, full, source, arch, checked):
    if not _PLAIN_PATH.match(str(tmp)):
        raise LayoutsimError(f"temporary folder {one_line(tmp)!r} has characters nvcc's shell steps would "
                             f"read; set TMPDIR to a plain folder name")
    links = {}                                 # link in the private folder -> the user's folder

    def link(name, folder):
        (tmp / name).symlink_to(os.path.abspath(folder), target_is_directory=True)
        links[str(tmp / name)] = os.path.abspath(folder)
        return f"-I{tmp / name}"
    argv = [nvcc, "-ptx", "-lineinfo", f"-arch={arch}", link("src", os.path.dirname(full))]
    for kind, value in checked:
        argv += [link(f"inc{len(links)}", value)] if kind == "include" else value
    depth = len(Path(full).parent.parts) + 1
    cu = tmp.joinpath(*["up"] * depth, "kernel.cu")
    cu.parent.mkdir(parents=True)
    body = source[3:] if source.startswith(b"\xef\xbb\xbf") else source   # a BOM is valid only first
    cu.write_bytes(f'#line 1 "{full}"\n'.encode() + body)
    out = tmp / "kernel.ptx"
    env = dict(os.environ, TMPDIR=str(tmp))    # nvcc's intermediate files go in the private folder too
    try:
        res = subprocess.run([*argv, str(cu), "-o", str(out)], capture_output=True, text=True, errors="replace",
                             cwd=tmp, env=env, stdin=subprocess.DEVNULL)
    except OSError as e:
        raise LayoutsimError(f"cannot run nvcc ({nvcc}): {e.strerror or e}") from None
    if res.returncode != 0:
        text = _map_back(res.stderr, links).replace(str(cu), full)
        first = next((ln for ln in text.splitlines() if "error" in ln), text.strip()[:300] or "no message")
        raise LayoutsimError(f"{one_line(full)}: nvcc failed: {one_line(first.strip(), 400)}")
    if not out.is_file():
        raise LayoutsimError(f"{one_line(full)}: nvcc wrote no PTX")
    ptx = out.read_bytes().decode("utf-8", "replace")
    return _FILE_LINE.sub(lambda m: m.group(1) + _map_back(m.group(2), links) + m.group(3), ptx)


def _map_back(text, links):
    """`text` with the private links' paths replaced by the user's folders."""
    for name, folder in links.items():
        text = text.replace(name + os.sep, folder.rstrip(os.sep) + os.sep)
    return text
