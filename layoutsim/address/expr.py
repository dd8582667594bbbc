"""The address-expression language: integer expressions in `lane` and named variables.

Expressions are parsed with `ast` and checked against a whitelist (integers, + - * // % << >>
& | ^ ~, parentheses, `lane` and named variables), then evaluated with numpy over the lanes (32;
64 for a CDNA wave64 LDS access): user text is never passed to eval. Every value an expression
takes stays within 2**48 (MAX_ABS), so no step can wrap around in int64.
"""
import ast

import numpy as np

from ..errors import LayoutsimError, suggest

LANES = 32
_MAX_TEXT = 2000
_MAX_DEPTH = 200          # operators nested deeper than this are refused before evaluation
MAX_ABS = 1 << 48         # every value an expression (or an offset list) may take: far beyond any
                          # shared memory, far inside int64, so no step can wrap around

_BINOPS = {ast.Add: ("+", np.add), ast.Sub: ("-", np.subtract), ast.Mult: ("*", np.multiply),
           ast.FloorDiv: ("//", np.floor_divide), ast.Mod: ("%", np.mod),
           ast.LShift: ("<<", np.left_shift), ast.RShift: (">>", np.right_shift),
           ast.BitAnd: ("&", np.bitwise_and), ast.BitOr: ("|", np.bitwise_or),
           ast.BitXor: ("^", np.bitwise_xor)}
_UNARY = {ast.USub: np.negative, ast.UAdd: lambda x: x, ast.Invert: np.invert}
_ALLOWED = "integers, + - * // % << >> & | ^ ~, parentheses, names"


class Expr:
    """A parsed, whitelisted integer expression; call it with name=value (arrays broadcast)."""

    def __init__(self, text, names=("lane",)):
        if not isinstance(text, str):
            raise LayoutsimError(f"expression must be text, not {type(text).__name__}")
        if len(text) > _MAX_TEXT:
            raise LayoutsimError(f"expression is {len(text)} characters long; the limit is {_MAX_TEXT}")
        self.text = text.strip()
        try:
            tree = ast.parse(self.text, mode="eval")
        except SyntaxError as e:
            raise LayoutsimError(f"cannot parse expression {self.text!r}: {e.msg}") from None
        except (RecursionError, MemoryError, ValueError):
            raise LayoutsimError(f"expression {self.text[:40]!r}... is too deeply nested") from None
        self.names = set()
        try:
            self._check(tree.body, 0)
        except RecursionError:
            raise LayoutsimError(f"expression {self.text[:40]!r}... is too deeply nested") from None
        self.tree = tree.body
        self.known = tuple(names)

    def _check(self, node, depth):
        if depth > _MAX_DEPTH:
            raise LayoutsimError(f"expression {self.text[:40]!r}... nests operators more than "
                                 f"{_MAX_DEPTH} deep")
        depth += 1
        if isinstance(node, ast.BinOp):
            if type(node.op) not in _BINOPS:
                sym = {ast.Div: "/ (use // for integer division)", ast.Pow: "**",
                       ast.MatMult: "@"}.get(type(node.op), type(node.op).__name__)
                raise LayoutsimError(f"operator {sym} is not allowed in {self.text!r}; allowed: {_ALLOWED}")
            self._check(node.left, depth)
            self._check(node.right, depth)
        elif isinstance(node, ast.UnaryOp):
            if type(node.op) not in _UNARY:
                raise LayoutsimError(f"operator 'not' is not allowed in {self.text!r}; allowed: {_ALLOWED}")
            self._check(node.operand, depth)
        elif isinstance(node, ast.Constant):
            if isinstance(node.value, bool) or not isinstance(node.value, int):
                raise LayoutsimError(f"{node.value!r} in {self.text!r} is not an integer; allowed: {_ALLOWED}")
            if abs(node.value) > MAX_ABS:
                raise LayoutsimError(f"constant {node.value} in {self.text!r} is too large (limit 2**48)")
        elif isinstance(node, ast.Name):
            self.names.add(node.id)
        else:
            what = type(node).__name__
            raise LayoutsimError(f"{what} ({ast.get_source_segment(self.text, node) or what}) is not "
                                 f"allowed in {self.text!r}; allowed: {_ALLOWED}")

    def __call__(self, **env):
        # only the names the expression reads are looked at: parse_variables calls this once per
        # variable with every earlier one, so touching all of env would make n variables cost n**2
        missing = sorted(n for n in self.names if n not in env)
        if missing:
            name = missing[0]
            known = sorted(set(env))
            raise LayoutsimError(f"unknown name {name!r} in {self.text!r}{suggest(name, known)}; "
                                 f"known: {', '.join(known) or 'none'} (give others as variables: NAME=VALUE)")
        vals = {k: int64_values(env[k], f"value of {k!r}", MAX_ABS) for k in self.names}
        with np.errstate(all="ignore"):
            return np.asarray(self._eval(self.tree, vals), dtype=np.int64)

    def _eval(self, node, env):
        if isinstance(node, ast.Constant):
            return np.int64(node.value)
        if isinstance(node, ast.Name):
            return env[node.id]
        if isinstance(node, ast.UnaryOp):
            return self._range(_UNARY[type(node.op)](self._eval(node.operand, env)))
        sym, fn = _BINOPS[type(node.op)]
        a, b = self._eval(node.left, env), self._eval(node.right, env)
        if sym in ("//", "%") and np.any(np.asarray(b) == 0):
            raise LayoutsimError(f"division by zero in {self.text!r}")
        if sym in ("<<", ">>") and (np.any(np.asarray(b) < 0) or np.any(np.asarray(b) > 48)):
            raise LayoutsimError(f"shift count outside 0..48 in {self.text!r}")
        # operands are within 2**48, so + - & | ^ >> // % cannot leave int64; * and << can, and
        # would wrap silently: bound their exact result (powers of two and products of numbers
        # below 2**53 are exact in float64) before computing it
        if sym in ("*", "<<"):
            fa = np.abs(np.asarray(a, dtype=np.float64))
            fb = np.abs(np.asarray(b, dtype=np.float64)) if sym == "*" else np.exp2(np.asarray(b, dtype=np.float64))
            if np.any(fa * fb > MAX_ABS):
                raise LayoutsimError(f"value out of range (beyond 2**48) in {self.text!r}")
        return self._range(fn(a, b))

    def _range(self, v):
        if np.any(np.abs(np.asarray(v)) > MAX_ABS):
            raise LayoutsimError(f"value out of range (beyond 2**48) in {self.text!r}")
        return v


