"""PTX text -> statements -> parsed instructions and directives (lexical level only).

What nvcc 12/13 emits for sm_80/sm_90 (and what inline `asm` adds) is regular: statements end
with ';' except the line directives (.version, .target, .address_size, .loc, .file, .maxntid,
...), which end at the newline; '{' / '}' open and close blocks (function bodies and the scoped
blocks nvcc and inline asm use); `name:` is a label. Braces inside a statement are vector
operands or initializers. Debug sections (`.section .debug_* { ... }`) are skipped.

Every item keeps the PTX line it starts on, so every error and every report names its line.
"""
import re
import struct
from dataclasses import dataclass, field

from ..errors import LayoutsimError

# directives that end at the newline instead of ';'
LINE_DIRECTIVES = {".version", ".target", ".address_size", ".loc", ".file", ".maxntid", ".reqntid",
                   ".minnctapersm", ".maxnctapersm", ".maxnreg", ".explicitcluster",
                   ".reqnctapercluster", ".maxclusterrank", ".noreturn", ".abi_preserve",
                   ".abi_preserve_control", ".blocksareclusters"}


class PtxSyntaxError(LayoutsimError):
    """The PTX text cannot be read (names the line)."""


@dataclass
class Stmt:
    kind: str          # "stmt", "label", "open", "close", "header"
    text: str
    line: int


def _string_end(text, i):
    """Index after the string literal that starts at text[i] == '"'."""
    j, n = i + 1, len(text)
    while j < n and text[j] != '"':
        j += 2 if text[j] == "\\" else 1
    return j + 1


_COMMENT_OR_STRING = re.compile(r'"|//|/\*')


def _strip_comments(text):
    """Remove // and /* */ comments (keeping newlines so line numbers hold) outside strings.
    Jumps from one '"', '//' or '/*' to the next: linear in the text, and fast on long lines."""
    out, i, n = [], 0, len(text)
    while i < n:
        m = _COMMENT_OR_STRING.search(text, i)
        if m is None:
            out.append(text[i:])
            break
        j = m.start()
        out.append(text[i:j])
        if text[j] == '"':
            i = _string_end(text, j)
            out.append(text[j:i])
        elif text.startswith("//", j):
            k = text.find("\n", j)
            i = n if k < 0 else k
        else:
            k = text.find("*/", j + 2)
            i = n if k < 0 else k + 2
            out.append("\n" * text.count("\n", j, i))
    return "".join(out)


_HEADER = re.compile(r"(\.(visible|extern|weak|common)\s+)*\.(entry|func)\b")
_LABEL = re.compile(r"[A-Za-z_$%][\w$]*")
_NONSPACE = re.compile(r"\S")
_TOKEN = re.compile(r"\S+")
# the characters the scanner acts on; everything between them is copied as it stands
_EVENT = re.compile(r'[\n"{}()\[\];:]')
_BRACE_OR_NEWLINE = re.compile(r"[{}\n]")
# PTX text longer than this is refused before it is read: whole translation units of real projects
# are long (nvcc 13 prints 10.4 MB for warp-lang 1.19's native/deterministic.cu and 22.5 MB for a
# CUB DeviceRadixSort over seven key types), and loading costs ~1 us a character and ~30 bytes of
# memory a character (the 22.5 MB unit: 22 s, 650 MB peak on a loaded 2-core machine), so 32 Mi
# characters loads in well under a minute and a gigabyte
MAX_PTX_CHARS = 1 << 25
# brackets one statement may nest: PTX nests a few (an initializer of a 3-d array of vectors is 4
# deep); the operand and initializer readers recurse once a level
MAX_NESTING = 32
# a lone surrogate is not a character (what Python's surrogateescape makes of undecodable bytes)
_SURROGATE = re.compile("[\ud800-\udfff]")


