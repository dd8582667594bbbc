"""mov, cvt and cvta (PTX ISA 9.0, 9.7.9.3/4, 9.7.9.20, 9.7.9.21).

cvt rules from 9.7.9.21: float-to-integer rounds with .rni/.rzi/.rmi/.rpi and clamps to the
destination range, NaN gives 0 (or 1 << (width-1) for an .f64 source or a 64-bit
destination); integer-to-float and narrowing float-to-float round with .rn/.rz/.rm/.rp (.rna
for tf32); .sat clamps floats to [0, 1] (NaN -> +0) and integers to the destination range;
.relu clamps negative results to 0; .satfinite clamps overflow to the largest finite value.
Packed destinations (f16x2, bf16x2, e4m3x2, e5m2x2) put the first source in the upper half.
"""
from fractions import Fraction

import numpy as np

from ..errors import LayoutsimError
from ..formats import get_format
from . import fround as F
from . import state as S
from . import types as T
from .builders import elementwise, exactly, need, unsupported
from .operands import convert_bits
from . import lines

FLOAT_FMT = {"f16": "f16", "bf16": "bf16", "f32": "f32", "f64": "f64", "tf32": "tf32",
             "e4m3": "e4m3", "e5m2": "e5m2"}
IRND = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}
FRND = ("rn", "rna", "rz", "rm", "rp")


# ---- mov --------------------------------------------------------------------------------------
def _mov(ins, b, prog):
    need(ins, 2)
    t = T.instr_type(ins.mods, ins.line)
    dst, src = ins.operands[0], ins.operands[1]
    exactly(ins, 2)
    if src.kind == "vec":                        # pack: mov.b32 d, {lo, hi}
        parts = src.value
        w = _part_bits(ins, t, parts)
        et = T.get(f"b{w}")
        rd = [b.read(p, et, ins) for p in parts]
        wr = b.write(dst, t, ins)

        def pack(bt, g, full):
            if t.bits == 128:                    # .b128: the parts' bytes, the first part lowest
                vals = [np.broadcast_to(np.asarray(r(bt)), (bt.T,)).astype(f"<u{w // 8}") for r in rd]
                return wr(bt, np.ascontiguousarray(np.stack(vals, 1)).view(t.storage)[:, 0], g, full)
            acc = np.zeros(bt.T, np.uint64)
            for i, r in enumerate(rd):
                acc |= np.broadcast_to(np.asarray(r(bt)), (bt.T,)).astype(np.uint64) << np.uint64(i * w)
            wr(bt, acc.astype(t.storage), g, full)
        return {"fn": pack}
    if dst.kind == "vec":                        # unpack: mov.b64 {lo, hi}, d
        parts = dst.value
        w = _part_bits(ins, t, parts)
        et = T.get(f"b{w}")
        rd = b.read(src, t, ins)
        wr = [b.write(p, et, ins) for p in parts]

        def unpack(bt, g, full):
            if t.bits == 128:
                v = np.ascontiguousarray(np.broadcast_to(np.asarray(rd(bt)), (bt.T,))).view(f"<u{w // 8}")
                for i, f in enumerate(wr):
                    f(bt, v.reshape(bt.T, -1)[:, i].astype(et.storage), g, full)
                return
            v = np.asarray(rd(bt)).astype(np.uint64)
            for i, f in enumerate(wr):
                f(bt, ((v >> np.uint64(i * w)) & np.uint64((1 << w) - 1)).astype(et.storage), g, full)
        return {"fn": unpack}
    return elementwise(ins, b, lambda x: x, t, nsrc=1)


def _part_bits(ins, t, parts):
    """Bits of each register a vector mov packs or unpacks: 2 or 4 of them, splitting the type."""
    if len(parts) not in (2, 4) or t.bits // len(parts) < 8:
        raise LayoutsimError(f"{lines.of(ins)}: {ins.name} packs its {t.bits} bits into 2 or 4 registers, "
                             f"not {len(parts)}: {ins.text}")
    return t.bits // len(parts)