def int64_values(values, what, bound):
    """int64 array of `values` (ints or nested lists of them), each within +-bound."""
    a = None
    try:
        a = np.asarray(values)
    except (ValueError, TypeError):
        pass
    if a is None or a.dtype.kind not in "iu":         # object: Python ints beyond 64 bits
        raise LayoutsimError(f"{what}: give integers within +-2**48, not {short_repr(values)}")
    if a.size and (a.max() > bound or a.min() < -bound):
        raise LayoutsimError(f"{what}: {short_repr(values)} is beyond +-2**48")
    return a.astype(np.int64)


def short_repr(values):
    text = repr(values)
    return text if len(text) <= 60 else text[:57] + "..."


# variables one access may define: an expression has at most _MAX_TEXT characters, so it names
# at most ~1000 of them; more have no use (and each costs a parse)
MAX_VARIABLES = 1000


def parse_variables(items):
    """{'stride': 144} from ['stride=144', ...] (values may be expressions of earlier names);
    time linear in the number of items, at most MAX_VARIABLES of them."""
    items = list(items or ())
    if len(items) > MAX_VARIABLES:
        raise LayoutsimError(f"{len(items)} variables (--var) given; at most {MAX_VARIABLES} (an expression "
                             f"of at most {_MAX_TEXT} characters cannot use more)")
    out = {}
    for item in items:
        if "=" not in item:
            raise LayoutsimError(f"variable {item!r}: write NAME=VALUE, e.g. stride=144")
        name, text = (s.strip() for s in item.split("=", 1))
        if not name.isidentifier() or name == "lane":
            raise LayoutsimError(f"variable name {name!r} is not a plain name (or is the reserved 'lane')")
        out[name] = int(Expr(text)(**out))
    return out


def lane_offsets(text, lanes=LANES, **variables):
    """int64[lanes]: the expression evaluated for lane = 0..lanes-1 (32; CDNA wave64: 64)."""
    e = Expr(text)
    if "lane" in variables:
        raise LayoutsimError("'lane' is set by the model (0..31); it cannot be a variable")
    v = e(lane=np.arange(lanes, dtype=np.int64), **variables)
    return np.broadcast_to(v, (lanes,)).astype(np.int64).copy()

