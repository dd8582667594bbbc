"""The PTX loader: statements -> a Module of functions (entries and .func), variables and debug lines.

Register scopes: every `{ }` block opens a scope (nvcc's call blocks, inline asm blocks); a
register or .param variable declared inside gets a unique name ("p#3") so that the same name in
two blocks (`.reg .pred p;` in every inline asm block, `param0` in every call block) never
collides. Operands are rewritten to those unique names here, once.

Debug lines: `.loc FILE LINE COL[, function_name F, inlined_at FILE LINE COL]` gives every
following instruction its position; `.file N "path"` names the files. The CUDA source line of an
instruction is its position in the kernel's own source file (the file of the function's first
.loc): the .loc itself when it lies in that file, else the place it was inlined at: the
`inlined_at` attribute, or where a .loc has none the outermost `@[ FILE:LINE:COL ]` of the comment
LLVM writes after it (Triton's PTX: `.loc 2 191 40 // standard.py:191:40 @[ kernels.py:23:19 ]`, a
`tl.max` inlined from triton/language/standard.py into line 23 of the kernel's file).
"""
import re
from dataclasses import dataclass, field

import numpy as np

from ..errors import LayoutsimError
from . import types as T
from .internal import guarded
from .kernel_names import find_entry
from .syntax import Instr, Operand, PtxSyntaxError, parse_instruction, is_int, parse_int, \
    parse_operand, split_top, statements

SPACES = ("global", "shared", "const", "local", "param")
IGNORED_BODY = {".pragma", ".maxnreg", ".maxntid", ".reqntid", ".minnctapersm", ".maxnctapersm",
                ".noreturn", ".callprototype"}     # a prototype: an indirect call checks its own arguments
# a function's address (`mov.u64 %rd, func;`, a .global initialised with a function's name):
# FUNCTION_BASE + 16 * its place among the module's functions, outside every data window (state.py)
FUNCTION_BASE = 0x7B00_0000_0000


class UnsupportedPtx(LayoutsimError):
    """A PTX construct the executor does not model (names itself and its line)."""