class _Pending:
    """The statement being read: text[at:] up to the scanner's position (a statement is always one
    slice of the text, so it is never joined character by character), and what the scanner asks
    of it, each worked out once: those answers depend only on the statement's start, which does
    not change as it grows. This keeps `statements` linear in the length of the text."""

    def __init__(self, text, at):
        self.text, self.at = text, at
        self._header = self._head = None
        self._not_label = False

    def header(self, end):
        """(is a function header, is a .section) of a statement that reached a '{' (at end) at
        depth 0; neither match can reach past that '{', so later ones have the same answer."""
        if self._header is None:
            self._header = (bool(_HEADER.match(self.text, self.at, end)),
                            self.text.startswith(".section", self.at))
        return self._header

    def head(self, end):
        """Its first word (complete once a whitespace follows it, as at a newline)."""
        if self._head is None:
            self._head = _TOKEN.match(self.text, self.at, end).group()
        return self._head

    def label(self, end):
        """Whether text[at:end] is `name` (a label before ':'); once not, never again."""
        if not self._not_label:
            m = _LABEL.match(self.text, self.at, end)
            self._not_label = m is None or self.text[m.end():end].strip() != ""
        return not self._not_label


def statements(text):
    """Split PTX text into Stmt items (comments removed, debug sections skipped)."""
    if len(text) > MAX_PTX_CHARS:
        raise PtxSyntaxError(f"PTX text of {len(text)} characters: the limit is {MAX_PTX_CHARS}")
    bad = _SURROGATE.search(text)
    if bad:
        code = ord(bad.group())
        # U+DC80..U+DCFF: a byte that is not UTF-8, as Python's surrogateescape (the CLI) reads it
        what = (f"the byte {code - 0xDC00:#04x}, which is not UTF-8 text" if 0xDC80 <= code <= 0xDCFF else
                f"{bad.group()!r}, a lone surrogate (not a character)")
        raise PtxSyntaxError(f"line {text.count(chr(10), 0, bad.start()) + 1}: the PTX text holds {what}; "
                             f"PTX is ASCII text")
    # `.reg.b16 x;` (no space, as some CUDA headers' inline asm writes it) is `.reg .b16 x;`
    text = re.sub(r"(?<![\w.])\.(reg|param|local|shared)\.(?=[a-z])", r".\1 .", _strip_comments(text))
    out = []
    cur, start, depth, line = None, 1, 0, 1
    i, n = 0, len(text)

    def flush(end, kind="stmt"):
        nonlocal cur
        s = text[cur.at:end].strip()
        if s:
            out.append(Stmt(kind, s, start))
        cur = None

    while i < n:
        if cur is None:                       # between statements: skip to the next one
            m = _NONSPACE.search(text, i)
            if m is None:
                line += text.count("\n", i)
                break
            line += text.count("\n", i, m.start())
            i, start = m.start(), line
            cur = _Pending(text, i)
        m = _EVENT.search(text, i)
        if m is None:
            i = n
            break
        i = m.start()
        c = text[i]
        empty = cur.at == i                   # nothing of the statement before this character
        if c == "\n":
            line += 1
        if c == '"':
            i = _string_end(text, i)
            continue
        if depth == 0:
            if c == "{":
                if empty:
                    out.append(Stmt("open", "{", line))
                    cur, i = None, i + 1
                    continue
                is_header, is_section = cur.header(i)
                if is_header:
                    flush(i, "header")
                    out.append(Stmt("open", "{", line))
                    i += 1
                    continue
                if is_section:
                    # a debug section: skip to its matching brace
                    cur, d, j = None, 1, i + 1
                    while d and j < n:
                        m = _BRACE_OR_NEWLINE.search(text, j)
                        if m is None:
                            j = n
                            break
                        j = m.start()
                        d += {"{": 1, "}": -1, "\n": 0}[text[j]]
                        line += text[j] == "\n"
                        j += 1
                    i = j
                    continue
            if c == "}" and empty:
                out.append(Stmt("close", "}", line))
                cur, i = None, i + 1
                continue
            if c == ";":
                flush(i)
                i += 1
                continue
            if c == "\n" and not empty and cur.head(i) in LINE_DIRECTIVES:
                flush(i)
                i += 1
                continue
            if c == ":" and text[i + 1:i + 2] != ":" and not empty and cur.label(i):
                flush(i, "label")
                i += 1
                continue
        depth = _nest(c, depth, f"line {line}")
        if depth < 0:
            raise PtxSyntaxError(f"line {line}: unbalanced {c!r}")
        i += 1
    rest = text[cur.at:].strip() if cur is not None else ""
    if rest:
        if cur.head(n) in LINE_DIRECTIVES:
            flush(n)
        else:
            raise PtxSyntaxError(f"line {start}: statement {rest[:40]!r} has no terminating ';'")
    return out