# ---- cvta ---------------------------------------------------------------------------------------
# cvta.param: the generic address of a kernel parameter (what nvcc emits for &tmap of a
# __grid_constant__ parameter); call-block .param variables have no generic address here
_WINDOW = {"shared": S.SHARED_WINDOW, "local": S.LOCAL_WINDOW, "global": 0, "const": 0,
           "param": S.PARAM_WINDOW}


def _cvta(ins, b, prog):
    to = "to" in ins.mods
    space = next((m.split("::")[0] for m in ins.mods if m.split("::")[0] in ("shared", "local", "global",
                                                                             "const", "param")), None)
    if space is None:
        raise unsupported(ins, f"state space {space}")
    t = T.instr_type(ins.mods, ins.line)
    base = _WINDOW[space]
    ut = T.get(f"u{t.bits}")
    if to:
        return elementwise(ins, b, lambda x: (x.astype(np.int64) - base).astype(ut.dtype), ut, nsrc=1)
    return elementwise(ins, b, lambda x: (x.astype(np.int64) + base).astype(ut.dtype), ut, nsrc=1)


# ---- cvt ----------------------------------------------------------------------------------------
def _is_float(t):
    return t.name in FLOAT_FMT or t.kind == "h"


def _cvt(ins, b, prog):
    tys = T.types_in(ins.mods)
    if len(tys) != 2:
        raise unsupported(ins, "cvt needs a destination and a source type")
    dt, st = tys
    ftz, sat = "ftz" in ins.mods, "sat" in ins.mods
    relu, satfinite = "relu" in ins.mods, "satfinite" in ins.mods
    irnd = next((m for m in ins.mods if m in IRND), None)
    frnd = next((m for m in ins.mods if m in FRND), None)
    if dt.kind == "h" or (st.kind == "h" and dt.kind == "h"):
        return _cvt_packed(ins, b, dt, st, frnd, relu, satfinite)
    if st.kind == "h":
        raise unsupported(ins)
    if not _is_float(dt) and not _is_float(st):
        return _int_to_int(ins, b, dt, st, sat)
    if _is_float(st) and not _is_float(dt):
        return _float_to_int(ins, b, dt, st, irnd or "rzi", ftz)
    if not _is_float(st):
        return _int_to_float(ins, b, dt, st, frnd or "rn", sat)
    return _float_to_float(ins, b, dt, st, frnd, irnd, ftz, sat, relu, satfinite)


def _int_to_int(ins, b, dt, st, sat):
    def f(x):
        x = np.asarray(x)
        if sat:
            lo, hi = _range(dt)
            xi = x.astype(object) if x.dtype.itemsize == 8 else x.astype(np.int64)
            clipped = np.clip(xi, lo, hi)
            return np.asarray(clipped).astype(np.int64 if dt.signed else np.uint64).astype(dt.dtype)
        return convert_bits(x, x.dtype, dt.dtype, st.signed)
    return elementwise(ins, b, f, st, dt, nsrc=1)


