"""Integer, logic, shift, bit-field and compare/select instructions (PTX ISA 9.0 sections 9.7.1,
9.7.2, 9.7.6, 9.7.8), all widths, with two's-complement wraparound.

Every formula below is the ISA's pseudo-code written over numpy arrays: the instruction runs
on all threads of the batch at once.
"""
import functools

import numpy as np

from . import types as T
from .builders import elementwise, exactly, need, unsupported
from .ops_float import float_compare

U64 = np.uint64


def _t(ins, default=None, floats=False, pred=False):
    """The instruction type, refused (with the line) when the handler cannot compute in it: an
    integer handler takes .b/.u/.s types of 8 to 64 bits (and .u16x2/.s16x2), `floats` ones also
    pass float types on to ops_float, `pred` ones (and/or/xor/not) also take .pred."""
    t = T.instr_type(ins.mods, ins.line, default)
    if (t.is_float and not floats) or (t.kind == "pred" and not pred) or (t.kind in "bus" and not 8 <= t.bits <= 64):
        also = " and float types" if floats else " and .pred" if pred else ""
        raise unsupported(ins, f"type .{t.name}: {ins.opcode} computes on .b/.u/.s types of 8 to 64 bits{also}")
    return t


def _wide(t):
    return T.get(f"{t.kind}{t.bits * 2}")


def _u(t):
    return T.get(f"u{t.bits}")


def _simd(t_name):
    """The 16-bit element dtype of .u16x2 / .s16x2."""
    return np.dtype("uint16" if t_name.startswith("u") else "int16")


def _simd_op(ins, b, f):
    t = next(m for m in ins.mods if m in ("u16x2", "s16x2"))
    et = _simd(t)

    @functools.wraps(f)                   # f's parameters: the sources elementwise expects
    def g(*xs):
        parts = [np.asarray(x, np.uint32).reshape(-1).view(et).reshape(-1, 2) for x in xs]
        r = f(*parts)
        return np.ascontiguousarray(r.astype(et)).view(np.uint32).reshape(-1)
    return elementwise(ins, b, g, T.get("b32"))


# ---- add / sub / mul / mad -----------------------------------------------------------------------
def _sat32(x):
    return np.clip(x, -(1 << 31), (1 << 31) - 1).astype(np.int32)


def _add(ins, b, prog, sign=1):
    if "cc" in ins.mods or ins.opcode in ("addc", "subc"):
        return _carry_op(ins, b, prog)
    if any(m in ("u16x2", "s16x2") for m in ins.mods):
        if sign > 0:
            return _simd_op(ins, b, lambda x, y: x + y)
        return _simd_op(ins, b, lambda x, y: x - y)
    t = _t(ins)
    if "sat" in ins.mods:
        return elementwise(ins, b, lambda x, y: _sat32(x.astype(np.int64) + sign * y.astype(np.int64)), t)
    return elementwise(ins, b, (lambda x, y: x + y) if sign > 0 else (lambda x, y: x - y), t)


def _sub(ins, b, prog):
    return _add(ins, b, prog, -1)


def mulhi_u64(a, c):
    a, c = a.astype(U64), np.asarray(c).astype(U64)
    m = U64(0xFFFFFFFF)
    al, ah, cl, ch = a & m, a >> U64(32), c & m, c >> U64(32)
    p0, p1, p2, p3 = al * cl, al * ch, ah * cl, ah * ch
    mid = (p0 >> U64(32)) + (p1 & m) + (p2 & m)
    return p3 + (p1 >> U64(32)) + (p2 >> U64(32)) + (mid >> U64(32))


def mulhi_s64(a, c):
    hi = mulhi_u64(a.view(U64) if a.dtype == np.int64 else a, np.asarray(c).view(U64)
                   if np.asarray(c).dtype == np.int64 else c)
    ai, ci = np.asarray(a).astype(np.int64), np.asarray(c).astype(np.int64)
    hi = hi - np.where(ai < 0, ci.view(U64), U64(0)) - np.where(ci < 0, ai.view(U64), U64(0))
    return hi.view(np.int64)