# ---- operands ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Operand:
    kind: str                 # reg, imm, fimm, sym, addr, vec, pair, list, tref, sink, raw (unreadable)
    value: object = None      # reg/sym: name; imm: int; fimm: (bits, width) ; vec/list/pair/tref: tuple
    neg: bool = False         # !%p
    offset: int = 0           # addr: byte offset
    base: object = None       # addr: Operand (reg or sym) or None for an absolute address

    def __str__(self):
        if self.kind in ("reg", "sym"):
            return ("!" if self.neg else "") + str(self.value)
        if self.kind == "imm":
            return str(self.value)
        if self.kind == "fimm":
            return self.value[2]
        if self.kind == "addr":
            b = str(self.base) if self.base is not None else ""
            return f"[{b}{'+' if b and self.offset >= 0 else ''}{self.offset if self.offset or not b else ''}]"
        if self.kind in ("vec", "list"):
            o, c = ("{", "}") if self.kind == "vec" else ("(", ")")
            return o + ", ".join(map(str, self.value)) + c
        if self.kind == "pair":
            return "|".join(map(str, self.value))
        if self.kind == "tref":
            return "[" + ", ".join(map(str, self.value)) + "]"
        if self.kind == "raw":
            return str(self.value)
        return "_"


_INT = re.compile(r"^[+-]?(0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)[Uu]?$")
_FHEX = re.compile(r"^[+-]?0([fFdD])([0-9a-fA-F]+)$")
_FDEC = re.compile(r"^[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?$")
_IDENT = re.compile(r"^[A-Za-z_$%][\w$]*(\.[xyzw])?$|^%[\w$]+(\.[\w]+)?$")


def _nest(c, depth, where):
    """The bracket depth after character c; deeper than MAX_NESTING is refused (naming `where`)."""
    if c in "([{":
        if depth >= MAX_NESTING:
            raise PtxSyntaxError(f"{where}: brackets nested more than {MAX_NESTING} deep")
        return depth + 1
    return depth - 1 if c in ")]}" else depth


_SPLIT = {}                 # sep -> the pattern of the characters split_top acts on


def split_top(text, sep=","):
    """Split at `sep` outside brackets, braces and parentheses. Only brackets and separators
    are visited (a regular expression finds them), so an operand with a long mangled name
    costs what a short one does."""
    rx = _SPLIT.get(sep)
    if rx is None:
        rx = _SPLIT[sep] = re.compile("[][(){}" + re.escape(sep) + "]")
    parts, depth, start = [], 0, 0
    for m in rx.finditer(text):
        c = m.group()
        if c in "([{" or c in ")]}":
            depth = _nest(c, depth, repr(text[:40]))
            if c != sep:
                continue
        if c == sep and depth == 0:
            parts.append(text[start:m.start()].strip())
            start = m.end()
    last = text[start:].strip()
    if last or parts:
        parts.append(last)
    return parts


def is_int(text):
    """Whether text is a PTX integer literal."""
    return bool(_INT.match(text.strip()))


