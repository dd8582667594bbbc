"""Half-precision instructions: .f16, .bf16 and the packed .f16x2 / .bf16x2 (PTX ISA 9.0, 9.7.4
and 9.7.7), exact like the f32 ones (fround): the operands are exact in float64, a product
is exact, a sum is rounded to odd, then rounded once to the format.

Packed types hold element 0 in bits 0-15 and element 1 in bits 16-31. NaN results are the
canonical NaN 0x7fff (PTX ISA 9.7.4: min/max and .relu results are canonical NaN; the same is
assumed for add/sub/mul/fma, not measured).
"""
import functools

import numpy as np

from . import fround as F
from . import types as T
from .builders import elementwise, sfu_model, unsupported


def half_format(t):
    return "bf16" if t.name.startswith("bf16") else "f16"


def _packed(t):
    return t.name.endswith("x2")


def decode(raw, fmt):
    raw = np.asarray(raw).astype(np.uint16)
    if fmt == "f16":
        return raw.view(np.float16).astype(np.float64)
    return (raw.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)


def _halves(raw32):
    r = np.asarray(raw32).astype(np.uint32)
    return (r & np.uint32(0xFFFF)).astype(np.uint16), (r >> np.uint32(16)).astype(np.uint16)


def _pack(lo, hi):
    return np.asarray(lo).astype(np.uint32) | (np.asarray(hi).astype(np.uint32) << np.uint32(16))


def lanes(f, t):
    """Apply f(raw16 inputs...) -> raw16 element-wise, on both halves of packed operands."""
    if not _packed(t):
        @functools.wraps(f)               # f's parameters: the sources elementwise expects
        def one(*xs):
            return f(*[np.asarray(x).astype(np.uint16) for x in xs])
        return one

    @functools.wraps(f)
    def g(*xs):
        parts = [_halves(x) for x in xs]
        return _pack(f(*[p[0] for p in parts]), f(*[p[1] for p in parts]))
    return g


def _storage(t):
    return T.get("b32") if _packed(t) else T.get("b16")


def half_arith(ins, b, prog):
    """add / sub / mul / fma (.rn, .ftz for f16, .sat, .relu)."""
    t = T.instr_type(ins.mods, ins.line)
    fmt = half_format(t)
    mode = next((m for m in ins.mods if m in ("rn", "rz", "rm", "rp")), "rn")
    ftz, sat, relu = "ftz" in ins.mods, "sat" in ins.mods, "relu" in ins.mods
    op = ins.opcode

    def val(x):
        v = decode(x, fmt)
        return F.flush(v, fmt) if ftz else v

    def out(r):
        if relu:
            r = np.where(np.isnan(r), r, np.maximum(r, 0.0))
        return F.round_to(r, fmt, mode, ftz, sat)

    if op in ("add", "sub"):
        s = 1.0 if op == "add" else -1.0

        def f(x, y):
            x, y = val(x), s * val(y)
            return out(F.rm_zero_sign(F.sum_odd(x, y), x, y, mode))
    elif op == "mul":
        def f(x, y):
            with np.errstate(all="ignore"):
                return out(val(x) * val(y))
    else:
        def f(x, y, z):
            with np.errstate(all="ignore"):
                p = val(x) * val(y)
            z = val(z)
            return out(F.rm_zero_sign(F.sum_odd(p, z), p, z, mode))
    return elementwise(ins, b, lanes(f, t), _storage(t))


def half_unary(ins, b, prog):
    """neg / abs: the sign bit (PTX ISA 9.7.4.5/6; NaN inputs are passed through)."""
    t = T.instr_type(ins.mods, ins.line)
    neg = ins.opcode == "neg"
    ftz = "ftz" in ins.mods
    fmt = half_format(t)

    def f(x):
        if ftz:
            v = decode(x, fmt)
            tiny = (v != 0) & (np.abs(v) < F.MIN_NORMAL[fmt])
            x = np.where(tiny, x & np.uint16(0x8000), x)
        return (x ^ np.uint16(0x8000)) if neg else (x & np.uint16(0x7FFF))
    return elementwise(ins, b, lanes(f, t), _storage(t), nsrc=1)