def _product(mode, t):
    """f(a, b) -> the .lo/.hi/.wide product of two t values."""
    if mode == "wide":
        w = _wide(t).dtype
        return lambda x, y: x.astype(w) * np.asarray(y).astype(w)
    if mode == "hi":
        if t.bits == 64:
            return mulhi_s64 if t.signed else mulhi_u64
        w = np.dtype(f"{'i' if t.signed else 'u'}{t.bits // 4}")
        sh = t.bits
        return lambda x, y: ((x.astype(w) * np.asarray(y).astype(w)) >> sh).astype(t.dtype)
    return lambda x, y: x * y


def _mul(ins, b, prog):
    t = _t(ins)
    mode = next((m for m in ins.mods if m in ("hi", "lo", "wide")), "lo")
    f = _product(mode, t)
    return elementwise(ins, b, f, t, _wide(t) if mode == "wide" else t)


def _mad(ins, b, prog):
    t = _t(ins)
    if "cc" in ins.mods or ins.opcode == "madc":
        return _carry_op(ins, b, prog)
    mode = next((m for m in ins.mods if m in ("hi", "lo", "wide")), "lo")
    f = _product(mode, t)
    dt = _wide(t) if mode == "wide" else t
    if "sat" in ins.mods:               # mad.hi.sat.s32: (a*b)>>32 + c saturated
        return elementwise(ins, b, lambda x, y, z: _sat32(f(x, y).astype(np.int64) + z.astype(np.int64)),
                           [t, t, t], t)
    return elementwise(ins, b, lambda x, y, z: f(x, y) + z, [t, t, dt], dt)


def _mul24(ins, b, prog):
    t = _t(ins)
    hi = "hi" in ins.mods
    sat = "sat" in ins.mods

    def prod(x, y):
        if t.signed:
            x24 = ((x.astype(np.int64) << 40) >> 40)
            y24 = ((np.asarray(y).astype(np.int64) << 40) >> 40)
        else:
            x24 = x.astype(np.int64) & 0xFFFFFF
            y24 = np.asarray(y).astype(np.int64) & 0xFFFFFF
        p = x24 * y24                            # 48-bit product, exact in int64
        return (p >> 16) if hi else p
    if ins.opcode == "mul24":
        return elementwise(ins, b, lambda x, y: prod(x, y).astype(np.int64).astype(U64).astype(np.uint32)
                           .view(t.dtype), t)

    def mad(x, y, z):
        s = (prod(x, y) & 0xFFFFFFFF).astype(np.uint32).view(t.dtype).astype(np.int64) + z.astype(np.int64)
        if sat:
            return _sat32(s).view(t.dtype)
        return (s & 0xFFFFFFFF).astype(np.uint32).view(t.dtype)
    return elementwise(ins, b, mad, t)


def _lanes(x, n, signed):
    """The n 32/n-bit lanes of 32-bit words, sign- or zero-extended, int64 [..., n]."""
    w = 32 // n
    x = np.asarray(x).astype(np.int64) & 0xFFFFFFFF
    v = (x[..., None] >> (np.arange(n) * w)) & ((1 << w) - 1)
    return np.where(v >> (w - 1), v - (1 << w), v) if signed else v


def _dp(ins, b, prog):
    """dp4a / dp2a (PTX ISA 9.7.1.23/24): c + the dot product of byte (halfword) lanes."""
    ta, tb = T.two_types(ins, f"{ins.opcode}.s32.u32")
    hi = "hi" in ins.mods
    out = T.get("u32") if (not ta.signed and not tb.signed) else T.get("s32")
    four = ins.opcode == "dp4a"

    def f(a, bb, c):
        va = _lanes(a, 4 if four else 2, ta.signed)
        vb = _lanes(bb, 4, tb.signed)
        if not four:
            vb = vb[..., 2:] if hi else vb[..., :2]
        r = np.asarray(c).astype(np.int64) + (va * vb).sum(axis=-1)
        return (r & 0xFFFFFFFF).astype(np.uint32).view(out.dtype)
    return elementwise(ins, b, f, [T.get("b32"), T.get("b32"), out], out)


def _sad(ins, b, prog):
    t = _t(ins)
    return elementwise(ins, b, lambda x, y, z: (np.where(x > y, x - y, y - x) + z).astype(t.dtype), t)