INT_RANGE = (-(1 << 63), (1 << 64) - 1)     # PTX integer literals are 64-bit (signed or unsigned)


def parse_int(text, line=None, lo=INT_RANGE[0], hi=INT_RANGE[1]):
    """The value of a PTX integer literal (decimal, 0x hex, 0b binary, 0 octal, U suffix) in
    lo..hi; anything else is a PtxSyntaxError naming the line."""
    where = f"line {line}: " if line is not None else ""
    if not _INT.match(text.strip()):
        raise PtxSyntaxError(f"{where}{text.strip()[:40]!r} is not an integer")
    v = _int_value(text)
    if not lo <= v <= hi:
        shown = text.strip() if len(text.strip()) <= 24 else f"{text.strip()[:12]}...({len(text.strip())} digits)"
        raise PtxSyntaxError(f"{where}integer {shown} is out of range: valid {lo}..{hi}")
    return v


def _int_value(text):
    t = text.strip().rstrip("Uu")
    neg = t.startswith("-")
    t = t.lstrip("+-")
    if t.lower().startswith("0x"):
        v = int(t, 16)
    elif t.lower().startswith("0b"):
        v = int(t[2:], 2)
    elif len(t) > 1 and t.startswith("0"):
        v = int(t, 8)
    else:
        v = int(t)
    return -v if neg else v


def parse_operand(text, line):
    t = text.strip()
    if not t:
        raise PtxSyntaxError(f"line {line}: empty operand")
    if t == "_":
        return Operand("sink")
    if t.startswith("["):
        if not t.endswith("]"):
            raise PtxSyntaxError(f"line {line}: address operand {t!r} lacks ']'")
        inner = split_top(t[1:-1].strip())
        if len(inner) > 1:
            # [tensorMap, {c0, c1, ...}] of cp.async.bulk.tensor: the map's address and the box
            # coordinates (also [tensorMap, {coords}, {im2col offsets}], refused where it is read)
            return Operand("tref", tuple(parse_operand(p, line) for p in inner))
        return _parse_address(t[1:-1].strip(), line)
    if t.startswith("{"):
        if not t.endswith("}"):
            raise PtxSyntaxError(f"line {line}: vector operand {t!r} lacks '}}'")
        return Operand("vec", tuple(parse_operand(p, line) for p in split_top(t[1:-1])))
    if t.startswith("("):
        inner = t[1:-1].strip()
        return Operand("list", tuple(parse_operand(p, line) for p in split_top(inner)) if inner else ())
    if "|" in t:
        return Operand("pair", tuple(parse_operand(p, line) for p in t.split("|")))
    neg = t.startswith("!")
    if neg:
        t = t[1:].strip()
    m = _FHEX.match(t)
    if m:
        width = 32 if m.group(1) in "fF" else 64
        if len(m.group(2)) != width // 4:
            raise PtxSyntaxError(f"line {line}: float literal {t[:40]!r}: 0{m.group(1)} takes exactly "
                                 f"{width // 4} hex digits (the {width} bits)")
        bits = int(m.group(2), 16)
        if t.startswith("-"):
            bits ^= 1 << (width - 1)
        return Operand("fimm", (bits, width, text.strip()))
    if _INT.match(t):
        return Operand("imm", parse_int(t, line))
    if _FDEC.match(t):
        bits = struct.unpack("<Q", struct.pack("<d", float(t)))[0]
        return Operand("fimm", (bits, 64, t))
    if t.startswith("%"):
        return Operand("reg", t, neg)
    if re.match(r"^[A-Za-z_$][\w$]*$", t):
        return Operand("sym", t, neg)
    return Operand("raw", text.strip())     # refused where an instruction reads it (with its line)


# an address offset is a signed 64-bit byte offset (added to int64 addresses)
ADDRESS_RANGE = (-(1 << 63), (1 << 63) - 1)