def minmax_bits(x, y, fmt, is_min, ftz=False, nan_mode=False, xorsign=False, absm=False, relu=False):
    """min/max.{f16,bf16} of raw bits (PTX ISA 9.7.4.10-11: -0 < +0; a NaN loses to a number, two
    NaNs give the canonical NaN, unless .NaN), the raw bits of the result. Also what atom/red and
    cp.reduce.async.bulk .min/.max of these types compute."""
    a, c = decode(x, fmt), decode(y, fmt)
    if ftz:
        a, c = F.flush(a, fmt), F.flush(c, fmt)
    sgn = np.signbit(a) ^ np.signbit(c)
    if absm:
        a, c = np.abs(a), np.abs(c)
    if is_min:
        pick = (a < c) | ((a == c) & np.signbit(a) & ~np.signbit(c))
    else:
        pick = (a > c) | ((a == c) & ~np.signbit(a) & np.signbit(c))
    r = np.where(pick, a, c)
    na, nc = np.isnan(a), np.isnan(c)
    r = np.where(na | nc, np.nan, r) if nan_mode else \
        np.where(na & nc, np.nan, np.where(na, c, np.where(nc, a, r)))
    if xorsign:
        r = np.where(np.isnan(r), r, np.copysign(np.abs(r), np.where(sgn, -1.0, 1.0)))
    if relu:
        r = np.where(np.isnan(r), r, np.maximum(r, 0.0))
    return F.round_to(r, fmt, "rn", ftz)


def half_minmax(ins, b, prog):
    t = T.instr_type(ins.mods, ins.line)
    fmt = half_format(t)
    opts = dict(is_min=ins.opcode == "min", ftz="ftz" in ins.mods, nan_mode="NaN" in ins.mods,
                xorsign="xorsign" in ins.mods, absm="abs" in ins.mods, relu="relu" in ins.mods)
    return elementwise(ins, b, lanes(lambda x, y: minmax_bits(x, y, fmt, **opts), t), _storage(t))


def half_compare(ins, t, f, ftz):
    """The comparison function for setp.{f16,bf16}[x2]: one predicate, or (lane 0, lane 1)."""
    fmt = half_format(t)

    def one(x, y):
        a, c = decode(x, fmt), decode(y, fmt)
        if ftz:
            a, c = F.flush(a, fmt), F.flush(c, fmt)
        with np.errstate(invalid="ignore"):
            return f(a, c)
    if not _packed(t):
        return one

    def two(x, y):
        xl, xh = _halves(x)
        yl, yh = _halves(y)
        return one(xl, yl), one(xh, yh)
    return two


_STAND_IN = {"ex2": np.exp2, "tanh": np.tanh, "rcp": lambda x: 1.0 / x, "sqrt": np.sqrt,
             "rsqrt": lambda x: 1.0 / np.sqrt(x), "lg2": np.log2, "sin": np.sin, "cos": np.cos}


def half_approx(ins, b, prog):
    t = T.instr_type(ins.mods, ins.line)
    model = sfu_model(ins.name)
    if model is not None:
        return elementwise(ins, b, model, _storage(t), nsrc=1)
    if ins.opcode not in _STAND_IN:
        raise unsupported(ins)
    fmt = half_format(t)
    ftz = "ftz" in ins.mods
    fn = _STAND_IN[ins.opcode]
    prog.notes.add(f"{ins.name}: not proven exact (no measured model in layoutsim.numerics.sfu); "
                   f"computed as the correctly rounded value it approximates")

    def f(x):
        v = decode(x, fmt)
        with np.errstate(all="ignore"):
            return F.round_to(fn(F.flush(v, fmt) if ftz else v), fmt, "rn", ftz)
    return dict(elementwise(ins, b, lanes(f, t), _storage(t), nsrc=1),
                info={"approx": "not proven exact"})


HALF_TYPES = ("f16", "bf16", "f16x2", "bf16x2")