def _range(t):
    if t.signed:
        return -(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1
    return 0, (1 << t.bits) - 1


def _decode(x, t):
    if t.name in ("f32", "f64"):
        return np.asarray(x).astype(np.float64)
    return F.decode_raw(x, t.name)


def _float_to_int(ins, b, dt, st, irnd, ftz):
    lo, hi = _range(dt)
    nan_val = 0 if (st.name != "f64" and dt.bits < 64) else (1 << (dt.bits - 1))
    rnd = IRND[irnd]
    src_t = st if st.name in ("f32", "f64") else T.get(f"b{st.bits}")

    def f(x):
        v = _decode(x, st)
        if ftz and st.name == "f32":
            v = F.flush(v, "f32")
        with np.errstate(invalid="ignore"):
            r = rnd(v)
            nan = np.isnan(r)
            big, small = r >= float(hi) + 1, r < float(lo)
        r = np.where(nan | big | small, 0.0, r)
        if dt.bits == 64:
            out = r.astype(np.int64 if dt.signed else np.uint64)
            out = np.where(big, np.array(hi).astype(out.dtype), np.where(small, np.array(lo).astype(out.dtype), out))
            return np.where(nan, np.array(nan_val, np.uint64).astype(out.dtype), out).astype(dt.dtype)
        out = r.astype(np.int64)
        out = np.where(big, hi, np.where(small, lo, out))
        out = np.where(nan, nan_val, out)
        return (out & ((1 << dt.bits) - 1)).astype(np.uint64).astype(np.dtype(f"u{dt.bits // 8}")).view(dt.dtype)
    return elementwise(ins, b, f, src_t, dt, nsrc=1)


def int_to_f64_odd(v):
    """Integers (int64/uint64) -> float64 exact, or rounded to odd when wider than 53 bits."""
    v = np.asarray(v)
    f = v.astype(np.float64)
    wide = np.abs(f) >= 2.0 ** 53
    if np.any(wide):
        f = f.copy()                              # flat indices: v may be 0-d (an immediate)
        for i in np.flatnonzero(wide):
            n = int(v.flat[i])
            r = float(n)                          # nearest
            if Fraction(r) != n and (int(np.asarray(r).view(np.uint64)) & 1) == 0:
                r = float(np.nextafter(r, np.inf if n > Fraction(r) else -np.inf))
            f.flat[i] = r
    return f


def _int_to_float(ins, b, dt, st, mode, sat):
    fmt = FLOAT_FMT[dt.name]

    def f(x):
        x = np.asarray(x)
        if fmt == "f64":
            v = x.astype(np.float64)
            if mode != "rn":
                wide = np.abs(v) >= 2.0 ** 53
                if np.any(wide):
                    v = v.copy()
                    for i in F.indices(wide):
                        v[i] = F._exact_f64(Fraction(int(x[i])), mode)
            return np.clip(v, 0.0, 1.0) if sat else v
        raw = F.round_to(int_to_f64_odd(x), fmt, mode, False, sat)
        return raw.view(np.float32) if fmt == "f32" else raw
    return elementwise(ins, b, f, st, dt if fmt in ("f32", "f64") else T.get(f"b{dt.bits}"), nsrc=1)


def _float_to_float(ins, b, dt, st, frnd, irnd, ftz, sat, relu, satfinite):
    sfmt, dfmt = FLOAT_FMT[st.name], FLOAT_FMT[dt.name]
    src_t = st if st.name in ("f32", "f64") else T.get(f"b{st.bits}")
    dst_t = dt if dt.name in ("f32", "f64") else T.get(f"b{dt.bits}")
    mode = frnd or "rn"
    if sfmt in ("f16", "bf16") and dfmt == "f32" and not (irnd or ftz or sat or relu or satfinite):
        return elementwise(ins, b, _widen_f16 if sfmt == "f16" else _widen_bf16, src_t, dst_t, nsrc=1)

    def f(x):
        v = _decode(x, st)
        if ftz and sfmt == "f32":
            v = F.flush(v, "f32")
        if irnd:                                  # same-size rounding to an integral value
            v = IRND[irnd](v)
        return _to_float(v, dfmt, mode, ftz and dfmt == "f32", sat, relu, satfinite)
    return elementwise(ins, b, f, src_t, dst_t, nsrc=1)


def _widen_f16(x):
    """cvt.f32.f16: exact (every f16 is an f32; no rounding, no f32 subnormal), a NaN the canonical
    one, as _to_float's rounding gives: numpy's own widening, a few calls instead of a dozen."""
    return _canon_f32(np.asarray(x).astype(np.uint16, copy=False).view(np.float16).astype(np.float32))


def _widen_bf16(x):
    """cvt.f32.bf16: the bits moved up 16 places (exact), a NaN the canonical one."""
    return _canon_f32((np.asarray(x).astype(np.uint32) << np.uint32(16)).view(np.float32))


def _bf16_rn(v):
    """f32 values -> bf16 bits (uint32), rounded to nearest even as _to_float rounds them: the 16
    bits dropped decide, a tie goes to the even upper half (a carry into the exponent is the
    next binade, or infinity); a NaN the canonical one. What cvt.rn.bf16x2.f32 computes."""
    u = np.asarray(v, np.float32).view(np.uint32)
    r = (u + (np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1)))) >> np.uint32(16)
    nan = np.isnan(np.asarray(v, np.float32))
    if np.count_nonzero(nan):
        r = np.where(nan, np.uint32(F.CANON["bf16"]), r)
    return r.astype(np.uint32)