@dataclass
class Variable:
    name: str
    space: str
    ptype: object              # PtxType of one element
    count: object = None       # None: scalar; int: array elements; 0: unsized extern array []
    align: int = 0
    vec: int = 1
    init: object = None        # list of raw element bits, or None
    extern: bool = False
    line: int = 0

    @property
    def elem_bytes(self):
        return max(1, self.ptype.bits // 8) * self.vec

    @property
    def size(self):
        return self.elem_bytes * (1 if self.count is None else self.count)

    @property
    def alignment(self):
        return self.align or self.elem_bytes


@dataclass
class Label:
    name: str
    line: int


@dataclass
class Function:
    name: str
    kind: str                       # "entry" or "func"
    params: list = field(default_factory=list)     # Variable (space "param")
    rets: list = field(default_factory=list)
    body: list = field(default_factory=list)       # Instr and Label, in order
    regs: dict = field(default_factory=dict)       # unique register name -> PtxType
    variables: list = field(default_factory=list)  # .shared/.local/.param declared in the body
    directives: dict = field(default_factory=dict)  # maxntid, reqntid, ...
    line: int = 0
    defined: bool = False
    source_file: object = None      # file index of the function's first .loc


@dataclass
class Module:
    version: str = ""
    target: str = ""
    address_size: int = 64
    functions: dict = field(default_factory=dict)
    variables: list = field(default_factory=list)  # module scope
    files: dict = field(default_factory=dict)      # index -> path
    address_taken: set = field(default_factory=set)  # functions whose address is taken
    callers: dict = field(default_factory=dict)    # PTX line of a .loc -> (file name, line) its comment says it is inlined at

    def entries(self):
        return [f.name for f in self.functions.values() if f.kind == "entry" and f.defined]

    def function_address(self, name):
        """The address of a function (None: no function of that name)."""
        names = list(self.functions)
        return FUNCTION_BASE + 16 * names.index(name) if name in self.functions else None

    def entry(self, name):
        """The entry `name` means: its PTX name, or a C++ kernel's source name (kernel_names)."""
        return self.functions[find_entry(self.entries(), name)]

    def cuda_line(self, ins, fn):
        """(path, line) of an instruction in its function's source file, or None."""
        loc = ins.loc
        if not loc or fn.source_file is None:
            return None
        fidx, line, inl, last = loc
        if fidx == fn.source_file and line > 0:
            hit = line
        elif inl and inl[0] == fn.source_file:
            hit = inl[1]
        elif inl and isinstance(inl[0], str) and inl[0] == _base(self.files.get(fn.source_file, "")):
            hit = inl[1]                    # the caller LLVM's comment names (a file name, not an index)
        else:
            hit = last
        if isinstance(hit, tuple):          # the last commented call site if in this file, else the line before
            hit = hit[1] if hit[0] == _base(self.files.get(fn.source_file, "")) else hit[2]
        if not hit:
            return None
        return (self.files.get(fn.source_file, f"file {fn.source_file}"), hit)


# ---- scopes ----------------------------------------------------------------------------------
class _Scope:
    def __init__(self, parent, tag):
        self.parent, self.tag = parent, tag
        self.names, self.ranges, self.regs = {}, {}, set()

    def declare(self, name, count=None, reg=False):
        key = name if not self.tag else f"{name}#{self.tag}"
        if count is None:
            self.names[name] = key
            if reg:
                self.regs.add(name)
            return [(name, key)]
        self.ranges[name] = (count, key)
        return [(f"{name}{i}", f"{key}{i}" if not self.tag else f"{name}{i}#{self.tag}") for i in range(count)]

    def is_reg(self, name):
        s = self
        while s is not None:
            if name in s.names:
                return name in s.regs
            s = s.parent
        return False

    def lookup(self, name):
        s = self
        while s is not None:
            if name in s.names:
                return s.names[name]
            m = re.match(r"^(.*?)(\d+)$", name)
            if m and m.group(1) in s.ranges and int(m.group(2)) < s.ranges[m.group(1)][0]:
                return name if not s.tag else f"{name}#{s.tag}"
            s = s.parent
        return None


def _rename(op, scope):
    if op.kind in ("reg", "sym"):
        key = scope.lookup(op.value)
        kind = "reg" if op.kind == "sym" and key and scope.is_reg(op.value) else op.kind
        return Operand(kind, key, op.neg) if key and (key != op.value or kind != op.kind) else op
    if op.kind == "addr" and op.base is not None:
        return Operand("addr", base=_rename(op.base, scope), offset=op.offset)
    if op.kind in ("vec", "pair", "list", "tref"):
        return Operand(op.kind, tuple(_rename(o, scope) for o in op.value))
    return op


# ---- declarations ----------------------------------------------------------------------------
_DECL = re.compile(r"^((?:\.(?:visible|extern|weak|common)\s+)*)\.(global|shared|const|local|param)\b(.*)$",
                   re.S)


def _attributes(rest, line, what):
    """(.align's byte count as written or None, vector count, type, the rest) from the leading
    `.word`s of a declaration."""
    align, vec, ptype = None, 1, None
    pointer = False
    while rest.startswith("."):
        word, _, rest = rest.partition(" ")
        rest = rest.strip()
        w = word[1:]
        if w == "align":
            num, _, rest = rest.partition(" ")
            rest = rest.strip()
            if not pointer:
                align = num
            # after .ptr, `.align N` is the pointee's alignment (PTX ISA 5.1.6.1, kernel parameter
            # attribute .ptr [.space] [.align N]), not the parameter's: Triton's
            # `.param .u64 .ptr .global .align 1 p` is an 8-byte-aligned .u64
        elif w == "ptr":
            pointer = True
        elif w in ("v2", "v4", "v8"):
            vec = int(w[1:])
        elif w == "ptr" or w in SPACES:
            continue                    # `.ptr .global .align 8` attributes of a kernel parameter
        elif T.is_type(w):
            ptype = T.get(w)
        else:
            raise UnsupportedPtx(f"line {line}: unsupported attribute .{w} in {what}")
    return align, vec, ptype, rest


# the largest .align the model takes: 2**32 is 8x the 512 MiB global memory (launch.MAX_GLOBAL_BYTES),
# so nothing placed at a larger alignment could fit (and the placing arithmetic stays small)
MAX_ALIGN = 1 << 32


def _alignment(text, line, what):
    """The byte count of `.align N` (0 when not given): PTX ISA 9.0, 5.4.5 'Alignment': "The
    alignment value byte-count must be a power of two"."""
    if text is None:
        return 0
    if not is_int(text):
        raise PtxSyntaxError(f"line {line}: .align {text.strip()[:40]!r} of {what}: give a byte count "
                             f"(a power of two)")
    n = parse_int(text, line)
    if n < 1 or n & (n - 1):
        raise PtxSyntaxError(f"line {line}: .align {text.strip()} of {what}: the alignment must be a power "
                             f"of two (1, 2, 4, ...; PTX ISA 5.4.5)")
    if n > MAX_ALIGN:
        raise UnsupportedPtx(f"line {line}: .align {n} of {what}: the model places variables at most "
                             f"{MAX_ALIGN}-byte aligned (its global memory holds 512 MiB)")
    return n


def _parse_decl(text, line):
    """[Variable] from `.shared .align 4 .b8 name[128];` and friends."""
    m = _DECL.match(text)
    if m is None:
        head = text.split(None, 1)[0] if text.strip() else text
        if head == ".reg":
            raise UnsupportedPtx(f"line {line}: .reg parameter {text!r}: only .param parameters are "
                                 f"supported (the ABI nvcc emits)")
        raise PtxSyntaxError(f"line {line}: cannot read declaration {text[:60]!r} (a parameter is "
                             f"`.param .TYPE name`)")
    link, space, rest = m.group(1), m.group(2), m.group(3).strip()
    extern = ".extern" in link
    align_text, vec, ptype, rest = _attributes(rest, line, f"{text.split()[0]} declaration")
    if ptype is None:
        raise PtxSyntaxError(f"line {line}: declaration without a type: {text[:60]!r}")
    out = []
    init_text = None
    if "=" in rest:
        rest, _, init_text = rest.partition("=")
    for item in split_top(rest):
        mm = re.match(r"^([%\w$]+)\s*((?:\[\s*\d*\s*\])*)(<\s*(\d+)\s*>)?$", item.strip())
        if not mm:
            raise PtxSyntaxError(f"line {line}: cannot read declared name {item!r}")
        name, dims = mm.group(1), mm.group(2)
        count = None
        if dims:
            sizes = re.findall(r"\[\s*(\d*)\s*\]", dims)
            count = 1
            for s in sizes:
                count = 0 if s == "" else count * int(s)
            if count > MAX_ELEMENTS:
                raise UnsupportedPtx(f"line {line}: {name}{dims} has {count} elements: the model "
                                     f"takes arrays of at most {MAX_ELEMENTS} elements")
        align = _alignment(align_text, line, f".{space} {name}")
        out.append(Variable(name, space, ptype, count, align, vec, None, extern, line))
    if init_text is not None:
        if len(out) != 1:
            raise PtxSyntaxError(f"line {line}: an initializer needs exactly one declared name")
        out[0].init = _parse_init(init_text.strip(), out[0], line)
    return out


# elements of one declared array: 2**32 is 8x the bytes of global memory (launch.MAX_GLOBAL_BYTES);
# each space is bounded again, in bytes, where it is placed
MAX_ELEMENTS = 1 << 32


def _parse_init(text, var, line):
    if var.ptype.bits > 64:
        raise UnsupportedPtx(f"line {line}: initializer of .{var.ptype.name} {var.name}: the model "
                             f"initializes values of at most 64 bits")
    vals = []

    def walk(t):
        t = t.strip()
        if t.startswith("{"):
            for p in split_top(t[1:-1]):
                walk(p)
            return
        op = parse_operand(t, line)
        if op.kind == "imm":
            vals.append(op.value & ((1 << var.ptype.bits) - 1))
        elif op.kind == "fimm":
            bits, width, _ = op.value
            if width != var.ptype.bits:
                f = np.array([bits], np.uint64).view(np.float64) if width == 64 else \
                    np.array([bits], np.uint32).view(np.float32)
                with np.errstate(invalid="ignore"):       # a NaN given to an integer: as numpy casts
                    bits = int(f.astype(var.ptype.dtype).view(var.ptype.storage)[0])
            vals.append(bits)
        elif op.kind == "sym" and var.ptype.bits == 64:
            vals.append((op.value,))                # a function's address, once every function is known
        else:
            raise UnsupportedPtx(f"line {line}: initializer {t!r} of {var.name} (addresses of "
                                 f"variables in initializers are not supported)")
    walk(text)
    return vals


def _parse_header(text, line):
    m = re.match(r"^((?:\.(?:visible|extern|weak|common)\s+)*)\.(entry|func)\s*(.*)$", text, re.S)
    kind, rest = m.group(2), m.group(3).strip()
    rets = []
    if rest.startswith("("):
        inner, rest = _paren(rest, line)
        rets = _params(inner, line)
    mm = re.match(r"^([\w$]+)\s*(.*)$", rest, re.S)
    if not mm:
        raise PtxSyntaxError(f"line {line}: cannot read function name in {text[:60]!r}")
    name, rest = mm.group(1), mm.group(2).strip()
    params = []
    if rest.startswith("("):
        inner, rest = _paren(rest, line)
        params = _params(inner, line)
    directives = {}
    for d in re.findall(r"(\.\w+)([^.]*)", rest):
        key, val = d[0][1:], d[1].strip()
        try:
            nums = [parse_int(v, line, 0, 1 << 31) for v in split_top(val) if v.strip()] if val else []
        except PtxSyntaxError as e:
            raise PtxSyntaxError(f"{e} (in .{key} {val[:40]!r})") from None
        directives[key] = nums
    return Function(name=name, kind=kind, params=params, rets=rets, directives=directives, line=line)


def _paren(text, line):
    depth = 0
    for i, c in enumerate(text):
        depth += c == "("
        depth -= c == ")"
        if depth == 0:
            return text[1:i], text[i + 1:].strip()
    raise PtxSyntaxError(f"line {line}: unbalanced '(' in function header")


def _params(inner, line):
    out = []
    for p in split_top(inner):
        if p.strip():
            out.extend(_parse_decl(p.strip(), line))
    return out


# ---- the loader ------------------------------------------------------------------------------
@guarded("reading the PTX")
def load(text):
    """Parse PTX text into a Module (syntax errors and unsupported directives name their line)."""
    if not isinstance(text, str):
        raise LayoutsimError(f"ptx: give the PTX text as a string, not {type(text).__name__}")
    mod = Module()
    items = statements(text)
    mod.callers = _commented_callers(text)
    i = 0
    while i < len(items):
        st = items[i]
        if st.kind == "header":
            fn = _parse_header(st.text, st.line)
            fn.defined = True
            i = _body(items, i + 2, fn, mod)
            _add_function(mod, fn)
            continue
        if st.kind in ("open", "close", "label"):
            raise PtxSyntaxError(f"line {st.line}: unexpected {st.text!r} outside a function")
        _module_stmt(st, mod)
        i += 1
    for fn in mod.functions.values():               # functions whose address an instruction takes
        for ins in fn.body:
            if isinstance(ins, Instr) and ins.opcode != "call":
                mod.address_taken.update(o.value for o in ins.operands if o.kind == "sym" and o.value in mod.functions)
    for v in mod.variables:                         # function names in initializers: their addresses
        if v.init and any(isinstance(x, tuple) for x in v.init):
            v.init = [_function_value(mod, x, v) if isinstance(x, tuple) else x for x in v.init]
    return mod


def _function_value(mod, x, v):
    addr = mod.function_address(x[0])
    mod.address_taken.add(x[0])
    if addr is None:
        raise UnsupportedPtx(f"line {v.line}: initializer {x[0]!r} of {v.name} (addresses of variables in "
                             f"initializers are not supported; a function's name is)")
    return addr & ((1 << v.ptype.bits) - 1)


def _add_function(mod, fn):
    old = mod.functions.get(fn.name)
    if old is not None and old.defined and fn.defined:
        raise PtxSyntaxError(f"line {fn.line}: function {fn.name} defined twice (first at line {old.line})")
    if old is None or fn.defined:
        mod.functions[fn.name] = fn


def _module_stmt(st, mod):
    text, line = st.text, st.line
    head = text.split(None, 1)[0]
    words = text.split()
    if head in (".version", ".target", ".address_size") and len(words) < 2:
        example = {".version": "8.0", ".target": "sm_90", ".address_size": "64"}[head]
        raise PtxSyntaxError(f"line {line}: {head} without a value (as in `{head} {example}`)")
    if head == ".version":
        if len(words) != 2 or not re.match(r"^\d+\.\d+$", words[1]):
            raise PtxSyntaxError(f"line {line}: cannot read {text[:60]!r}: give `.version MAJOR.MINOR`")
        mod.version = words[1]
    elif head == ".target":
        mod.target = text.split(None, 1)[1].strip()
    elif head == ".address_size":
        if len(words) != 2 or words[1] not in ("32", "64"):
            raise PtxSyntaxError(f"line {line}: cannot read {text[:60]!r}: .address_size is 32 or 64")
        mod.address_size = int(words[1])
        if mod.address_size != 64:
            raise UnsupportedPtx(f"line {line}: .address_size {mod.address_size}: only 64-bit "
                                 f"addressing is modelled")
    elif head == ".file":
        m = re.match(r'^\.file\s+(\d+)\s+"([^"]*)"', text)
        if not m:
            raise PtxSyntaxError(f"line {line}: cannot read {text!r}")
        mod.files[int(m.group(1))] = m.group(2)
    elif _DECL.match(text) and not re.search(r"\.(entry|func)\b", text):
        for v in _parse_decl(text, line):
            if v.space in ("local", "param"):
                raise UnsupportedPtx(f"line {line}: module-scope .{v.space} variable {v.name}")
            mod.variables.append(v)
    elif re.match(r"^((?:\.(?:visible|extern|weak|common)\s+)*)\.(entry|func)\b", text):
        fn = _parse_header(text, line)              # a prototype: declared, defined elsewhere
        _add_function(mod, fn)
    elif head in (".pragma", ".alias"):
        raise UnsupportedPtx(f"line {line}: unsupported directive {head}")
    else:
        raise UnsupportedPtx(f"line {line}: unsupported directive or statement {text.split(None, 1)[0]!r}")


def _body(items, i, fn, mod):
    """Parse a function body starting after its '{'; returns the index after the closing '}'."""
    root = _Scope(None, "")
    for p in fn.params + fn.rets:
        root.declare(p.name)
    # labels are scoped by block like registers (every inline asm block of nvcc's may have its
    # own `WAIT:`), and a branch may name one further down its block: each block declares its
    # labels when it opens
    block_labels = _block_labels(items, i, fn)
    for name in block_labels[0]:
        root.declare(name)
    scope, depth, tags = root, 1, [0]
    loc, last_user = None, 0
    while i < len(items):
        st = items[i]
        i += 1
        if st.kind == "open":
            tags[0] += 1
            scope = _Scope(scope, str(tags[0]))
            for name in block_labels[tags[0]]:
                scope.declare(name)
            depth += 1
            continue
        if st.kind == "close":
            depth -= 1
            if depth == 0:
                return i
            scope = scope.parent
            continue
        if st.kind == "label":
            fn.body.append(Label(scope.names[st.text], st.line))
            continue
        text = st.text
        if text.startswith("."):
            head = text.split(None, 1)[0]
            if head == ".reg":
                _declare_regs(text, st.line, scope, fn)
            elif head == ".loc":
                loc, last_user = _loc(text, st.line, fn, last_user, mod.callers.get(st.line))
            elif _DECL.match(text):
                for v in _parse_decl(text, st.line):
                    if v.space in ("global", "const"):
                        raise UnsupportedPtx(f"line {st.line}: .{v.space} variable {v.name} declared "
                                             f"inside a function")
                    key = scope.declare(v.name)[0][1]
                    v.name = key
                    fn.variables.append(v)
            elif head in IGNORED_BODY:
                pass
            else:
                raise UnsupportedPtx(f"line {st.line}: unsupported directive {head}")
            continue
        ins = parse_instruction(text, st.line)
        ins.operands = tuple(_rename(o, scope) for o in ins.operands)
        if ins.guard:
            key = scope.lookup(ins.guard[0])
            ins.guard = (key or ins.guard[0], ins.guard[1])
        ins.loc = loc
        fn.body.append(ins)
    raise PtxSyntaxError(f"line {fn.line}: body of {fn.name} is not closed")


def _block_labels(items, i, fn):
    """{block number: [label names]} of a body from items[i] on (0: the body itself; blocks are
    numbered in the order they open, as _body numbers them); a label defined twice in one block
    is refused."""
    out, open_blocks, seen, n = {0: []}, [0], {}, 0
    for st in items[i:]:
        if st.kind == "open":
            n += 1
            out[n] = []
            open_blocks.append(n)
        elif st.kind == "close":
            open_blocks.pop()
            if not open_blocks:
                break
        elif st.kind == "label":
            key = (open_blocks[-1], st.text)
            if key in seen:
                raise PtxSyntaxError(f"line {st.line}: label {st.text} defined twice in one block of {fn.name} "
                                     f"(first at line {seen[key]})")
            seen[key] = st.line
            out[open_blocks[-1]].append(st.text)
    return out


# Virtual registers one function may declare: 39x the most in the kernels here (%r<3330>); each
# is a Python name and, when run, an array over every thread of a batch
MAX_REGISTERS = 1 << 17


def _declare_regs(text, line, scope, fn):
    _, vec, ptype, rest = _attributes(text[len(".reg"):].strip(), line, ".reg declaration")
    if ptype is None:
        raise PtxSyntaxError(f"line {line}: .reg without a type")
    if vec != 1:
        raise UnsupportedPtx(f"line {line}: vector registers (.reg .v{vec}) are not supported")
    if ptype.bits > 64 and ptype.name != "b128":
        raise UnsupportedPtx(f"line {line}: .reg .{ptype.name}: the model has registers of at most 64 bits")
    for item in split_top(rest):
        m = re.match(r"^([%\w$]+)\s*(?:<\s*(\d+)\s*>)?$", item.strip())
        if not m:
            raise PtxSyntaxError(f"line {line}: cannot read register name {item!r}")
        count = int(m.group(2)) if m.group(2) else None
        if len(fn.regs) + (count or 1) > MAX_REGISTERS:     # before %r<N> is expanded into N names
            raise UnsupportedPtx(f"line {line}: {fn.name} declares more than {MAX_REGISTERS} registers "
                                 f"({item.strip()!r}); the model keeps an array per register")
        for _, key in scope.declare(m.group(1), count, reg=True):
            fn.regs[key] = ptype


_CALLER = re.compile(r"@\[\s*([^\s:@\[\]]+):(\d+):\d+")


def _base(path):
    return str(path).replace("\\", "/").rsplit("/", 1)[-1]


def _commented_callers(text):
    """{PTX line: (file name, line)}: the outermost call site of each `.loc ... // ... @[ F:L:C ]`."""
    out = {}
    for n, raw in enumerate(text.splitlines(), 1):
        if "@[" in raw and raw.lstrip().startswith(".loc"):
            sites = _CALLER.findall(raw.split("//", 1)[-1])
            if sites:
                out[n] = (_base(sites[-1][0]), int(sites[-1][1]))
    return out


def _loc(text, line, fn, last_user, caller=None):
    m = re.match(r"^\.loc\s+(\d+)\s+(\d+)\s+(\d+)(.*)$", text)
    if not m:
        raise PtxSyntaxError(f"line {line}: cannot read {text!r}")
    f, ln = int(m.group(1)), int(m.group(2))
    inl = caller
    mi = re.search(r"inlined_at\s+(\d+)\s+(\d+)\s+(\d+)", m.group(4))
    if mi:
        inl = (int(mi.group(1)), int(mi.group(2)))
    if fn.source_file is None:
        fn.source_file = f
    if f == fn.source_file and ln > 0:
        last_user = ln
    elif inl and (inl[0] == fn.source_file or isinstance(inl[0], str)):
        # a commented call site is checked by its file's name later, the kernel line before it kept
        before = last_user[2] if isinstance(last_user, tuple) else last_user
        last_user = inl[1] if inl[0] == fn.source_file else (inl[0], inl[1], before)
    return (f, ln, inl, last_user), last_user


def all_instructions(fn):
    return [x for x in fn.body if isinstance(x, Instr)]
