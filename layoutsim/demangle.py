"""Itanium C++ ABI demangling of what CUDA kernel names use, with no external tool.

    demangle("_Z5scaleIfEvPT_")      -> "void scale<float>(float*)"   (as c++filt prints it)
    parts("_ZN2ns5scaleIfEEvPT_")    -> Parts(full="void ns::scale<float>(float*)",
                                              signature="ns::scale<float>(float*)",
                                              name="ns::scale<float>", base="ns::scale")
    demangle("_Zbogus")              -> None  (cannot demangle: callers keep the mangled name)

Covered (https://itanium-cxx-abi.github.io/cxx-abi/abi.html#mangling): function encodings with
their parameter types; nested names (N...E, with const/volatile), the anonymous namespace,
local names (Z...E) with lambda closures (Ul...E_) and unnamed types (Ut_), ABI tags (B);
template arguments (I...E) with types, literals (Li32E, Lb1E, Lj4u, an enum's (ns::Mode)1, an
external name L_Z...E) and packs (J...E, Dp); builtin types; pointers, references,
const/volatile/restrict, arrays, function types; substitutions (S_, S0_, ...) and template
parameters (T_, T0_, ...); the std:: abbreviations (St, Sa, Sb, Ss, Si, So, Sd). Anything else
(expressions X...E, operator names, vendor extensions, special names such as _ZTV) is reported
as not demangled. Output follows binutils c++filt (`float const*`, `> >`).
"""
import re
from dataclasses import dataclass

BUILTIN = {"v": "void", "w": "wchar_t", "b": "bool", "c": "char", "a": "signed char", "h": "unsigned char",
           "s": "short", "t": "unsigned short", "i": "int", "j": "unsigned int", "l": "long",
           "m": "unsigned long", "x": "long long", "y": "unsigned long long", "n": "__int128",
           "o": "unsigned __int128", "f": "float", "d": "double", "e": "long double", "g": "__float128",
           "z": "..."}
BUILTIN_D = {"Dh": "half", "Di": "char32_t", "Ds": "char16_t", "Du": "char8_t", "Dn": "decltype(nullptr)",
             "Da": "auto", "Dc": "decltype(auto)", "DF16_": "_Float16"}
LITERAL_SUFFIX = {"i": "", "j": "u", "l": "l", "m": "ul", "x": "ll", "y": "ull"}
_TRAITS = "<char, std::char_traits<char> >"
STD = {"Sa": "std::allocator", "Sb": "std::basic_string",
       "Ss": "std::basic_string<char, std::char_traits<char>, std::allocator<char> >",
       "Si": "std::basic_istream" + _TRAITS, "So": "std::basic_ostream" + _TRAITS,
       "Sd": "std::basic_iostream" + _TRAITS}
MAX_INPUT = 1 << 16          # characters of a mangled name
MAX_OUTPUT = 1 << 16         # characters of a demangled one (substitutions can repeat a type)
MAX_DEPTH = 256              # nesting of the grammar


class _Fail(Exception):
    pass


@dataclass(frozen=True)
class Parts:
    full: str                # the whole signature, as c++filt prints it
    signature: str           # the same without the return type: ns::scale<float>(float*)
    name: str                # the qualified name with its template arguments: ns::scale<float>
    base: str                # without the template arguments: ns::scale


# ---- type nodes: printed around a declarator (c++filt's `float (*) [4]`, `void (*)(int)`) ------
class _Node:
    def show(self, p, decl=""):
        raise NotImplementedError


@dataclass(eq=False)
class _Name(_Node):
    text: str

    def show(self, p, decl=""):
        return self.text + decl


@dataclass(eq=False)
class _Qual(_Node):
    inner: _Node
    quals: str               # " const", " volatile", " restrict" in c++filt's order

    def show(self, p, decl=""):
        return p.show(self.inner, self.quals + decl)