def _parse_address(inner, line):
    m = re.match(r"^([%A-Za-z_$][\w$.]*)?\s*(?:\+\s*(-?\s*[-+]?\w+))?$", inner)
    if m and (m.group(1) or m.group(2)):
        base = None
        if m.group(1):
            name = m.group(1)
            if _INT.match(name):
                return Operand("addr", offset=parse_int(name, line, *ADDRESS_RANGE))
            base = Operand("reg", name) if name.startswith("%") else Operand("sym", name)
        off = parse_int(m.group(2).replace(" ", ""), line, *ADDRESS_RANGE) if m.group(2) else 0
        return Operand("addr", base=base, offset=off)
    m = re.match(r"^([%A-Za-z_$][\w$.]*)\s*-\s*(\w+)$", inner)
    if m:
        base = Operand("reg", m.group(1)) if m.group(1).startswith("%") else Operand("sym", m.group(1))
        return Operand("addr", base=base, offset=-parse_int(m.group(2), line, *ADDRESS_RANGE))
    if _INT.match(inner):
        return Operand("addr", offset=parse_int(inner, line, *ADDRESS_RANGE))
    return Operand("raw", f"[{inner}]")


# ---- instructions ---------------------------------------------------------------------------
class Parts(tuple):
    """The operands (or modifiers) of one instruction. A handler reads them by position; one
    past the end is the instruction's own fault (an operand or modifier missing), so it is a
    PtxSyntaxError with the PTX line, not an IndexError of the handler."""

    def __new__(cls, items, line, text, what):
        self = super().__new__(cls, items)
        self.where = (line, text, what)
        return self

    def __getitem__(self, i):
        try:
            return super().__getitem__(i)
        except IndexError:
            line, text, what = self.where
            raise PtxSyntaxError(f"line {line}: {text}: needs more {what}s than the {len(self)} it "
                                 f"has") from None

    def __reduce__(self):
        return (Parts, (tuple(self),) + self.where)


@dataclass
class Instr:
    line: int
    text: str                     # the statement as written (whitespace collapsed)
    opcode: str                   # "ld", "mma", ...
    mods: tuple                   # ("global", "v4", "f32") (the dot-separated rest)
    operands: tuple               # Operand
    guard: object = None          # (register name, negated) or None
    loc: object = None            # (file, line, inlined_at) from the last .loc
    scope: object = None          # register scope at this point (set by the loader)
    extra: dict = field(default_factory=dict)

    def __setattr__(self, key, value):
        if key in ("operands", "mods") and not isinstance(value, Parts):
            value = Parts(value, self.line, self.text, "operand" if key == "operands" else "modifier")
        super().__setattr__(key, value)

    @property
    def name(self):
        return ".".join((self.opcode,) + tuple(self.mods))


def parse_instruction(text, line):
    t = " ".join(text.split()).rstrip(";").rstrip()
    guard = None
    if t.startswith("@"):
        m = re.match(r"^@(!?)\s*(%?[\w$]+)\s+(.*)$", t)
        if not m:
            raise PtxSyntaxError(f"line {line}: cannot read guard in {t!r}")
        guard = (m.group(2), m.group(1) == "!")
        t = m.group(3)
    head, _, rest = t.partition(" ")
    cut = re.search(r"[{\[]", head)          # no space before the operands (CuTe's tcgen05.ld asm)
    if cut:
        head, rest = head[:cut.start()], head[cut.start():] + (" " + rest if rest else "")
    parts = head.split(".")
    opcode, mods = parts[0], tuple(p for p in parts[1:])
    if not re.match(r"^[a-z][a-z0-9_]*$", opcode):
        raise PtxSyntaxError(f"line {line}: cannot read instruction {t!r}")
    ops = tuple(parse_operand(p, line) for p in split_top(rest)) if rest.strip() else ()
    return Instr(line=line, text=" ".join(text.split()), opcode=opcode, mods=mods, operands=ops,
                 guard=guard)
