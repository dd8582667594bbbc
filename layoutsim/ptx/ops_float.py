"""f32 / f64 floating-point instructions (PTX ISA 9.0, 9.7.3), correctly rounded in every mode.

Exact operations go through fround (see its docstring for the argument). Approximate
operations (ex2/lg2/sin/cos/rsqrt/tanh/rcp/sqrt/div .approx, div.full) are hardware-specific:
they are computed by `layoutsim.numerics.sfu` when it models the instruction, else by a
correctly rounded stand-in that is marked "not proven exact" in the run's report.
"""
import sys

import numpy as np

from ..errors import LayoutsimError
from ..numerics import sfu_div
from . import fround as F
from . import types as T
from .builders import division_model, elementwise, sfu_model, unsupported
from .ops_half import half_compare
from . import lines

ROUND = ("rn", "rz", "rm", "rp")


def _mode(ins, default="rn"):
    return next((m for m in ins.mods if m in ROUND), default)


def _fmt(t):
    return "f32" if t.bits == 32 else "f64"


def _in(x, t, ftz):
    x = np.asarray(x)
    if ftz and t.bits == 32:
        return F.flush(x.astype(np.float64), "f32")
    return x.astype(np.float64)


def _out32(r, mode, ftz, sat):
    return F.f32(r, mode, ftz, sat)


def float_arith(ins, b, prog):
    """add, sub, mul, fma/mad, div (f32, f64)."""
    t = T.instr_type(ins.mods, ins.line)
    if t.name not in ("f32", "f64"):
        raise unsupported(ins)
    op = ins.opcode
    mode = _mode(ins)
    ftz, sat = "ftz" in ins.mods, "sat" in ins.mods
    if op in ("fma", "mad") and not any(m in ROUND for m in ins.mods):
        raise unsupported(ins, f"{op}.{t.name} needs a rounding modifier")
    if op == "div" and ("approx" in ins.mods or "full" in ins.mods):
        return approx(ins, b, prog)
    if t.bits == 64:
        if op in ("add", "sub", "mul"):
            return elementwise(ins, b, lambda x, y: F.arith64(op, x, y, mode), t)
        if op == "div":
            return elementwise(ins, b, lambda x, y: F.arith64("div", x, y, mode), t)
        return elementwise(ins, b, lambda x, y, z: F.fma64(x, y, z, mode), t)
    fast = mode == "rn" and not ftz and not sat
    if op in ("add", "sub"):
        s = 1.0 if op == "add" else -1.0
        if fast:
            return elementwise(ins, b, lambda x, y: _canon32(x + y if s > 0 else x - y), t)

        def f(x, y):
            x, y = _in(x, t, ftz), s * _in(y, t, ftz)
            return _out32(F.rm_zero_sign(F.sum_odd(x, y), x, y, mode), mode, ftz, sat)
        return elementwise(ins, b, f, t)
    if op == "mul":
        if fast:
            return elementwise(ins, b, lambda x, y: _canon32(x * y), t)
        return elementwise(ins, b, lambda x, y: _out32(_in(x, t, ftz) * _in(y, t, ftz), mode, ftz, sat), t)
    if op == "div":
        def f(x, y):
            with np.errstate(all="ignore"):
                return _out32(_in(x, t, ftz) / _in(y, t, ftz), mode, ftz, sat)
        return elementwise(ins, b, f, t)

    if fast:
        return elementwise(ins, b, fma32_rn, t)
    return elementwise(ins, b, lambda x, y, z: fma32(x, y, z, t, mode, ftz, sat), t)


def fma32(x, y, z, t, mode, ftz, sat):
    """fma/mad .f32 in any mode: the exact float64 product plus z rounded to odd (fround)."""
    x, y, z = _in(x, t, ftz), _in(y, t, ftz), _in(z, t, ftz)
    with np.errstate(all="ignore"):
        p = x * y                                  # exact
    return _out32(F.rm_zero_sign(F.sum_odd(p, z), p, z, mode), mode, ftz, sat)


_LOW29 = np.uint64((1 << 29) - 1)      # the fraction bits of a float64 below an f32's last bit
_HALF = np.uint64(1 << 28)             # ... of a float64 halfway between two f32 neighbours
_MAG = np.uint64((1 << 63) - 1)        # a float64's bits but its sign
_ONE = np.uint64(1)
_TINY_MAG = np.uint64(int(np.float64(F.MIN_NORMAL["f32"]).view(np.uint64)) - 1)   # |2^-126|'s bits - 1
_INF_MAG = np.uint64(0x7FF0000000000000)    # above it: a NaN


