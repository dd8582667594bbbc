"""Device printf (`vprintf`) and assert (`__assertfail`): the text the CUDA runtime prints, made
from the format string and the argument buffer a kernel passes.

The ABI (CUDA C++ Programming Guide, "Formatted Output", 'Format Specifiers' and 'Implementation
Details'; the PTX nvcc emits for printf): `vprintf(const char *format, char *args)`, `args` the
arguments one after another, each at its natural alignment: an int-sized value (`%d %i %u %x %X
%o %c`, and `h`/`hh` lengths, which C promotes to int) takes 4 bytes, `l`/`ll`/`j`/`z`/`t` integers,
`%p`, `%s` (a pointer to the string) and every floating conversion (a float is promoted to
double) take 8. `*` widths and precisions are ints. The runtime formats each conversion as the
host's C library (glibc) does: `-nan`, `(null)` for a null `%s`, `(nil)` and `0x...` for `%p`.
"""
import math

import numpy as np

from ..errors import LayoutsimError

FLAGS = "-+ #0"
LENGTHS = ("hh", "h", "ll", "l", "j", "z", "t", "L", "q")
INTS, FLOATS = "diuxXoc", "fFeEgG"
EIGHT = ("l", "ll", "j", "z", "t", "q", "L")
MAX_FIELD = 1 << 16          # the widest width or precision modelled (the GPU's buffer is 1 MiB)
MAX_STRING = 1 << 16         # the longest %s string read


def parse(fmt):
    """The pieces of a format (bytes): literal bytes, or dicts {flags, width, prec, length, conv}
    (width/prec: None, an int, or "*"). A conversion the runtime does not format (`%n`, `%a`,
    an unknown letter) is refused by name."""
    out, i, n = [], 0, len(fmt)
    while i < n:
        j = fmt.find(b"%", i)
        if j < 0:
            out.append(fmt[i:])
            break
        if j > i:
            out.append(fmt[i:j])
        k = j + 1
        if k < n and fmt[k:k + 1] == b"%":
            out.append(b"%")
            i = k + 1
            continue
        spec = {"flags": "", "width": None, "prec": None, "length": ""}
        while k < n and chr(fmt[k]) in FLAGS:
            spec["flags"] += chr(fmt[k])
            k += 1
        spec["width"], k = _number(fmt, k)
        if k < n and fmt[k:k + 1] == b".":
            p, k = _number(fmt, k + 1)
            spec["prec"] = 0 if p is None else p
        for ln in LENGTHS:
            if fmt[k:k + len(ln)] == ln.encode():
                spec["length"] = ln
                k += len(ln)
                break
        conv = chr(fmt[k]) if k < n else ""
        if conv not in INTS + FLOATS + "sp":
            shown = fmt[j:k + 1].decode("latin-1")
            raise LayoutsimError(f"printf conversion {shown!r} is not modelled (the executor formats "
                                 f"%d %i %u %x %X %o %c %s %p %f %F %e %E %g %G with flags, width, precision "
                                 f"and length)")
        spec["conv"] = conv
        out.append(spec)
        i = k + 1
    return out


def _number(fmt, k):
    if k < len(fmt) and fmt[k:k + 1] == b"*":
        return "*", k + 1
    s = k
    while k < len(fmt) and 48 <= fmt[k] <= 57:
        k += 1
    if k == s:
        return None, k
    v = int(fmt[s:k])
    if v > MAX_FIELD:
        raise LayoutsimError(f"printf field width or precision {v} is larger than the {MAX_FIELD} modelled")
    return v, k