@dataclass(eq=False)
class _Ptr(_Node):
    inner: _Node
    sym: str                 # "*", "&", "&&"

    def show(self, p, decl=""):
        wrap = isinstance(p.resolve(self.inner), (_Func, _Array))
        if not wrap:
            return p.show(self.inner, self.sym + decl)
        # c++filt's spacing inside the parentheses: int (*(*)(int))(), int (**(*)(int))(),
        # int (&& (*)(int))(), int (&&*(*)(int))()
        decl = re.sub(r"(?<=\*) (?=\()", "", decl)
        if self.sym == "*":
            decl = re.sub(r"^ (?=\()", "", decl)
        return p.show(self.inner, f"({self.sym}{decl})")


@dataclass(eq=False)
class _Func(_Node):
    ret: _Node
    params: list

    def show(self, p, decl=""):
        return p.show(self.ret, f" {decl}({p.params(self.params)})" if decl else f" ({p.params(self.params)})")


@dataclass(eq=False)
class _Array(_Node):
    inner: _Node
    dim: str

    def show(self, p, decl=""):
        if decl.endswith("]"):                    # the next dimension of a multi-dimensional array
            return p.show(self.inner, f"{decl}[{self.dim}]")
        return p.show(self.inner, f" {decl.lstrip()} [{self.dim}]" if decl else f" [{self.dim}]")


@dataclass(eq=False)
class _Param(_Node):
    index: int
    scope: list              # [template args of the encoding], filled once its name is read

    def show(self, p, decl=""):
        return p.show(p.resolve(self), decl)


@dataclass(eq=False)
class _Pack(_Node):
    items: list

    def show(self, p, decl=""):
        return ", ".join(p.show(i, decl) for i in self.items)


@dataclass(eq=False)
class _Expansion(_Node):          # Dp: one copy of the pattern per element of the pack it names
    pattern: _Node

    def show(self, p, decl=""):
        return p.show(self.pattern, decl)


class _Printer:
    def __init__(self):
        self.element = None       # (pack, i) while a pack expansion prints its i-th copy

    def resolve(self, node):
        seen = 0
        while isinstance(node, _Param):
            args = node.scope[0]
            if args is None or node.index >= len(args):
                raise _Fail("template parameter out of scope")
            node = args[node.index]
            if isinstance(node, _Pack):           # a pack stands only inside its expansion (Dp)
                if not (self.element and self.element[0] is node):
                    raise _Fail("a template parameter pack outside a pack expansion")
                node = node.items[self.element[1]]
            seen += 1
            if seen > MAX_DEPTH:
                raise _Fail("template parameters refer to each other")
        return node

    def show(self, node, decl=""):
        if isinstance(node, _Expansion):
            pack = self._pack_of(node.pattern, 0)
            if pack is None:
                raise _Fail("a pack expansion of no template parameter pack")
            outer, out = self.element, []
            for i in range(len(pack.items)):
                self.element = (pack, i)
                out.append(node.pattern.show(self, decl))
            self.element = outer
            text = ", ".join(out)
        else:
            text = node.show(self, decl)
        if len(text) > MAX_OUTPUT:
            raise _Fail("demangled name too long")
        return text

    def _pack_of(self, node, depth):
        if depth > MAX_DEPTH:
            raise _Fail("too deep")
        if isinstance(node, _Param):
            args = node.scope[0] or []
            target = args[node.index] if node.index < len(args) else None
            return target if isinstance(target, _Pack) else None
        for child in (getattr(node, "inner", None), getattr(node, "ret", None), *getattr(node, "params", ())):
            if isinstance(child, _Node):
                found = self._pack_of(child, depth + 1)
                if found is not None:
                    return found
        return None

    def params(self, params):
        shown = [t for t in (self.show(t) for t in params) if t]
        return "" if shown == ["void"] else ", ".join(shown)

    def targs(self, args):
        text = ", ".join(t for t in (self.show(a) for a in args) if t)
        return f"<{text} >" if text.endswith(">") else f"<{text}>"