# ---- extended precision (PTX ISA 9.7.2): the carry flag CC.CF is per thread ---------------------
def _ones(n):
    """uint64 masks of n low bits (n int64 array, 0..64)."""
    n = np.asarray(n, np.int64)
    return np.where(n >= 64, U64(0xFFFFFFFFFFFFFFFF), (U64(1) << np.minimum(n, 63).astype(U64)) - U64(1))


def _shr(x, n):
    n = np.asarray(n, np.int64)
    return np.where(n >= 64, U64(0), x >> np.minimum(n, 63).astype(U64))


def _add_carry(x, y, c, W):
    if W < 64:
        r = x + y + c
        return r & U64((1 << W) - 1), r >> U64(W)
    t = x + y
    r = t + c
    return r, ((t < x) | (r < t)).astype(U64)


def _sub_borrow(x, y, c, W):
    m = U64((1 << W) - 1) if W < 64 else U64(0xFFFFFFFFFFFFFFFF)
    t = (x - y) & m
    r = (t - c) & m
    return r, ((x < y) | (t < c)).astype(U64)


def _carry_op(ins, b, prog):
    """add.cc / addc / sub.cc / subc / mad.cc / madc: carry (borrow for sub) in and out."""
    t = _t(ins)
    W = t.bits
    use_cf = ins.opcode in ("addc", "subc", "madc")
    set_cf = "cc" in ins.mods
    op = ins.opcode[:-1] if use_cf else ins.opcode
    exactly(ins, 4 if op == "mad" else 3)
    u = _u(t)
    d = b.write(ins.operands[0], u, ins)
    srcs = [b.read(o, u, ins) for o in ins.operands[1:]]
    prod = _product(next((m for m in ins.mods if m in ("hi", "lo")), "lo"), u)

    def fn(bt, g, full):
        xs = [np.broadcast_to(np.asarray(s(bt)), (bt.T,)) for s in srcs]
        cf = bt.carry if use_cf else U64(0)
        if op == "add":
            r, co = _add_carry(xs[0].astype(U64), xs[1].astype(U64), cf, W)
        elif op == "sub":
            r, co = _sub_borrow(xs[0].astype(U64), xs[1].astype(U64), cf, W)
        else:
            r, co = _add_carry(prod(xs[0], xs[1]).astype(U64), xs[2].astype(U64), cf, W)
        d(bt, r.astype(u.dtype), g, full)
        if set_cf:
            bt.carry = np.where(g, co, bt.carry)
    return {"fn": fn}


