"""Where a warp's addresses come from: expressions in `lane`, tile layouts, fragments.

Expressions are parsed with `ast` and checked against a whitelist (integers, + - * // % << >>
& | ^ ~, parentheses, `lane` and named variables), then evaluated with numpy over the lanes (32; 64 for a CDNA wave64 LDS access):
user text is never passed to eval.

Tile layouts (element (row, col) -> byte offset):
  * row-major with a pitch (elements per row in memory) or a padding (pitch = cols + pad);
  * CuTe `Swizzle<B,M,S>`: XOR bits [M+S, M+S+B) of the element offset into bits [M, M+B)
    (cute/swizzle.hpp; S may be negative, |S| >= B);
  * a general XOR swizzle: a list of (source bit, destination bit) pairs.
A tile plus an instruction generates addresses: `fragment_offsets` (the ldmatrix/stmatrix that
loads an mma fragment at a tile position, derived from the catalog's fragment tables),
`block_offsets` (ldmatrix/stmatrix over 8x8 blocks) and `fill_offsets` (row-wise vector loads
or stores covering the tile, e.g. the 128-bit stores that fill it from global memory).
"""
import ast
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from ..errors import LayoutsimError, integer, suggest
from ..formats import FORMATS
from ..inputs import parse_int

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
        vals = {k: _int64(env[k], f"value of {k!r}", MAX_ABS) for k in self.names}
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


def largest_shared_memory():
    """The most shared memory (LDS) any known arch gives one block, in bytes: no tile is larger."""
    from .. import archs
    from .model import memory_limit
    return max(memory_limit(a)[0] for a in archs.ALL)


def _int64(values, what, bound):
    """int64 array of `values` (ints or nested lists of them), each within +-bound."""
    a = None
    try:
        a = np.asarray(values)
    except (ValueError, TypeError):
        pass
    if a is None or a.dtype.kind not in "iu":         # object: Python ints beyond 64 bits
        raise LayoutsimError(f"{what}: give integers within +-2**48, not {_short(values)}")
    if a.size and (a.max() > bound or a.min() < -bound):
        raise LayoutsimError(f"{what}: {_short(values)} is beyond +-2**48")
    return a.astype(np.int64)


def _short(values):
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


# ---- swizzles ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Swizzle:
    """CuTe Swizzle<B,M,S>: offset ^ shiftr(offset & (((1<<B)-1) << (M + max(0,S))), S)."""
    B: int
    M: int
    S: int

    def __post_init__(self):
        for name in ("B", "M", "S"):
            object.__setattr__(self, name, integer(getattr(self, name), f"Swizzle {name}"))
        if self.B < 0 or self.M < 0 or abs(self.S) < self.B or self.B > 16 or self.M > 30 or abs(self.S) > 30:
            raise LayoutsimError(f"Swizzle<{self.B},{self.M},{self.S}> is not valid: CuTe needs B >= 0, "
                                 f"M >= 0 and |S| >= B")

    def __call__(self, x):
        x = np.asarray(x, dtype=np.int64)
        if self.B == 0:
            return x
        yyy = ((1 << self.B) - 1) << (self.M + max(0, self.S))
        t = x & yyy
        return x ^ (t >> self.S if self.S >= 0 else t << -self.S)

    def pairs(self):
        """The same map as (source bit, destination bit) pairs."""
        return tuple((self.M + max(0, self.S) + i, self.M + max(0, self.S) + i - self.S) for i in range(self.B))

    def __str__(self):
        return f"Swizzle<{self.B},{self.M},{self.S}>"