def fma32_rn(x, y, z):
    """fma.rn.f32 (no .ftz/.sat): the exact float64 product plus z, rounded to float64 and then
    to f32. Rounding twice gives the correctly rounded result unless the float64 sum was rounded
    and is an f32 halfway point (its float64 rounding may have made the tie) or an f32 subnormal
    (whose halfway points have fewer bits): where any lane is one of those, the batch takes
    fma32's rounding to odd. (A halfway point that is the exact sum is common: f16/bf16 inputs
    give products of few bits.) Its NaN is the canonical one (_canon32). Registers of one length: the same
    in one compiled loop (fma_kernel.py), once the process has numba up (_compiled)."""
    if _lanes32(x, y, z) and _compiled():
        from .fma_kernel import fma_rn
        r = fma_rn(x, y, z)
        if r is not None:
            return r
        return fma32(x, y, z, T.get("f32"), "rn", False, False)
    return fma32_rn_numpy(x, y, z)


# Starting numba (the first call of any compiled function in a process) takes about 0.5 s, which a
# kernel with no MMA and no new bank pattern never pays; the compiled loop saves about 15 us per
# step. So it is used once something else has imported numba, or after BREAK_EVEN steps that
# could have taken it (a long run, which then gains).
BREAK_EVEN = 32768
_fma_steps = 0


def _compiled():
    global _fma_steps
    if _fma_steps >= BREAK_EVEN or "numba" in sys.modules:
        return True
    _fma_steps += 1
    return False


def fma32_rn_numpy(x, y, z):
    """fma32_rn in numpy calls (any shapes that broadcast: an immediate operand, a scalar)."""
    with np.errstate(all="ignore"):
        p = np.multiply(x, y, dtype=np.float64)
        s = np.asarray(np.add(p, z, dtype=np.float64))
        bits = s.view(np.uint64)
        mag = bits & _MAG
        # an f32 halfway point, or 0 < |s| < 2^-126 (mag - 1 wraps for a zero)
        risky = ((bits & _LOW29) == _HALF) | ((mag - _ONE) < _TINY_MAG)
        # (np.count_nonzero: a fraction of the cost of .any() on a few hundred lanes)
        if np.count_nonzero(risky) and np.count_nonzero(risky & _inexact(p, np.asarray(z, np.float64), s)):
            return fma32(x, y, z, T.get("f32"), "rn", False, False)
        r = s.astype(np.float32)
        nan = mag > _INF_MAG
        if np.count_nonzero(nan):
            return np.where(nan, F.CANON["f32"], r.view(np.uint32)).view(np.float32)
        return r


def _inexact(p, z, s):
    """Where the float64 sum s of p and z was rounded (TwoSum's error, Knuth: exact in float64).
    Where it was not, s is the exact fma and one rounding to f32 is correct, halfway point or
    subnormal: only a rounded sum can be a double rounding."""
    bb = s - p
    return ((p - (s - bb)) + (z - bb)) != 0


def _lanes32(*vs):
    """Whether every one of vs is a 1-D C-contiguous float32 array, all of one length."""
    n = vs[0].shape[0] if isinstance(vs[0], np.ndarray) and vs[0].ndim == 1 else -1
    return all(isinstance(v, np.ndarray) and v.dtype == np.float32 and v.ndim == 1 and v.shape[0] == n
               and v.flags.c_contiguous for v in vs)


def _canon32(v):
    v = np.asarray(v, np.float32)
    nan = np.isnan(v)
    if np.count_nonzero(nan):
        return np.where(nan, F.CANON["f32"], v.view(np.uint32)).view(np.float32)
    return v


def _unary_exact(ins, b, t, f64_fn):
    """rcp/sqrt with IEEE rounding: the float64 result rounded again (exact, see fround)."""
    mode = _mode(ins)
    ftz = "ftz" in ins.mods
    if t.bits == 64:
        if ins.opcode == "sqrt":
            return elementwise(ins, b, lambda x: F.sqrt64(x, mode), t, nsrc=1)
        return elementwise(ins, b, lambda x: F.arith64("div", np.ones_like(x), x, mode), t, nsrc=1)

    def f(x):
        with np.errstate(all="ignore"):
            return _out32(f64_fn(_in(x, t, ftz)), mode, ftz, False)
    return elementwise(ins, b, f, t, nsrc=1)


def _rcp(ins, b, prog):
    t = T.instr_type(ins.mods, ins.line)
    if "approx" in ins.mods:
        return approx(ins, b, prog)
    return _unary_exact(ins, b, t, lambda x: 1.0 / x)


def _sqrt(ins, b, prog):
    t = T.instr_type(ins.mods, ins.line)
    if "approx" in ins.mods:
        return approx(ins, b, prog)
    return _unary_exact(ins, b, t, np.sqrt)