# ---- the parser --------------------------------------------------------------------------------
class _Parser:
    def __init__(self, text):
        self.s, self.i, self.depth = text, 0, 0
        self.subs = []                         # substitution candidates, in order
        self.scope = None                      # the template arguments T_ refers to (see _Param)
        self.member_quals = ""
        self.p = _Printer()

    def peek(self, n=1):
        return self.s[self.i:self.i + n]

    def eat(self, token):
        if self.s.startswith(token, self.i):
            self.i += len(token)
            return True
        return False

    def need(self, token):
        if not self.eat(token):
            raise _Fail(f"expected {token!r} at {self.i}")

    def enter(self):
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _Fail("nested too deep")

    def number(self):
        j = self.i
        while self.i < len(self.s) and self.s[self.i].isdigit():
            self.i += 1
        if j == self.i:
            raise _Fail(f"expected a number at {j}")
        return int(self.s[j:self.i])

    def seq(self, end="_"):
        """The index of S_/S<seq>_ and T_/T<n>_: none -> 0, base-36 n -> n + 1."""
        j = self.i
        while self.i < len(self.s) and (self.s[self.i].isdigit() or "A" <= self.s[self.i] <= "Z"):
            self.i += 1
        text = self.s[j:self.i]
        self.need(end)
        return int(text, 36) + 1 if text else 0

    # <encoding> ::= <name> <bare-function-type>
    def encoding(self):
        self.enter()
        scope = [None]
        outer, self.scope = self.scope, scope
        self.member_quals = ""
        name, base, args = self.name()
        quals, self.member_quals = self.member_quals, ""
        scope[0] = args
        types = []
        while self.i < len(self.s) and self.peek() not in ("E", "."):
            types.append(self.type())
        self.scope = outer
        self.depth -= 1
        ret = ""
        if args is not None and types:               # a template's encoding starts with its return type
            if len(types) < 2:
                raise _Fail("a function template's encoding needs a return type and parameters")
            ret = self.p.show(types.pop(0)) + " "
        if not types:                                # a variable (special names are not covered)
            if quals:
                raise _Fail("a qualified name without parameter types")
            return Parts(full=name, signature=name, name=name, base=base)
        signature = f"{name}({self.p.params(types)}){quals}"
        return Parts(full=ret + signature, signature=signature, name=name, base=base)

    # <name>: (qualified name with template args, without the last ones, the last template args)
    def name(self):
        self.enter()
        try:
            if self.eat("N"):
                return self.nested()
            if self.peek() == "Z":
                return self.local()
            if self.peek(2) in STD:
                text = STD[self.peek(2)]
                self.i += 2
                if self.peek() != "I":
                    raise _Fail("a std abbreviation is a template or a type here")
                return self.with_args(text, add=False)
            std = "std::" if self.eat("St") else ""
            if self.peek() == "S":
                node = self.substitution()
                return self.with_args(self.p.show(node), add=False)
            text = std + self.unqualified()
            return self.with_args(text, add=True) if self.peek() == "I" else (text, text, None)
        finally:
            self.depth -= 1

    def with_args(self, text, add):
        if add:
            self.subs.append(_Name(text))          # <unscoped-template-name>
        args = self.template_args()
        full = text + self.p.targs(args)
        return full, text, args

    def nested(self):
        quals = self.cv()
        if self.peek() in ("R", "O"):
            raise _Fail("ref-qualified member functions are not covered")
        text, base, args, known = "", "", None, False
        while not self.eat("E"):
            if self.i >= len(self.s):
                raise _Fail("unterminated nested name")
            if text and not known:
                self.subs.append(_Name(text))       # every prefix is a candidate, once
            known = False
            if self.peek() == "I":
                if not text:
                    raise _Fail("template arguments without a name")
                args = self.template_args()
                base, text = text, text + self.p.targs(args)
                continue
            args = None
            if not text and self.eat("St"):
                part, known = "std", True           # `std` alone is never a candidate
            elif not text and self.peek() == "S":   # a substitution stands only first
                part, known = self.p.show(self.substitution()), True
            elif self.peek() == "T":
                part = self.p.show(self.template_param())
            else:
                part = self.unqualified()
            text = base = f"{text}::{part}" if text else part
        if not text:
            raise _Fail("empty nested name")
        self.member_quals = quals                  # a const member function: after its parameters
        return text, base, args

    def local(self):
        self.need("Z")
        enc = self.encoding()
        self.need("E")
        if self.eat("s"):
            entity = "string literal"
        else:
            entity, _, _ = self.name()
        self.discriminator()
        text = f"{enc.full}::{entity}"
        return text, text, None

    def discriminator(self):
        if self.eat("__"):
            self.number()
            self.need("_")
        elif self.eat("_"):
            self.number()

    def unqualified(self):
        if self.eat("Ut"):
            return f"{{unnamed type#{self.ordinal()}}}"
        if self.eat("Ul"):
            params = [self.type()]
            while not self.eat("E"):
                params.append(self.type())
            return f"{{lambda({self.p.params(params)})#{self.ordinal()}}}"
        c = self.peek()
        if not c.isdigit():
            raise _Fail(f"unsupported name at {self.i} ({self.s[self.i:self.i + 8]!r})")
        n = self.number()
        ident = self.s[self.i:self.i + n]
        if n == 0 or len(ident) != n:
            raise _Fail("empty name, or a name running past the end")
        self.i += n
        text = "(anonymous namespace)" if ident.startswith("_GLOBAL__N") else ident
        while self.eat("B"):                        # ABI tag
            n = self.number()
            if n == 0 or self.i + n > len(self.s):
                raise _Fail("empty ABI tag")
            text += f"[abi:{self.s[self.i:self.i + n]}]"
            self.i += n
        return text

    def ordinal(self):
        """The `[<number>] _` closing Ut/Ul: none -> 1, n -> n + 2 (decimal)."""
        n = self.number() + 2 if self.peek().isdigit() else 1
        self.need("_")
        return n

    def cv(self):
        """r V K (the mangling's order), shown as c++filt does: const volatile restrict."""
        got = [word for code, word in (("r", " restrict"), ("V", " volatile"), ("K", " const")) if self.eat(code)]
        return "".join(reversed(got))

    def substitution(self):
        if self.peek(2) in STD:
            node = _Name(STD[self.peek(2)])
            self.i += 2
            return node
        self.need("S")
        k = self.seq()
        if k >= len(self.subs):
            raise _Fail(f"substitution S{k} out of range")
        return self.subs[k]

    def template_param(self):
        self.need("T")
        return _Param(self.seq(), self.scope)

    def template_args(self):
        self.need("I")
        args = []
        while not self.eat("E"):
            if self.i >= len(self.s):
                raise _Fail("unterminated template arguments")
            args.append(self.template_arg())
        return args

    def template_arg(self):
        self.enter()
        try:
            if self.eat("J"):
                items = []
                while not self.eat("E"):
                    items.append(self.template_arg())
                return _Pack(items)
            if self.peek() == "L":
                return self.literal()
            if self.peek() == "X":
                raise _Fail("expressions are not covered")
            return self.type()
        finally:
            self.depth -= 1

    def literal(self):
        self.need("L")
        if self.eat("_Z"):
            enc = self.encoding()
            self.need("E")
            return _Name(enc.full)
        code = self.peek()
        if code in "vzfdeg":
            raise _Fail("only integer, bool, character and enum literals are covered")
        if code in BUILTIN:
            self.i += 1
            tname = BUILTIN[code]
        else:
            tname = self.p.show(self.type())
            code = None
        neg = self.eat("n")
        j = self.i
        while self.i < len(self.s) and self.s[self.i] not in "E":
            self.i += 1
        value = ("-" if neg else "") + self.s[j:self.i]
        self.need("E")
        if not value.lstrip("-").isdigit():
            raise _Fail("only integer literals are covered")
        if code == "b" and value in ("0", "1"):
            return _Name("true" if value == "1" else "false")
        if code in LITERAL_SUFFIX:
            return _Name(value + LITERAL_SUFFIX[code])
        return _Name(f"({tname}){value}")

    # <type>
    def type(self):
        self.enter()
        try:
            return self._type()
        finally:
            self.depth -= 1

    def _type(self):
        c = self.peek()
        if c in BUILTIN:
            self.i += 1
            return _Name(BUILTIN[c])
        for code, word in BUILTIN_D.items():
            if self.eat(code):
                return _Name(word)
        if c in "rVK":
            quals = self.cv()
            if self.peek() in ("r", "V", "K"):
                raise _Fail("qualifiers out of order or repeated")
            node = _Qual(self.type(), quals)
            if isinstance(node.inner, (_Func, _Array)):
                raise _Fail("qualified function and array types are not covered")
        elif c in "PRO":
            self.i += 1
            node = _Ptr(self.type(), {"P": "*", "R": "&", "O": "&&"}[c])
            if c != "P" and isinstance(node.inner, _Ptr) and node.inner.sym != "*":
                raise _Fail("a reference to a reference (collapsing is not covered)")
        elif c == "F":
            self.i += 1
            self.eat("Y")
            ret, params = self.type(), []
            while not self.eat("E"):
                if self.peek(2) in ("RE", "OE"):
                    raise _Fail("ref-qualified function types are not covered")
                params.append(self.type())
            if not params or isinstance(ret, (_Func, _Array)):
                raise _Fail("a function type needs its parameter types (v for none) and cannot return "
                            "a function or an array")
            node = _Func(ret, params)
        elif c == "A":
            self.i += 1
            j = self.i
            while self.peek().isdigit():
                self.i += 1
            dim = self.s[j:self.i]                   # as written (c++filt keeps leading zeros)
            self.need("_")
            node = _Array(self.type(), dim)
        elif self.eat("Dp"):
            node = _Expansion(self.type())
        elif c == "T":
            node = self.template_param()
            if self.peek() == "I":                   # a template template parameter's instance
                self.subs.append(node)
                node = _Name(self.p.show(node) + self.p.targs(self.template_args()))
        elif c == "S" and self.peek(2) not in ("St",):
            node = self.substitution()
            if self.peek() != "I":
                return node                          # a substitution is not a new candidate
            node = _Name(self.p.show(node) + self.p.targs(self.template_args()))
        elif c.isdigit() or c in "NZ" or self.peek(2) == "St":
            node = _Name(self.name()[0])
            if self.member_quals:
                raise _Fail("a qualified nested name stands only for a member function")
        else:
            raise _Fail(f"unsupported type at {self.i} ({self.s[self.i:self.i + 8]!r})")
        self.subs.append(node)
        return node


def parts(mangled):
    """Parts(full, signature, name, base) of an Itanium-mangled function name, or None when it is not one
    or uses what this demangler does not cover. An unmangled name (extern "C") is its own Parts."""
    if not isinstance(mangled, str) or len(mangled) > MAX_INPUT:
        return None
    if not mangled.startswith("_Z"):
        return Parts(mangled, mangled, mangled, mangled) if mangled.isidentifier() else None
    p = _Parser(mangled)
    p.i = 2
    try:
        out = p.encoding()
    except (_Fail, RecursionError, ValueError, IndexError):
        return None
    return out if p.i == len(mangled) else None


def demangle(mangled):
    """The demangled signature (c++filt's spelling), the name itself when it is not mangled,
    or None when it cannot be demangled."""
    got = parts(mangled)
    return got.full if got else None