@dataclass(frozen=True)
class XorSwizzle:
    """General XOR swizzle: for each (src, dst), bit dst ^= bit src of the original offset."""
    pairs: tuple

    def __post_init__(self):
        try:
            ps = tuple((integer(s, "XOR swizzle bit", 0, 40), integer(d, "XOR swizzle bit", 0, 40))
                       for s, d in self.pairs)
        except (TypeError, ValueError) as e:
            if isinstance(e, LayoutsimError):
                raise
            raise LayoutsimError(f"XOR swizzle pairs: give (source bit, destination bit) pairs, "
                                 f"not {_short(self.pairs)}") from None
        object.__setattr__(self, "pairs", ps)
        srcs, dsts = {s for s, _ in ps}, {d for _, d in ps}
        both = srcs & dsts
        if both:
            raise LayoutsimError(f"XOR swizzle {self}: bit {min(both)} is both read and written, so the "
                                 f"map may not be one-to-one; use bits that are only read or only written")

    def __call__(self, x):
        x = np.asarray(x, dtype=np.int64)
        out = x.copy()
        for s, d in self.pairs:
            out ^= ((x >> s) & 1) << d
        return out

    def __str__(self):
        return "xor(" + ",".join(f"{s}->{d}" for s, d in self.pairs) + ")"


def parse_swizzle(text):
    """'3,3,3' or 'Swizzle<3,3,3>' -> Swizzle; 'xor:7->4,8->5' -> XorSwizzle; None/'' -> None."""
    if text is None or str(text).strip().lower() in ("", "none"):
        return None
    t = str(text).strip()
    if t.lower().startswith("xor"):
        body = t[3:].lstrip(":(").rstrip(")")
        pairs = []
        for part in body.split(","):
            ends = part.split("->")
            if len(ends) != 2:
                raise LayoutsimError(f"XOR swizzle {t!r}: write xor:SRC->DST,SRC->DST (bit numbers)")
            pairs.append(tuple(parse_int(v, f"XOR swizzle {t!r}: bit", 0, 40) for v in ends))
        return XorSwizzle(tuple(pairs))
    body = t
    if body.lower().startswith("swizzle"):
        body = body[7:].strip("<>() ")
    parts = body.split(",")
    if len(parts) != 3:
        raise LayoutsimError(f"swizzle {t!r}: write B,M,S (CuTe Swizzle<B,M,S>), e.g. 3,3,3, "
                             f"or xor:SRC->DST,...")
    b, m, s = (parse_int(v, f"swizzle {t!r}: B,M,S", -30, 30) for v in parts)
    return Swizzle(b, m, s)