# ---- division, abs, neg, min, max -----------------------------------------------------------------
def _divrem(ins, b, prog):
    t = _t(ins)
    rem = ins.opcode == "rem"
    ut = np.dtype(f"u{t.bits // 8}")

    def f(x, y):
        x = np.asarray(x)
        y = np.broadcast_to(np.asarray(y, dtype=t.dtype), x.shape)
        zero = y == 0
        ys = np.where(zero, 1, y)
        if t.signed:
            ax = np.abs(x.astype(np.int64)).astype(np.uint64) if t.bits < 64 else \
                np.where(x < 0, (~x.view(np.uint64)) + np.uint64(1), x.view(np.uint64))
            ay = np.abs(ys.astype(np.int64)).astype(np.uint64) if t.bits < 64 else \
                np.where(ys < 0, (~ys.view(np.uint64)) + np.uint64(1), ys.view(np.uint64))
            q = ax // ay
            r = ax - q * ay
            neg_q = (x < 0) != (ys < 0)
            q = np.where(neg_q, (~q) + np.uint64(1), q)
            r = np.where(x < 0, (~r) + np.uint64(1), r)
            out = (r if rem else q).astype(np.uint64).astype(ut).view(t.dtype)
        else:
            out = (x % ys) if rem else (x // ys)
        # PTX: division by zero gives an unspecified value; the model gives all ones (quotient)
        # and the dividend (remainder), like the usual hardware sequence
        return np.where(zero, x if rem else np.array(-1).astype(t.dtype) if t.signed else
                        np.array(np.iinfo(t.dtype).max, t.dtype), out).astype(t.dtype)
    return elementwise(ins, b, f, t)


def _abs(ins, b, prog):
    t = _t(ins)
    return elementwise(ins, b, lambda x: np.where(x < 0, -x, x), t, nsrc=1)


def _neg(ins, b, prog):
    t = _t(ins)
    return elementwise(ins, b, lambda x: -x, t, nsrc=1)


def _minmax(ins, b, prog):
    t = _t(ins)
    f = np.minimum if ins.opcode == "min" else np.maximum
    relu = "relu" in ins.mods
    if any(m in ("u16x2", "s16x2") for m in ins.mods):
        return _simd_op(ins, b, (lambda x, y: np.maximum(f(x, y), 0)) if relu else f)
    if relu:
        return elementwise(ins, b, lambda x, y: np.maximum(f(x, y), 0).astype(t.dtype), t)
    return elementwise(ins, b, lambda x, y: f(x, y).astype(t.dtype), t)


# ---- bit operations -----------------------------------------------------------------------------
_BYTE_POPC = np.array([bin(i).count("1") for i in range(256)], np.uint32)
_BYTE_REV = np.array([int(f"{i:08b}"[::-1], 2) for i in range(256)], np.uint8)


def _popc(ins, b, prog):
    t = _t(ins)
    return elementwise(ins, b, lambda x: np.bitwise_count(np.asarray(x)).astype(np.uint32),
                       T.get(f"b{t.bits}"), T.get("u32"), nsrc=1)


def clz(x, bits):
    x = np.asarray(x).astype(U64)
    n = np.zeros(x.shape, np.int64)
    for s in (32, 16, 8, 4, 2, 1):
        if s >= bits:
            continue
        top = x >> U64(bits - s)
        none = top == 0
        n = n + np.where(none, s, 0)
        x = np.where(none, x << U64(s), x) & U64((1 << bits) - 1 if bits < 64 else 0xFFFFFFFFFFFFFFFF)
    last = (x >> U64(bits - 1)) == 0
    return (n + last).astype(np.uint32)


def _clz(ins, b, prog):
    t = _t(ins)
    return elementwise(ins, b, lambda x: clz(x, t.bits), T.get(f"b{t.bits}"), T.get("u32"), nsrc=1)


def _bfind(ins, b, prog):
    t = _t(ins)
    shiftamt = "shiftamt" in ins.mods

    def f(x):
        x = np.asarray(x)
        u = x.view(np.dtype(f"u{t.bits // 8}")) if x.dtype.kind == "i" else x
        v = np.where(x < 0, ~u, u) if t.signed else u
        lz = clz(v, t.bits).astype(np.int64)
        pos = t.bits - 1 - lz
        none = lz == t.bits
        out = (t.bits - 1 - pos) if shiftamt else pos
        return np.where(none, 0xFFFFFFFF, out).astype(np.uint32)
    return elementwise(ins, b, f, t, T.get("u32"), nsrc=1)


def _brev(ins, b, prog):
    t = _t(ins)
    n = t.bits // 8

    def f(x):
        by = np.ascontiguousarray(np.asarray(x)).view(np.uint8).reshape(-1, n)
        return np.ascontiguousarray(_BYTE_REV[by][:, ::-1]).view(t.dtype).reshape(-1)
    return elementwise(ins, b, f, t, nsrc=1)


def _bfe(ins, b, prog):
    """PTX ISA 9.7.8.11: bits pos..pos+len-1 of a, the rest filled with the sign bit (signed
    types) or 0; pos and len use their low 8 bits."""
    t = _t(ins)
    W = t.bits

    def f(a, pos, ln):
        a = np.asarray(a)
        if not t.signed and not np.ndim(pos) and not np.ndim(ln) and a.dtype.kind == "u":
            # one field for every thread (immediates): the shift and mask below, in a's own width
            p, n = int(pos) & 0xFF, int(ln) & 0xFF
            take = max(0, min(n, W - p))
            if not take:
                return np.zeros(a.shape, np.dtype(f"u{W // 8}")).view(t.dtype)
            return ((a >> a.dtype.type(p)) & a.dtype.type((1 << take) - 1)).view(t.dtype)
        au = (a.view(np.dtype(f"u{W // 8}")) if a.dtype.kind == "i" else a).astype(U64)
        pos = np.asarray(pos).astype(np.int64) & 0xFF
        ln = np.asarray(ln).astype(np.int64) & 0xFF
        take = np.clip(np.minimum(ln, W - pos), 0, W)
        field = _shr(au, pos) & _ones(take)
        if t.signed:
            sbit = np.where(ln == 0, U64(0), _shr(au, np.minimum(pos + ln - 1, W - 1)) & U64(1))
            field = field | np.where(sbit == 1, _ones(W) & ~_ones(take), U64(0))
        return field.astype(np.dtype(f"u{W // 8}")).view(t.dtype)
    return elementwise(ins, b, f, [t, T.get("u32"), T.get("u32")], t)


def _bfi(ins, b, prog):
    t = _t(ins)
    W = t.bits

    def f(a, base, pos, ln):
        a = np.asarray(a).astype(U64)
        base = np.asarray(base).astype(U64)
        pos = np.asarray(pos).astype(np.int64) & 0xFF
        ln = np.asarray(ln).astype(np.int64) & 0xFF
        n = np.clip(np.minimum(ln, W - pos), 0, W)
        p = np.minimum(pos, 63).astype(U64)
        m = np.where(pos >= W, U64(0), _ones(n) << p)
        r = (base & ~m) | ((a << p) & m)
        return r.astype(t.dtype)
    return elementwise(ins, b, f, [t, t, T.get("u32"), T.get("u32")], t)


def bmsk_formula(a, b, clamp):
    """bmsk's mask of b bits from bit a (PTX ISA 9.0 9.7.1.22, its pseudo-code over uint32
    arrays): .wrap takes a and b modulo 32; .clamp gives 0 from a >= 32 and every bit from a
    upward when b >= 32; a field that runs past bit 31 stops there."""
    a, b = np.asarray(a, np.uint32).astype(U64), np.asarray(b, np.uint32).astype(U64)
    ones = U64(0xFFFFFFFF)
    a1, b1 = a & U64(31), b & U64(31)
    total = a1 + b1
    mask0 = (ones << a1) & ones
    overflow = total >= 32
    if clamp:
        mask0 = np.where(a >= 32, U64(0), mask0)
        overflow = overflow | (a >= 32) | (b >= 32)
    mask1 = (ones << np.minimum(total, U64(32))) & ones
    mask1 = np.where(overflow, U64(0), np.where(b1 == 0, ones, mask1))
    return (mask0 & ~mask1 & ones).astype(np.uint32)


def bmsk(ins, b, prog):
    """bmsk.clamp.b32 / bmsk.wrap.b32 d, a, b: the mask bmsk_formula gives (the table checks the
    modifiers; exactly one mode is required)."""
    modes = [m for m in ins.mods if m in ("clamp", "wrap")]
    if len(modes) != 1 or T.instr_type(ins.mods, ins.line).name != "b32":
        raise unsupported(ins, "bmsk takes one mode (.clamp or .wrap) and the type .b32")
    clamp = modes[0] == "clamp"
    return elementwise(ins, b, lambda x, y: bmsk_formula(x, y, clamp), T.get("b32"))


def _shift(ins, b, prog):
    t = _t(ins)
    W = t.bits
    left = ins.opcode == "shl"

    def f(x, n):
        if not np.ndim(n) and 0 <= n < W:  # one amount inside the width (an immediate): the shift itself
            return x << x.dtype.type(n) if left else x >> x.dtype.type(n)
        n = np.asarray(n).astype(np.int64)
        big = n >= W                       # shift amounts are clamped to the width (PTX 9.7.8.7)
        nn = np.minimum(n, W - 1).astype(x.dtype if x.dtype.kind == "u" else np.dtype(f"u{W // 8}"))
        if left:
            return np.where(big, 0, x << nn.astype(x.dtype)).astype(x.dtype)
        r = x >> nn.astype(x.dtype)
        fill = np.where(x < 0, -1, 0) if x.dtype.kind == "i" else 0
        return np.where(big, fill, r).astype(x.dtype)
    return elementwise(ins, b, f, [t, T.get("u32")], t)


def _shf(ins, b, prog):
    left = "l" in ins.mods
    clamp = "clamp" in ins.mods

    def f(lo, hi, n):
        n = np.asarray(n).astype(np.int64)
        n = np.minimum(n, 32) if clamp else n & 31
        v = (np.asarray(hi).astype(U64) << U64(32)) | np.asarray(lo).astype(U64)
        n = n.astype(U64)
        r = ((v << n) >> U64(32)) if left else (v >> n)
        return (r & U64(0xFFFFFFFF)).astype(np.uint32)
    return elementwise(ins, b, f, T.get("b32"))


# ---- logic ----------------------------------------------------------------------------------------
def _logic(ins, b, prog):
    t = _t(ins, pred=True)
    f = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}.get(ins.opcode)
    if f is not None:
        return elementwise(ins, b, f, t)
    if ins.opcode == "not":
        return elementwise(ins, b, np.invert if t.kind != "pred" else np.logical_not, t, nsrc=1)
    if ins.opcode == "cnot":
        return elementwise(ins, b, lambda x: (x == 0).astype(t.dtype), t, nsrc=1)
    raise unsupported(ins)