class Args:
    """Reads the argument buffer in order: `read(n)` -> the n raw bytes of the next argument,
    aligned to n (read_bytes(offset, n) reads the buffer)."""

    def __init__(self, read_bytes):
        self.read_bytes, self.at = read_bytes, 0

    def next(self, n):
        self.at = -(-self.at // n) * n
        raw = self.read_bytes(self.at, n)
        self.at += n
        return bytes(raw)


def format_bytes(fmt, read_bytes, read_string):
    """The bytes printf prints for a format (bytes) and argument buffer. read_bytes(offset, n):
    n bytes of the buffer; read_string(address, limit): the bytes of a NUL-terminated string
    (at most `limit`, None: no limit)."""
    args, out = Args(read_bytes), []
    for piece in parse(fmt):
        if isinstance(piece, bytes):
            out.append(piece)
            continue
        spec = dict(piece)
        for key in ("width", "prec"):
            if spec[key] == "*":
                v = int.from_bytes(args.next(4), "little", signed=True)
                if key == "width" and v < 0:
                    spec["flags"] += "-"
                spec[key] = min(abs(v), MAX_FIELD) if key == "width" else (None if v < 0 else min(v, MAX_FIELD))
        out.append(_one(spec, args, read_string))
    return b"".join(out)


def _one(spec, args, read_string):
    conv, flags = spec["conv"], spec["flags"]
    if conv in INTS:
        n = 8 if spec["length"] in EIGHT else 4
        raw = args.next(n)
        if conv == "c":
            return _pad(bytes([raw[0]]), spec["width"], flags, zero=False)
        bits = {"hh": 8, "h": 16}.get(spec["length"], n * 8)
        u = int.from_bytes(raw, "little") & ((1 << bits) - 1)
        if conv in "di":
            v = u - (1 << bits) if u >> (bits - 1) else u
            return _integer(abs(v), "-" if v < 0 else ("+" if "+" in flags else " " if " " in flags else ""),
                            "0123456789", "", spec)
        digits = {"u": "0123456789", "o": "01234567", "x": "0123456789abcdef", "X": "0123456789ABCDEF"}[conv]
        prefix = ""
        if "#" in flags and u:
            prefix = {"x": "0x", "X": "0X"}.get(conv, "")
        return _integer(u, "", digits, prefix, spec, octal_alt="#" in flags and conv == "o")
    if conv in FLOATS:
        v = np.frombuffer(args.next(8), "<f8")[0]
        return _float(float(v), bool(np.signbit(v)), spec)
    if conv == "p":
        u = int.from_bytes(args.next(8), "little")
        if u == 0:
            return _pad(b"(nil)", spec["width"], flags, zero=False)
        return _integer(u, "+" if "+" in flags else " " if " " in flags else "", "0123456789abcdef", "0x",
                        dict(spec, prec=spec["prec"]))
    u = int.from_bytes(args.next(8), "little")           # %s
    if u == 0:
        s = b"(null)" if spec["prec"] is None or spec["prec"] >= 6 else b""
    else:
        s = read_string(u, spec["prec"])
    return _pad(s, spec["width"], flags, zero=False)


def _integer(v, sign, digits, prefix, spec, octal_alt=False):
    base = len(digits)
    s = ""
    while v:
        s = digits[v % base] + s
        v //= base
    prec = spec["prec"]
    if prec is None:
        s = s or "0"
    elif len(s) < prec:
        s = "0" * (prec - len(s)) + s
    if octal_alt and not s.startswith("0"):
        s = "0" + s
    width, flags = spec["width"] or 0, spec["flags"]
    head = sign + prefix
    if "0" in flags and "-" not in flags and prec is None and len(head) + len(s) < width:
        s = "0" * (width - len(head) - len(s)) + s
    return _pad((head + s).encode(), width, flags, zero=False)


def _float(v, negative, spec):
    conv, flags = spec["conv"], spec["flags"]
    sign = "-" if negative else ("+" if "+" in flags else " " if " " in flags else "")
    if not math.isfinite(v):
        s = "nan" if math.isnan(v) else "inf"
        s = sign + (s.upper() if conv.isupper() else s)
        return _pad(s.encode(), spec["width"], flags, zero=False)
    prec = 6 if spec["prec"] is None else spec["prec"]
    alt = "#" if "#" in flags else ""
    body = ("%" + alt + "." + str(prec) + conv) % abs(v)
    width = spec["width"] or 0
    if "0" in flags and "-" not in flags and len(sign) + len(body) < width:
        body = "0" * (width - len(sign) - len(body)) + body
    return _pad((sign + body).encode(), width, flags, zero=False)


def _pad(s, width, flags, zero):
    width = width or 0
    if len(s) >= width:
        return s
    fill = b" " * (width - len(s))
    return s + fill if "-" in flags else fill + s


def assertion(message, file, line, function, block, thread):
    """The line the CUDA runtime prints for a failed device assert (CUDA C++ Programming Guide,
    'Assertion'): FILE:LINE: FUNCTION: block: [x,y,z], thread: [x,y,z] Assertion `EXPR` failed."""
    b = ",".join(str(int(c)) for c in block)
    t = ",".join(str(int(c)) for c in thread)
    return f"{file}:{line}: {function}: block: [{b}], thread: [{t}] Assertion `{message}` failed."
