"""PTX text -> statements -> parsed instructions and directives (lexical level only).

What nvcc 12/13 emits for sm_80/sm_90 (and what inline `asm` adds) is regular: statements end
with ';' except the line directives (.version, .target, .address_size, .loc, .file, .maxntid,
...), which end at the newline; '{' / '}' open and close blocks (function bodies and the scoped
blocks nvcc and inline asm use); `name:` is a label. Braces inside a statement are vector
operands or initializers. Debug sections (`.section .debug_* { ... }`) are skipped.

Every item keeps the PTX line it starts on, so every error and every report names its line.
"""
import re
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


def _strip_comments(text):
    """Remove // and /* */ comments (keeping newlines so line numbers hold) outside strings."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = _string_end(text, i)
            out.append(text[i:j])
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _is_header(buf):
    s = buf.strip()
    return bool(re.match(r"^(\.(visible|extern|weak|common)\s+)*\.(entry|func)\b", s))


def statements(text):
    """Split PTX text into Stmt items (comments removed, debug sections skipped)."""
    # `.reg.b16 x;` (no space, as some CUDA headers' inline asm writes it) is `.reg .b16 x;`
    text = re.sub(r"(?<![\w.])\.(reg|param|local|shared)\.(?=[a-z])", r".\1 .", _strip_comments(text))
    out = []
    buf, start, depth, line = [], 1, 0, 1
    i, n = 0, len(text)

    def flush(kind="stmt"):
        nonlocal buf
        s = "".join(buf).strip()
        if s:
            out.append(Stmt(kind, s, start))
        buf = []

    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
        empty = not "".join(buf).strip()
        if empty and not c.isspace():
            start = line
        if c == '"':
            j = _string_end(text, i)
            buf.append(text[i:j])
            i = j
            continue
        if depth == 0:
            if c == "{":
                if empty:
                    out.append(Stmt("open", "{", line))
                    i += 1
                    continue
                if _is_header("".join(buf)):
                    flush("header")
                    out.append(Stmt("open", "{", line))
                    i += 1
                    continue
                if "".join(buf).strip().startswith(".section"):
                    # a debug section: skip to its matching brace
                    flush()
                    out.pop()
                    d, j = 1, i + 1
                    while j < n and d:
                        if text[j] == "{":
                            d += 1
                        elif text[j] == "}":
                            d -= 1
                        elif text[j] == "\n":
                            line += 1
                        j += 1
                    i = j
                    continue
            if c == "}" and empty:
                out.append(Stmt("close", "}", line))
                i += 1
                continue
            if c == ";":
                flush()
                i += 1
                continue
            if c == "\n":
                s = "".join(buf).strip()
                head = s.split(None, 1)[0] if s else ""
                if head in LINE_DIRECTIVES:
                    flush()
                    i += 1
                    continue
            if c == ":" and text[i + 1:i + 2] != ":" and \
                    re.fullmatch(r"[A-Za-z_$%][\w$]*", "".join(buf).strip() or "-"):
                flush("label")
                i += 1
                continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth < 0:
                raise PtxSyntaxError(f"line {line}: unbalanced {c!r}")
        buf.append(c)
        i += 1
    if "".join(buf).strip():
        s = "".join(buf).strip()
        head = s.split(None, 1)[0]
        if head in LINE_DIRECTIVES:
            flush()
        else:
            raise PtxSyntaxError(f"line {start}: statement {s[:40]!r} has no terminating ';'")
    return out


# ---- operands ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Operand:
    kind: str                 # reg, imm, fimm, sym, addr, vec, pair, list, sink, raw (unreadable)
    value: object = None      # reg/sym: name; imm: int; fimm: (bits, width) ; vec/list/pair: tuple
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
        if self.kind == "raw":
            return str(self.value)
        return "_"


_INT = re.compile(r"^[+-]?(0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)[Uu]?$")
_FHEX = re.compile(r"^[+-]?0([fFdD])([0-9a-fA-F]+)$")
_FDEC = re.compile(r"^[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?$")
_IDENT = re.compile(r"^[A-Za-z_$%][\w$]*(\.[xyzw])?$|^%[\w$]+(\.[\w]+)?$")


def split_top(text, sep=","):
    """Split at `sep` outside brackets, braces and parentheses."""
    parts, depth, cur = [], 0, []
    for c in text:
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        if c == sep and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
    last = "".join(cur).strip()
    if last or parts:
        parts.append(last)
    return parts


def parse_int(text):
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
        bits = int(m.group(2), 16)
        if t.startswith("-"):
            bits ^= 1 << (width - 1)
        return Operand("fimm", (bits, width, text.strip()))
    if _INT.match(t):
        return Operand("imm", parse_int(t))
    if _FDEC.match(t):
        import struct
        bits = struct.unpack("<Q", struct.pack("<d", float(t)))[0]
        return Operand("fimm", (bits, 64, t))
    if t.startswith("%"):
        return Operand("reg", t, neg)
    if re.match(r"^[A-Za-z_$][\w$]*$", t):
        return Operand("sym", t, neg)
    return Operand("raw", text.strip())     # refused where an instruction reads it (with its line)


def _parse_address(inner, line):
    m = re.match(r"^([%A-Za-z_$][\w$.]*)?\s*(?:\+\s*(-?\s*[-+]?\w+))?$", inner)
    if m and (m.group(1) or m.group(2)):
        base = None
        if m.group(1):
            name = m.group(1)
            if _INT.match(name):
                return Operand("addr", offset=parse_int(name))
            base = Operand("reg", name) if name.startswith("%") else Operand("sym", name)
        off = parse_int(m.group(2).replace(" ", "")) if m.group(2) else 0
        return Operand("addr", base=base, offset=off)
    m = re.match(r"^([%A-Za-z_$][\w$.]*)\s*-\s*(\w+)$", inner)
    if m:
        base = Operand("reg", m.group(1)) if m.group(1).startswith("%") else Operand("sym", m.group(1))
        return Operand("addr", base=base, offset=-parse_int(m.group(2)))
    if _INT.match(inner):
        return Operand("addr", offset=parse_int(inner))
    return Operand("raw", f"[{inner}]")


# ---- instructions ---------------------------------------------------------------------------
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

    @property
    def name(self):
        return ".".join((self.opcode,) + self.mods)


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
    parts = head.split(".")
    opcode, mods = parts[0], tuple(p for p in parts[1:])
    if not re.match(r"^[a-z][a-z0-9_]*$", opcode):
        raise PtxSyntaxError(f"line {line}: cannot read instruction {t!r}")
    ops = tuple(parse_operand(p, line) for p in split_top(rest)) if rest.strip() else ()
    return Instr(line=line, text=" ".join(text.split()), opcode=opcode, mods=mods, operands=ops,
                 guard=guard)