def float_unary(ins, b, prog):
    """abs / neg (f32: the result is an FADD with operand modifiers, so a NaN becomes the
    canonical NaN, PTX ISA 9.7.3.9 'NaN input yields unspecified NaN'; f64: sign bit only)."""
    t = T.instr_type(ins.mods, ins.line)
    ftz = "ftz" in ins.mods
    neg = ins.opcode == "neg"
    if t.bits == 64:
        ut = T.get("u64")
        sign = np.uint64(1 << 63)
        return elementwise(ins, b, (lambda x: x ^ sign) if neg else (lambda x: x & ~sign), ut, nsrc=1)

    def f(x):
        x = _in(x, t, ftz)
        r = -x if neg else np.abs(x)
        return _canon32(r.astype(np.float32))
    return elementwise(ins, b, f, t, nsrc=1)


def float_minmax(ins, b, prog):
    """min/max{.ftz}{.NaN}{.xorsign.abs} (PTX ISA 9.7.3.11/12): a NaN operand is ignored
    unless .NaN; -0.0 < +0.0; a NaN result is canonical."""
    t = T.instr_type(ins.mods, ins.line)
    ftz, nan_mode = "ftz" in ins.mods, "NaN" in ins.mods
    xorsign, absm = "xorsign" in ins.mods, "abs" in ins.mods
    is_min = ins.opcode == "min"
    fmt = _fmt(t)

    def two(x, y):
        # order with -0 < +0: compare (value, sign) pairs
        lt = (x < y) | ((x == y) & np.signbit(x) & ~np.signbit(y))
        pick_x = lt if is_min else ((x > y) | ((x == y) & ~np.signbit(x) & np.signbit(y)))
        r = np.where(pick_x, x, y)
        nx, ny = np.isnan(x), np.isnan(y)
        if not np.count_nonzero(nx | ny):       # no NaN operand: what the selections below give
            return r
        if nan_mode:
            return np.where(nx | ny, np.nan, r)
        return np.where(nx & ny, np.nan, np.where(nx, y, np.where(ny, x, r)))

    def f(*xs):
        vals = [_in(x, t, ftz) for x in xs]
        sgn = None
        if xorsign:
            sgn = np.signbit(vals[0]) ^ np.signbit(vals[1])
        if absm:
            vals = [np.abs(v) for v in vals]
        r = two(vals[0], vals[1])
        if len(vals) == 3:
            r = two(r, vals[2])
        if sgn is not None:
            r = np.where(np.isnan(r), r, np.copysign(np.abs(r), np.where(sgn, -1.0, 1.0)))
        if fmt == "f32":
            return F.round_to(r, "f32", "rn", ftz).view(np.float32)
        return r
    if len(ins.operands) not in (3, 4):
        raise LayoutsimError(f"{lines.of(ins)}: {ins.name} takes a destination and 2 or 3 sources, not "
                             f"{len(ins.operands)} operands: {ins.text}")
    return elementwise(ins, b, f, t)


FLOAT_CMP = {
    "eq": lambda x, y: x == y, "ne": lambda x, y: (x != y) & ~np.isnan(x) & ~np.isnan(y),
    "lt": lambda x, y: x < y, "le": lambda x, y: x <= y, "gt": lambda x, y: x > y,
    "ge": lambda x, y: x >= y,
    "equ": lambda x, y: (x == y) | np.isnan(x) | np.isnan(y), "neu": lambda x, y: ~(x == y),
    "ltu": lambda x, y: ~(x >= y), "leu": lambda x, y: ~(x > y), "gtu": lambda x, y: ~(x <= y),
    "geu": lambda x, y: ~(x < y),
    "num": lambda x, y: ~np.isnan(x) & ~np.isnan(y), "nan": lambda x, y: np.isnan(x) | np.isnan(y),
}   # PTX ISA 9.3.1.2 'Floating Point Comparisons' (ordered and unordered)


def float_compare(ins, t):
    name = next((m for m in ins.mods if m in FLOAT_CMP), None)
    if name is None:
        raise unsupported(ins, "no floating-point comparison")
    f = FLOAT_CMP[name]
    ftz = "ftz" in ins.mods
    if t.name in ("f16", "bf16") or t.kind == "h":      # setp.f16 (ops_int's setp reads either)
        return half_compare(ins, t, f, ftz)

    def cmp(x, y):
        with np.errstate(invalid="ignore"):
            return f(_in(x, t, ftz), _in(y, t, ftz))
    return cmp


def _testp(ins, b, prog):
    t = T.instr_type(ins.mods, ins.line)
    test = next((m for m in ins.mods if m in ("finite", "infinite", "number", "notanumber", "normal",
                                              "subnormal")), None)
    if test is None:
        raise unsupported(ins, "no test (.finite, .infinite, .number, .notanumber, .normal, .subnormal)")
    tiny = F.MIN_NORMAL[_fmt(t)]
    fns = {"finite": np.isfinite, "infinite": np.isinf, "number": lambda x: ~np.isnan(x),
           "notanumber": np.isnan,
           "normal": lambda x: np.isfinite(x) & ((x == 0) | (np.abs(x) >= tiny)),
           "subnormal": lambda x: (x != 0) & (np.abs(x) < tiny)}
    f = fns[test]
    return elementwise(ins, b, lambda x: f(np.asarray(x, np.float64)), t, T.get("pred"), nsrc=1)