# ---- tiles ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Tile:
    """A rows x cols tile of `dtype` in shared memory, row-major.

    pitch   elements from one row to the next (default cols + pad)
    pad     elements of padding after each row (ignored when pitch is given)
    base    byte offset of element (0, 0) before swizzling
    swizzle Swizzle / XorSwizzle applied to the element offset (unit="elem") or to the byte
            offset (unit="byte")
    """
    rows: int
    cols: int
    dtype: str = "f16"
    pad: int = 0
    pitch: Optional[int] = None
    base: int = 0
    swizzle: object = None
    unit: str = "elem"
    elem_bytes: int = field(default=0, init=False)

    def __post_init__(self):
        big = largest_shared_memory()
        for name, lo in (("rows", 1), ("cols", 1), ("pad", 0), ("base", 0)):
            object.__setattr__(self, name, integer(getattr(self, name), f"tile {name}", lo, big))
        if self.pitch is not None:
            object.__setattr__(self, "pitch", integer(self.pitch, "tile pitch", 1, big))
        if not isinstance(self.dtype, str) or self.dtype not in FORMATS:
            raise LayoutsimError(f"unknown dtype {self.dtype!r}{suggest(self.dtype, list(FORMATS))}; "
                                 f"valid: {', '.join(FORMATS)}")
        bits = FORMATS[self.dtype].bits
        if bits % 8:
            raise LayoutsimError(f"dtype {self.dtype} has {bits}-bit elements; tiles need whole bytes")
        object.__setattr__(self, "elem_bytes", bits // 8)
        if self.pitch is not None and self.pitch < self.cols:
            raise LayoutsimError(f"pitch {self.pitch} is smaller than the {self.cols} columns")
        if self.unit not in ("elem", "byte"):
            raise LayoutsimError(f"swizzle unit {self.unit!r}; valid: elem, byte")
        if self.swizzle is not None and not isinstance(self.swizzle, (Swizzle, XorSwizzle)):
            raise LayoutsimError(f"swizzle {self.swizzle!r}: give a Swizzle, an XorSwizzle or None "
                                 f"(parse_swizzle reads '3,3,3' and 'xor:7->4')")
        if self.extent > big:
            raise LayoutsimError(f"the tile ({self.describe()}) spans {self.extent} bytes; no GPU's "
                                 f"shared memory holds more than {big} bytes per block")

    @property
    def row_pitch(self):
        return self.pitch if self.pitch is not None else self.cols + self.pad

    @property
    def extent(self):
        """Bytes from offset 0 to the end of the last element, before swizzling (base included)."""
        return self.base + ((self.rows - 1) * self.row_pitch + self.cols) * self.elem_bytes

    @property
    def bytes(self):
        """Bytes the tile occupies (rows x pitch)."""
        return self.rows * self.row_pitch * self.elem_bytes

    @property
    def wasted_bytes(self):
        return self.rows * (self.row_pitch - self.cols) * self.elem_bytes

    def describe(self):
        parts = [f"{self.rows}x{self.cols} {self.dtype}"]
        if self.row_pitch != self.cols:
            parts.append(f"pitch {self.row_pitch} ({self.row_pitch - self.cols} pad)")
        if self.swizzle is not None:
            parts.append(f"{self.swizzle}" + (" on bytes" if self.unit == "byte" else ""))
        if self.base:
            parts.append(f"base {self.base}")
        return ", ".join(parts)

    def offset(self, row, col):
        """Byte offsets of elements (row, col) (arrays broadcast); checks the tile bounds."""
        row = _int64(row, "row", MAX_ABS)
        col = _int64(col, "column", MAX_ABS)
        if np.any((row < 0) | (row >= self.rows)) or np.any((col < 0) | (col >= self.cols)):
            r = int(np.broadcast_to(row, np.broadcast(row, col).shape).max())
            c = int(np.broadcast_to(col, np.broadcast(row, col).shape).max())
            raise LayoutsimError(f"element ({r}, {c}) is outside the {self.rows}x{self.cols} tile")
        e = row * self.row_pitch + col
        if self.swizzle is None:
            return self.base + e * self.elem_bytes
        if self.unit == "elem":
            return self.base + self.swizzle(e) * self.elem_bytes
        return self.base + self.swizzle(e * self.elem_bytes)

    def vector_offsets(self, row, col, nbytes, what="access"):
        """Start offsets of nbytes-wide accesses at (row, col); checks they stay contiguous."""
        n = nbytes // self.elem_bytes
        if n * self.elem_bytes != nbytes or n < 1:
            raise LayoutsimError(f"a {nbytes}-byte {what} does not hold whole {self.dtype} elements")
        row = _int64(row, "row", MAX_ABS)
        col = _int64(col, "column", MAX_ABS)
        if np.any(col + n > self.cols):
            raise LayoutsimError(f"a {nbytes}-byte {what} at column {int(np.max(col))} runs past the "
                                 f"{self.cols} columns of the tile")
        start = self.offset(row, col)
        for k in range(1, n):
            nxt = self.offset(row, col + k)
            bad = nxt != start + k * self.elem_bytes
            if np.any(bad):
                i = np.flatnonzero(np.broadcast_to(bad, bad.shape).reshape(-1))[0]
                r = int(np.broadcast_to(row, bad.shape).reshape(-1)[i])
                c = int(np.broadcast_to(col, bad.shape).reshape(-1)[i])
                raise LayoutsimError(f"the layout ({self.describe()}) splits the {nbytes}-byte {what} at "
                                     f"element ({r}, {c}): element ({r}, {c + k}) is not next to it in "
                                     f"memory (a swizzle must leave the low bits of a vector alone)")
        return start


def _fragment(name):
    from ..isa.registry import get
    if not isinstance(name, str) or ":" not in name:
        given = repr(name) if isinstance(name, str) else f"a {type(name).__name__}"
        raise LayoutsimError(f"fragment {given}: write INSTRUCTION:OPERAND, e.g. "
                             f"mma.m16n8k16.f32.f16.f16.f32:A")
    inst, operand = name.rsplit(":", 1)
    ins = get(inst.strip())
    return ins, ins.operand(operand.strip())


def _matrix_spec(op):
    from .ops import parse
    spec = parse(op)
    if spec.vendor == "amd":
        raise LayoutsimError(f"{spec.name} is an AMD LDS op: fragments and 8x8 blocks are moved by "
                             f"NVIDIA's ldmatrix/stmatrix; for {spec.name} give --fill (the row-wise "
                             f"accesses of a tile) or --addr")
    if not spec.is_matrix:
        raise LayoutsimError(f"{spec.name} is not ldmatrix/stmatrix; fragments are loaded with "
                             f"ldmatrix.x1/x2/x4[.trans] and stored with stmatrix")
    return spec


def matrix_origins(op, fragment, stored="row"):
    """[(row, col)] of each 8x8 memory matrix of `op` when it moves operand `fragment`, relative
    to the operand's (0, 0); derived from the two catalog tables (`layoutsim.isa.moves`).

    stored: "row" if operand element (r, c) lies at tile (r, c); "col" if it lies at (c, r).
    """
    from ..isa import moves
    from ..isa.registry import get
    spec = _matrix_spec(op)
    ins, opnd = _fragment(fragment)
    frag = opnd.fragment
    reg = get(spec.catalog).operand("R").fragment
    if frag.elem_bits != 16:
        raise LayoutsimError(f"operand {opnd.name} of {ins.name} has {frag.elem_bits}-bit elements; "
                             f"ldmatrix/stmatrix move b16 elements")
    if frag.regs != reg.regs or frag.lanes != reg.lanes:
        raise LayoutsimError(f"{spec.name} moves {reg.regs} registers per lane; operand {opnd.name} of "
                             f"{ins.name} has {frag.regs}: use {spec.name.split('.')[0]}.x{frag.regs}"
                             f"{'.trans' if spec.trans else ''}")
    if stored not in ("row", "col"):
        raise LayoutsimError(f"stored {stored!r}; valid: row (element (r,c) at tile (r,c)), col (at (c,r))")
    found = moves.origins(frag, get(spec.catalog), stored)
    if found is None:
        other = spec.name.replace(".trans", "") if spec.trans else spec.name + ".trans"
        raise LayoutsimError(f"{spec.name} cannot move operand {opnd.name} of {ins.name} stored "
                             f"{stored}-major: its registers do not each hold one 8x8 block in "
                             f"{'transposed' if spec.trans else 'plain'} order (try {other}"
                             f"{' or stored=' + ('col' if stored == 'row' else 'row')})")
    return found


def fragment_offsets(tile, op, fragment, row=0, col=0, stored="row"):
    """Per-lane byte offsets (None for lanes whose address is ignored) of the ldmatrix/stmatrix
    that moves `fragment` (e.g. 'mma.m16n8k16.f32.f16.f16.f32:A') at tile position (row, col)."""
    spec = _matrix_spec(op)
    if tile.elem_bytes != 2:
        raise LayoutsimError(f"ldmatrix/stmatrix move 16-bit elements; the tile holds {tile.dtype}")
    origins = matrix_origins(op, fragment, stored)
    return _row_offsets(tile, spec, [(row + r, col + c) for r, c in origins])


def block_offsets(tile, op, row=0, col=0):
    """Per-lane offsets of ldmatrix/stmatrix.xN moving N blocks of 8 rows x 16 bytes at
    (row, col), in the order of the mma.sync A fragment they load (`isa.moves.block_order`):
    x4 (row, col), (row + 8, col), (row, col + w), (row + 8, col + w); x2 (row, col),
    (row + 8, col); w = 16 bytes of elements."""
    return _lists(block_offsets_array(tile, op, [(row, col)]))[0]


def block_offsets_array(tile, op, positions):
    """block_offsets for many (row, col) positions at once: int64[K, 32], -1 where no address."""
    from ..isa.moves import block_order
    spec = _matrix_spec(op)
    w = 16 // tile.elem_bytes
    origins = [(r, w * c16) for r, c16 in block_order(spec.matrices)]
    pos = _int64(positions, "block position", MAX_ABS).reshape(-1, 2)
    return _row_offsets_many(tile, spec, pos[:, None, :] + np.asarray(origins)[None, :, :])


def _row_offsets(tile, spec, origins):
    return _lists(_row_offsets_many(tile, spec, _int64(origins, "matrix position", MAX_ABS)[None]))[0]


def _lists(offsets):
    """int64[K, 32] with -1 for 'no address' -> K lists of 32 offsets with None."""
    return [[int(o) if o >= 0 else None for o in row] for row in offsets.tolist()]


def _row_offsets_many(tile, spec, origins):
    """origins int[K, matrices, 2] -> int64[K, 32] offsets (-1 where no address is used)."""
    lanes = np.asarray(spec.address_lanes())                        # [matrices, 8]
    rows = origins[:, :, 0, None] + np.arange(8)                    # [K, matrices, 8]
    cols = np.broadcast_to(origins[:, :, 1, None], rows.shape)
    offs = tile.vector_offsets(rows, cols, 16, what="matrix row")
    full = np.full((origins.shape[0], LANES), -1, np.int64)
    full[:, lanes.reshape(-1)] = offs.reshape(origins.shape[0], -1)
    return full


def fill_offsets(tile, width=16, first=0, count=None, lanes=LANES):
    """Row-wise accesses of `width` bytes per lane covering the tile in order (thread t takes
    elements t*n .. t*n+n-1 of the row-major logical tile, n = width / element bytes), one warp
    of `lanes` threads per access (32; a CDNA wave64 LDS access: 64, banks.model.lanes_of).

    Returns a list of accesses, each `lanes` offsets (None for lanes past the end)."""
    return _lists(fill_offsets_array(tile, width, first, count, lanes))


def fill_offsets_array(tile, width=16, first=0, count=None, lanes=LANES):
    """fill_offsets as int64[K, lanes], -1 for lanes past the end."""
    n = width // tile.elem_bytes
    if n < 1 or n * tile.elem_bytes != width:
        raise LayoutsimError(f"{width}-byte accesses do not hold whole {tile.dtype} elements")
    if tile.cols % n:
        raise LayoutsimError(f"{width}-byte accesses ({n} {tile.dtype}) do not divide a row of {tile.cols}")
    vectors = tile.rows * tile.cols // n
    total = -(-vectors // lanes)
    count = total - first if count is None else count
    if first < 0 or count < 0 or first + count > total:
        raise LayoutsimError(f"the tile takes {total} warp accesses of {width} bytes (0..{total - 1}); "
                             f"asked for {first}..{first + count - 1}")
    t = (first * lanes + np.arange(count * lanes)).reshape(count, lanes)
    valid = t < vectors
    e = np.where(valid, t, 0) * n
    offs = tile.vector_offsets(e // tile.cols, e % tile.cols, width)
    return np.where(valid, offs, -1)


def fill_count(tile, width=16, lanes=LANES):
    n = width // tile.elem_bytes
    return -(-(tile.rows * tile.cols // max(n, 1)) // lanes)