def _lop3(ins, b, prog):
    need(ins, 5)
    if ins.operands[0].kind == "pair":
        raise unsupported(ins, "lop3 with a predicate result")
    lut = ins.operands[4]
    if lut.kind != "imm":
        raise unsupported(ins, "lop3 needs an immediate look-up table")
    L = lut.value & 0xFF
    terms = [k for k in range(8) if (L >> k) & 1]

    def f(x, y, z):
        x, y, z = (np.asarray(v, np.uint32) for v in (x, y, z))
        acc = np.zeros(np.broadcast_shapes(x.shape, y.shape, z.shape), np.uint32)
        for k in terms:
            acc |= (x if k & 4 else ~x) & (y if k & 2 else ~y) & (z if k & 1 else ~z)
        return acc
    return elementwise(ins, b, f, T.get("b32"), nsrc=3)


# ---- compare and select ------------------------------------------------------------------------
INT_CMP = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
           "ge": np.greater_equal, "lo": np.less, "ls": np.less_equal, "hi": np.greater,
           "hs": np.greater_equal}
BOOL = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}


def _setp(ins, b, prog):
    t = _t(ins, floats=True)
    if t.is_float:
        cmp = float_compare(ins, t)
    else:
        cmp_name = next((m for m in ins.mods if m in INT_CMP), None)
        if cmp_name is None:
            raise unsupported(ins, "no comparison")
        if cmp_name in ("lo", "ls", "hi", "hs") and t.signed:
            raise unsupported(ins, f".{cmp_name} compares unsigned values")
        f = INT_CMP[cmp_name]
        cmp = lambda x, y: f(x, y)
    boolop = next((m for m in ins.mods if m in BOOL), None)
    dst = ins.operands[0]
    outs = list(dst.value) if dst.kind == "pair" else [dst]
    P = T.get("pred")
    wr = [b.write(o, P, ins) for o in outs]
    ra, rb = b.read(ins.operands[1], t, ins), b.read(ins.operands[2], t, ins)
    rc = b.read(ins.operands[3], P, ins) if boolop else None
    bf = BOOL.get(boolop)
    if ins.opcode == "set":
        dtype = T.two_types(ins, "set.lt.u32.f32")[0]
        one = np.array(1.0, dtype.dtype) if dtype.kind == "f" else np.array(-1).astype(dtype.dtype)

    def fn(bt, g, full):
        r = cmp(ra(bt), rb(bt))
        if isinstance(r, tuple):                   # packed halves: p from lane 0, q from lane 1
            results = [np.broadcast_to(x, (bt.T,)) for x in r]
            if bf is not None:
                c = rc(bt)
                results = [bf(x, c) for x in results]
        else:
            r = np.broadcast_to(r, (bt.T,))
            results = [r, ~r]
            if bf is not None:
                c = rc(bt)
                results = [bf(r, c), bf(~r, c)]
        if ins.opcode == "set":
            wr[0](bt, np.where(results[0], one, np.zeros((), one.dtype)), g, full)
            return
        for w, v in zip(wr, results):
            w(bt, v, g, full)
    if ins.opcode == "set":
        wr = [b.write(outs[0], dtype, ins)]
    return {"fn": fn}


def _selp(ins, b, prog):
    t = _t(ins, floats=True)
    return elementwise(ins, b, lambda x, y, c: np.where(c, x, y), [t, t, T.get("pred")], t)


def _slct(ins, b, prog):
    t, ct = T.two_types(ins, "slct.f32.s32")
    ftz = "ftz" in ins.mods
    return elementwise(ins, b, lambda x, y, c: np.where((c >= 0) | (ftz & (c == 0)), x, y), [t, t, ct], t)