def _copysign(ins, b, prog):
    t = T.instr_type(ins.mods, ins.line)
    ut = T.get(f"u{t.bits}")
    sign = ut.dtype.type(1 << (t.bits - 1))
    return elementwise(ins, b, lambda a, x: (x & ~sign) | (a & sign), ut)


# ---- approximate instructions ------------------------------------------------------------------
_STAND_IN = {
    "ex2": np.exp2, "lg2": np.log2, "sin": np.sin, "cos": np.cos, "tanh": np.tanh,
    "rsqrt": lambda x: 1.0 / np.sqrt(x), "rcp": lambda x: 1.0 / x, "sqrt": np.sqrt,
}


def approx(ins, b, prog):
    """An approximate instruction: layoutsim.numerics.sfu if it models it (a model not proven
    exact, e.g. MUFU.LG2's best table model, is reported as such), else a correctly rounded
    stand-in (the result the instruction approximates), reported as not proven exact."""
    t = T.instr_type(ins.mods, ins.line)
    model = sfu_model(ins.name, exact_only=False)
    if ins.opcode == "div" and division_model(ins.name) is not None:
        return elementwise(ins, b, division_model(ins.name), T.get("b32"))
    if model is not None:
        out = elementwise(ins, b, model, T.get(f"b{t.bits}"))
        if model.exact:
            return out
        prog.notes.add(f"{ins.name}: not proven exact: {model.how} (layoutsim.numerics.sfu)")
        return dict(out, info={"approx": "not proven exact"})
    ftz = "ftz" in ins.mods or (t.bits == 64)
    prog.notes.add(f"{ins.name}: not proven exact (no measured model in layoutsim.numerics.sfu); "
                   f"computed as the correctly rounded value it approximates")
    info = {"approx": "not proven exact"}
    if ins.opcode == "div":
        def f(x, y):
            with np.errstate(all="ignore"):
                return _out(_in(x, t, ftz) / _in(y, t, ftz), t, ftz)
        return dict(elementwise(ins, b, f, t), info=info)
    fn = _STAND_IN[ins.opcode]

    def g(x):
        with np.errstate(all="ignore"):
            return _out(fn(_in(x, t, ftz)), t, ftz)
    return dict(elementwise(ins, b, g, t, nsrc=1), info=info)


def _out(r, t, ftz):
    if t.bits == 64:
        return F.flush(r, "f64") if ftz else r
    return F.f32(r, "rn", ftz)




# ---- a mul + add/sub pair ptxas contracted into one FFMA/DFMA (contract.py decides which) --------
def contracted(add, mul, k, b, t):
    """Step fields computing `add` (add/sub.f32/.f64, operand k the product of `mul`) as the FFMA
    or DFMA ptxas emitted: fma(x, y, +-c), rounded once (to nearest, the add's .ftz/.sat). x and y
    are the mul's sources, or for a div.full/div.approx.f32 the inputs of the last FMUL of its SASS
    sequence (MUFU.RCP's r and the scaled dividend: numerics/sfu_div.factors)."""
    d = b.write(add.operands[0], t, add)
    division = mul.opcode == "div"
    x, y = (b.read(o, T.get("b32") if division else t, mul) for o in mul.operands[1:3])
    c = b.read(add.operands[3 - k], t, add)
    neg_p = add.opcode == "sub" and k == 2          # c - x*y
    neg_c = add.opcode == "sub" and k == 1          # x*y - c
    ftz, sat = "ftz" in add.mods, "sat" in add.mods

    def fma(xv, yv, cv):
        if t.bits == 64:
            xv, cv = np.asarray(xv, np.float64), np.asarray(cv, np.float64)
            return F.fma64(-xv if neg_p else xv, yv, -cv if neg_c else cv, "rn")
        if division:
            bits = np.broadcast_arrays(np.asarray(xv, np.uint32), np.asarray(yv, np.uint32))
            xv, yv = (v.view(np.float32) for v in sfu_div.factors(mul.name, *bits))
        xv, yv, cv = _in(xv, t, ftz), _in(yv, t, ftz), _in(cv, t, ftz)
        with np.errstate(all="ignore"):
            p = (-xv if neg_p else xv) * yv                       # exact
        z = -cv if neg_c else cv
        return _out32(F.sum_odd(p, z), "rn", ftz, sat)
    return {"fn": lambda bt, g, full: d(bt, fma(x(bt), y(bt), c(bt)), g, full)}