def _canon_f32(v):
    nan = np.isnan(v)
    if np.count_nonzero(nan):
        return np.where(nan, F.CANON["f32"], v.view(np.uint32)).view(np.float32)
    return v


def _to_float(v, fmt, mode, ftz, sat, relu, satfinite):
    if relu:
        v = np.where(np.isnan(v), v, np.maximum(v, 0.0))
    if satfinite and fmt != "f64":
        mx = get_format(fmt).max_finite
        v = np.where(np.isnan(v), v, np.clip(v, -mx, mx))
    if fmt == "f64":
        v = np.where(np.isnan(v), v, np.clip(v, 0.0, 1.0)) if sat else v
        return np.where(np.isnan(v), 0.0, v) if sat else v
    raw = F.round_to(v, fmt, mode, ftz, sat, canonical=fmt in F.CANON)
    if fmt in ("e4m3", "e5m2"):
        raw = np.where(np.isnan(v), np.uint8(0x7F), raw).astype(np.uint8)
    return raw.view(np.float32) if fmt == "f32" else raw


def _cvt_packed(ins, b, dt, st, frnd, relu, satfinite):
    """cvt to f16x2/bf16x2 (two f32 sources), to e4m3x2/e5m2x2 (two f32 or one f16x2 source),
    and from e4m3x2/e5m2x2 to f16x2."""
    mode = frnd or "rn"
    base = dt.name[:-2]
    half = 16 if dt.name in ("f16x2", "bf16x2") else 8            # bits per packed result
    pack = T.get("b32") if half == 16 else T.get("b16")

    def conv(v):
        r = _to_float(np.asarray(v).astype(np.float64), base, mode, False, False, relu, satfinite)
        return np.asarray(r).astype(pack.dtype)

    if st.name == "f32" and dt.name == "bf16x2" and mode == "rn" and not relu and not satfinite:
        need(ins, 3)                 # the first source goes to the upper half (PTX ISA 9.7.9.21)
        return elementwise(ins, b, lambda a, c: _bf16_rn(c) | (_bf16_rn(a) << np.uint32(16)),
                           T.get("f32"), pack, nsrc=2)
    if st.name == "f32" and dt.name in ("f16x2", "bf16x2", "e4m3x2", "e5m2x2"):
        need(ins, 3)                 # the first source goes to the upper half (PTX ISA 9.7.9.21)
        return elementwise(ins, b, lambda a, c: conv(c) | (conv(a) << pack.dtype.type(half)),
                           T.get("f32"), pack, nsrc=2)
    if dt.name in ("e4m3x2", "e5m2x2") and st.name in ("f16x2", "bf16x2"):
        sf = st.name[:-2]

        def f(a):
            a = np.asarray(a).astype(np.uint32)
            lo, hi = F.decode_raw(a & np.uint32(0xFFFF), sf), F.decode_raw(a >> np.uint32(16), sf)
            return conv(lo) | (conv(hi) << np.uint16(8))
        return elementwise(ins, b, f, T.get("b32"), pack, nsrc=1)
    if dt.name == "f16x2" and st.name in ("e4m3x2", "e5m2x2"):
        sf = st.name[:-2]

        def f(a):
            a = np.asarray(a).astype(np.uint16)
            lo = F.round_to(F.decode_raw(a & np.uint16(0xFF), sf), "f16", "rn")
            hi = F.round_to(F.decode_raw(a >> np.uint16(8), sf), "f16", "rn")
            if relu:
                lo = np.where(lo & np.uint16(0x8000), np.uint16(0), lo)
                hi = np.where(hi & np.uint16(0x8000), np.uint16(0), hi)
            return np.asarray(lo).astype(np.uint32) | (np.asarray(hi).astype(np.uint32) << np.uint32(16))
        return elementwise(ins, b, f, T.get("b16"), T.get("b32"), nsrc=1)
    raise unsupported(ins)
