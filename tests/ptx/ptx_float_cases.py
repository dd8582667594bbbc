"""Floating-point instruction cases for test_ptx_alu_float.py, with references from ptx_fref.

Sources: a, b, c f32 bits; A, B, C f64 bits; x, y, z f16 bits; u, v, w bf16 bits; i s32; I u64.
Each case: (name, PTX template, (result kind, sources...), reference(*bits) -> result bits or None
to skip that input). Result kinds: "f" f32, "d" f64, "h" 16-bit, "r" u32, "l" u64.
"""
from fractions import Fraction

import ptx_fref as R

MODES = ("rn", "rz", "rm", "rp")
SRC = {"a": ("f", "f32"), "b": ("f", "f32"), "c": ("f", "f32"), "A": ("d", "f64"), "B": ("d", "f64"),
       "C": ("d", "f64"), "x": ("h", "f16"), "y": ("h", "f16"), "z": ("h", "f16"),
       "u": ("h", "bf16"), "v": ("h", "bf16"), "w": ("h", "bf16"), "i": ("r", "s32"), "I": ("l", "u64")}


class NanInput(Exception):
    """An f64 operation on a NaN operand: its payload rule is not what these tests check."""


def _d(bits, fmt, ftz=False):
    v = R.decode(bits, fmt)
    if fmt == "f64" and v.is_nan:
        raise NanInput
    return R.flush(v, fmt) if ftz else v


def _binop(op, fmt, mode, ftz=False, sat=False):
    def ref(x, y):
        a, b = _d(x, fmt, ftz), _d(y, fmt, ftz)
        if op == "add":
            r = R.add(a, b, mode)
        elif op == "sub":
            r = R.add(a, R.neg(b), mode)
        elif op == "mul":
            r = R.mul(a, b)
        else:
            r = R.div(a, b)
        return R.encode(r, fmt, mode, ftz, sat)
    return ref


def _fma(fmt, mode, ftz=False, sat=False, relu=False):
    def ref(x, y, z):
        r = R.fma(_d(x, fmt, ftz), _d(y, fmt, ftz), _d(z, fmt, ftz), mode)
        if relu and r.kind == "num" and r.value < 0:
            r = R.V("num", Fraction(0))
        if relu and r.kind == "inf" and r.neg:
            r = R.V("num", Fraction(0))
        return R.encode(r, fmt, mode, ftz, sat)
    return ref


def _cvt_f(src, dst, mode, ftz=False, sat=False, relu=False, satfinite=False):
    def ref(x):
        v = _d(x, src, ftz and src == "f32")
        if relu and v.kind != "nan" and v.sign:
            v = R.V("num", Fraction(0))
        if satfinite and v.kind != "nan":
            e, m = R.FMT[dst]
            bias = (1 << (e - 1)) - 1
            mx = Fraction(2) ** bias * (2 - Fraction(1, 1 << m)) if dst != "e4m3" else Fraction(448)
            if v.is_inf or abs(v.value) > mx:
                v = R.V("num", -mx if v.sign else mx)
        return R.encode(v, dst, mode, ftz and dst == "f32", sat)
    return ref


def _cvt_int(src, bits, signed, rnd, ftz=False):
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)

    def ref(x):
        v = _d(x, src, ftz)
        if v.is_nan:
            return 0 if (src != "f64" and bits < 64) else 1 << (bits - 1)
        if v.is_inf:
            n = lo if v.neg else hi
        else:
            f = v.value
            fl = f.numerator // f.denominator
            n = {"rzi": int(f), "rmi": fl, "rpi": -((-f.numerator) // f.denominator),
                 "rni": _rne(f)}[rnd]
            n = max(lo, min(hi, n))
        return n & ((1 << bits) - 1)
    return ref


def _rne(f):
    fl = f.numerator // f.denominator
    r = f - fl
    if r > Fraction(1, 2) or (r == Fraction(1, 2) and fl & 1):
        return fl + 1
    return fl


def _int_to_f(dst, mode, signed, bits):
    def ref(n):
        if signed and n >> (bits - 1):
            n -= 1 << bits
        return R.encode(R.V("num", Fraction(n)), dst, mode)
    return ref


def _minmax(fmt, is_min, nan_mode=False, ftz=False):
    def ref(x, y):
        r = R.minmax(_d(x, fmt, ftz), _d(y, fmt, ftz), is_min, nan_mode)
        if r.kind == "nan":
            return R.CANON.get(fmt, None) if fmt in R.CANON else None
        return R.encode(r, fmt, "rn", ftz)
    return ref


def _cmp(fmt, cmp):
    """PTX ISA 9.3.1.2: ordered comparisons are false on NaN, the ...u ones true; num/nan test."""
    def ref(x, y):
        a, b = _d(x, fmt), _d(y, fmt)
        unordered = a.is_nan or b.is_nan
        if cmp in ("num", "nan"):
            return int(unordered == (cmp == "nan"))
        if unordered:
            return int(cmp.endswith("u"))
        base = cmp[:-1] if cmp.endswith("u") else cmp
        ka = (float("-inf") if a.neg else float("inf")) if a.is_inf else a.value
        kb = (float("-inf") if b.neg else float("inf")) if b.is_inf else b.value
        return int({"eq": ka == kb, "ne": ka != kb, "lt": ka < kb, "le": ka <= kb, "gt": ka > kb,
                    "ge": ka >= kb}[base])
    return ref


def _sqrt(fmt, mode, ftz=False):
    return lambda x: R.sqrt_bits(_d(x, fmt, ftz), fmt, mode, ftz)


def _rcp(fmt, mode, ftz=False):
    return lambda x: R.encode(R.div(R.V("num", Fraction(1)), _d(x, fmt, ftz)), fmt, mode, ftz)


def _lanes2(f):
    """Apply a 16-bit reference to both halves of packed operands."""
    def ref(*xs):
        lo = f(*[x & 0xFFFF for x in xs])
        hi = f(*[x >> 16 for x in xs])
        return lo | (hi << 16)
    return ref


CASES = []
for op in ("add", "sub", "mul"):
    for mode in MODES:
        CASES.append((f"{op}.{mode}.f32", f"{op}.{mode}.f32 {{d}}, {{a}}, {{b}};", ("f", "a", "b"),
                      _binop(op, "f32", mode)))
        CASES.append((f"{op}.{mode}.f64", f"{op}.{mode}.f64 {{d}}, {{A}}, {{B}};", ("d", "A", "B"),
                      _binop(op, "f64", mode)))
    CASES.append((f"{op}.rn.ftz.f32", f"{op}.rn.ftz.f32 {{d}}, {{a}}, {{b}};", ("f", "a", "b"),
                  _binop(op, "f32", "rn", ftz=True)))
    CASES.append((f"{op}.rz.ftz.sat.f32", f"{op}.rz.ftz.sat.f32 {{d}}, {{a}}, {{b}};", ("f", "a", "b"),
                  _binop(op, "f32", "rz", ftz=True, sat=True)))
for mode in MODES:
    CASES.append((f"fma.{mode}.f32", f"fma.{mode}.f32 {{d}}, {{a}}, {{b}}, {{c}};", ("f", "a", "b", "c"),
                  _fma("f32", mode)))
    CASES.append((f"fma.{mode}.f64", f"fma.{mode}.f64 {{d}}, {{A}}, {{B}}, {{C}};", ("d", "A", "B", "C"),
                  _fma("f64", mode)))
    CASES.append((f"div.{mode}.f32", f"div.{mode}.f32 {{d}}, {{a}}, {{b}};", ("f", "a", "b"),
                  _binop("div", "f32", mode)))
    CASES.append((f"div.{mode}.f64", f"div.{mode}.f64 {{d}}, {{A}}, {{B}};", ("d", "A", "B"),
                  _binop("div", "f64", mode)))
    CASES.append((f"sqrt.{mode}.f32", f"sqrt.{mode}.f32 {{d}}, {{a}};", ("f", "a"), _sqrt("f32", mode)))
    CASES.append((f"sqrt.{mode}.f64", f"sqrt.{mode}.f64 {{d}}, {{A}};", ("d", "A"), _sqrt("f64", mode)))
    CASES.append((f"rcp.{mode}.f32", f"rcp.{mode}.f32 {{d}}, {{a}};", ("f", "a"), _rcp("f32", mode)))
CASES += [
    ("fma.rn.ftz.sat.f32", "fma.rn.ftz.sat.f32 {d}, {a}, {b}, {c};", ("f", "a", "b", "c"),
     _fma("f32", "rn", True, True)),
    ("div.rn.ftz.f32", "div.rn.ftz.f32 {d}, {a}, {b};", ("f", "a", "b"), _binop("div", "f32", "rn", ftz=True)),
    ("min.f32", "min.f32 {d}, {a}, {b};", ("f", "a", "b"), _minmax("f32", True)),
    ("max.f32", "max.f32 {d}, {a}, {b};", ("f", "a", "b"), _minmax("f32", False)),
    ("min.NaN.f32", "min.NaN.f32 {d}, {a}, {b};", ("f", "a", "b"), _minmax("f32", True, True)),
    ("max.ftz.f32", "max.ftz.f32 {d}, {a}, {b};", ("f", "a", "b"), _minmax("f32", False, ftz=True)),
    ("max.f64", "max.f64 {d}, {A}, {B};", ("d", "A", "B"), _minmax("f64", False)),
    ("neg.f64", "neg.f64 {d}, {A};", ("d", "A"), lambda x: x ^ (1 << 63)),
    ("abs.f64", "abs.f64 {d}, {A};", ("d", "A"), lambda x: x & ~(1 << 63)),
    ("copysign.f32", "copysign.f32 {d}, {a}, {b};", ("f", "a", "b"), lambda x, y: (y & 0x7FFFFFFF) | (x & 0x80000000)),
]
for cmp in ("eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"):
    CASES.append((f"setp.{cmp}.f32", f"{{{{ .reg .pred p; setp.{cmp}.f32 p, {{a}}, {{b}}; selp.u32 {{d}}, 1, 0, p; }}}}",
                  ("r", "a", "b"), _cmp("f32", cmp)))
# conversions
for mode in MODES:
    CASES.append((f"cvt.{mode}.f16.f32", f"cvt.{mode}.f16.f32 {{d}}, {{a}};", ("h", "a"), _cvt_f("f32", "f16", mode)))
    CASES.append((f"cvt.{mode}.f32.f64", f"cvt.{mode}.f32.f64 {{d}}, {{A}};", ("f", "A"), _cvt_f("f64", "f32", mode)))
    CASES.append((f"cvt.{mode}.f32.s32", f"cvt.{mode}.f32.s32 {{d}}, {{i}};", ("f", "i"), _int_to_f("f32", mode, True, 32)))
    CASES.append((f"cvt.{mode}.f32.u64", f"cvt.{mode}.f32.u64 {{d}}, {{I}};", ("f", "I"), _int_to_f("f32", mode, False, 64)))
    CASES.append((f"cvt.{mode}.f64.u64", f"cvt.{mode}.f64.u64 {{d}}, {{I}};", ("d", "I"), _int_to_f("f64", mode, False, 64)))
for rnd in ("rni", "rzi", "rmi", "rpi"):
    CASES.append((f"cvt.{rnd}.s32.f32", f"cvt.{rnd}.s32.f32 {{d}}, {{a}};", ("r", "a"), _cvt_int("f32", 32, True, rnd)))
    CASES.append((f"cvt.{rnd}.u32.f32", f"cvt.{rnd}.u32.f32 {{d}}, {{a}};", ("r", "a"), _cvt_int("f32", 32, False, rnd)))
    CASES.append((f"cvt.{rnd}.s64.f64", f"cvt.{rnd}.s64.f64 {{d}}, {{A}};", ("l", "A"), _cvt_int("f64", 64, True, rnd)))
    CASES.append((f"cvt.{rnd}.f32.f32", f"cvt.{rnd}.f32.f32 {{d}}, {{a}};", ("f", "a"),
                  (lambda rnd: lambda x: R.encode(
                      R.decode(x, "f32") if R.decode(x, "f32").kind != "num" else
                      R.V("num", Fraction({"rni": _rne, "rzi": int, "rmi": lambda f: f.numerator // f.denominator,
                                           "rpi": lambda f: -((-f.numerator) // f.denominator)}[rnd](R.decode(x, "f32").value)),
                          neg=R.decode(x, "f32").sign), "f32"))(rnd)))
CASES += [
    ("cvt.rzi.ftz.s32.f32", "cvt.rzi.ftz.s32.f32 {d}, {a};", ("r", "a"), _cvt_int("f32", 32, True, "rzi", True)),
    ("cvt.f32.f16", "cvt.f32.f16 {d}, {x};", ("f", "x"), _cvt_f("f16", "f32", "rn")),
    ("cvt.f64.f32", "cvt.f64.f32 {d}, {a};", ("d", "a"), lambda x: R.encode(R.decode(x, "f32"), "f64")
     if not R.decode(x, "f32").is_nan else None),
    ("cvt.rn.sat.f32.f64", "cvt.rn.sat.f32.f64 {d}, {A};", ("f", "A"), _cvt_f("f64", "f32", "rn", sat=True)),
    ("cvt.rn.ftz.f32.f64", "cvt.rn.ftz.f32.f64 {d}, {A};", ("f", "A"), _cvt_f("f64", "f32", "rn", ftz=True)),
    ("cvt.rn.bf16.f32", "cvt.rn.bf16.f32 {d}, {a};", ("h", "a"), _cvt_f("f32", "bf16", "rn")),
    ("cvt.rz.bf16.f32", "cvt.rz.bf16.f32 {d}, {a};", ("h", "a"), _cvt_f("f32", "bf16", "rz")),
    ("cvt.rn.relu.f16.f32", "cvt.rn.relu.f16.f32 {d}, {a};", ("h", "a"), _cvt_f("f32", "f16", "rn", relu=True)),
    ("cvt.rn.satfinite.f16.f32", "cvt.rn.satfinite.f16.f32 {d}, {a};", ("h", "a"),
     _cvt_f("f32", "f16", "rn", satfinite=True)),
    ("cvt.rna.tf32.f32", "cvt.rna.tf32.f32 {d}, {a};", ("r", "a"),
     lambda x: None if R.decode(x, "f32").is_nan else R.encode(R.decode(x, "f32"), "tf32", "rna")),
    ("cvt.rn.f16x2.f32", "cvt.rn.f16x2.f32 {d}, {a}, {b};", ("r", "a", "b"),
     lambda x, y: _cvt_f("f32", "f16", "rn")(y) | (_cvt_f("f32", "f16", "rn")(x) << 16)),
    ("cvt.rn.satfinite.e4m3x2.f32", "{{ .reg .b16 t; cvt.rn.satfinite.e4m3x2.f32 t, {a}, {b}; "
                                    "cvt.u32.u16 {d}, t; }}", ("r", "a", "b"),
     lambda x, y: _cvt_f("f32", "e4m3", "rn", satfinite=True)(y) | (_cvt_f("f32", "e4m3", "rn", satfinite=True)(x) << 8)),
    ("cvt.rn.satfinite.e5m2x2.f32", "{{ .reg .b16 t; cvt.rn.satfinite.e5m2x2.f32 t, {a}, {b}; "
                                    "cvt.u32.u16 {d}, t; }}", ("r", "a", "b"),
     lambda x, y: None if R.decode(x, "f32").is_nan or R.decode(y, "f32").is_nan else
     _cvt_f("f32", "e5m2", "rn", satfinite=True)(y) | (_cvt_f("f32", "e5m2", "rn", satfinite=True)(x) << 8)),
]
CASES += [
    ("cvt.rn.satfinite.e4m3x2.f16x2", "{{ .reg .b32 p; .reg .b16 t; mov.b32 p, {{{x}, {y}}}; "
                                      "cvt.rn.satfinite.e4m3x2.f16x2 t, p; cvt.u32.u16 {d}, t; }}", ("r", "x", "y"),
     lambda x, y: _cvt_f("f16", "e4m3", "rn", satfinite=True)(x) | (_cvt_f("f16", "e4m3", "rn", satfinite=True)(y) << 8)),
    ("cvt.rn.f16x2.e4m3x2", "{{ .reg .b16 t; cvt.u16.u32 t, {i}; cvt.rn.f16x2.e4m3x2 {d}, t; }}", ("r", "i"),
     lambda x: _cvt_f("e4m3", "f16", "rn")(x & 0xFF) | (_cvt_f("e4m3", "f16", "rn")((x >> 8) & 0xFF) << 16)),
]
# half precision
CASES += [
    ("add.rn.f16", "add.rn.f16 {d}, {x}, {y};", ("h", "x", "y"), _binop("add", "f16", "rn")),
    ("sub.rn.f16", "sub.rn.f16 {d}, {x}, {y};", ("h", "x", "y"), _binop("sub", "f16", "rn")),
    ("mul.rn.f16", "mul.rn.f16 {d}, {x}, {y};", ("h", "x", "y"), _binop("mul", "f16", "rn")),
    ("mul.rn.ftz.sat.f16", "mul.rn.ftz.sat.f16 {d}, {x}, {y};", ("h", "x", "y"),
     _binop("mul", "f16", "rn", ftz=True, sat=True)),
    ("fma.rn.f16", "fma.rn.f16 {d}, {x}, {y}, {z};", ("h", "x", "y", "z"), _fma("f16", "rn")),
    ("fma.rn.relu.f16", "fma.rn.relu.f16 {d}, {x}, {y}, {z};", ("h", "x", "y", "z"), _fma("f16", "rn", relu=True)),
    ("add.rn.bf16", "add.rn.bf16 {d}, {u}, {v};", ("h", "u", "v"), _binop("add", "bf16", "rn")),
    ("mul.rn.bf16", "mul.rn.bf16 {d}, {u}, {v};", ("h", "u", "v"), _binop("mul", "bf16", "rn")),
    ("fma.rn.bf16", "fma.rn.bf16 {d}, {u}, {v}, {w};", ("h", "u", "v", "w"), _fma("bf16", "rn")),
    ("min.f16", "min.f16 {d}, {x}, {y};", ("h", "x", "y"), _minmax("f16", True)),
    ("max.NaN.bf16", "max.NaN.bf16 {d}, {u}, {v};", ("h", "u", "v"), _minmax("bf16", False, True)),
    ("neg.f16", "neg.f16 {d}, {x};", ("h", "x"), lambda x: x ^ 0x8000),
    ("abs.bf16", "abs.bf16 {d}, {u};", ("h", "u"), lambda x: x & 0x7FFF),
    ("fma.rn.f16x2", "{{ .reg .b32 p, q, r, s; mov.b32 p, {{{x}, {y}}}; mov.b32 q, {{{y}, {z}}}; "
                     "mov.b32 r, {{{z}, {x}}}; fma.rn.f16x2 s, p, q, r; mov.b32 {d}, s; }}", ("r", "x", "y", "z"),
     lambda x, y, z: _lanes2(_fma("f16", "rn"))(x | (y << 16), y | (z << 16), z | (x << 16))),
    ("add.rn.bf16x2", "{{ .reg .b32 p, q, s; mov.b32 p, {{{u}, {v}}}; mov.b32 q, {{{v}, {w}}}; "
                      "add.rn.bf16x2 s, p, q; mov.b32 {d}, s; }}", ("r", "u", "v", "w"),
     lambda u, v, w: _lanes2(_binop("add", "bf16", "rn"))(u | (v << 16), v | (w << 16))),
    ("setp.lt.f16x2", "{{ .reg .b32 p, q; .reg .pred lo, hi; mov.b32 p, {{{x}, {y}}}; mov.b32 q, {{{y}, {x}}}; "
                      "setp.lt.f16x2 lo|hi, p, q; selp.u32 {d}, 1, 0, lo; selp.u32 {d}, 2, {d}, hi; }}",
     ("r", "x", "y"), lambda x, y: _cmp("f16", "lt")(y, x) * 2 if _cmp("f16", "lt")(y, x) else _cmp("f16", "lt")(x, y)),
]

_C = {"f": ("float", "f", "__uint_as_float({})", "__float_as_uint({})", "unsigned"),
      "d": ("double", "d", "__longlong_as_double({})", "__double_as_longlong({})", "unsigned long long"),
      "h": ("unsigned short", "h", "(unsigned short)({})", "{}", "unsigned"),
      "r": ("unsigned", "r", "{}", "{}", "unsigned"),
      "l": ("unsigned long long", "l", "{}", "{}", "unsigned long long")}


def kernel_source():
    lines = ['extern "C" __global__ void alu_float(const unsigned* a, const unsigned* b, const unsigned* c,',
             "    const unsigned long long* A, const unsigned long long* B, const unsigned long long* C,",
             "    const unsigned* xyz, const unsigned* uvw, const unsigned long long* I,",
             "    unsigned long long* out, int n) {",
             "  int t = blockIdx.x * blockDim.x + threadIdx.x;",
             "  if (t >= n) return;",
             "  unsigned va = a[t], vb = b[t], vc = c[t], vi = a[t];",
             "  unsigned long long vA = A[t], vB = B[t], vC = C[t], vI = I[t];",
             "  unsigned short vx = xyz[t] & 0xffff, vy = xyz[t] >> 16, vz = xyz[(t + 7) % n] & 0xffff;",
             "  unsigned short vu = uvw[t] & 0xffff, vv = uvw[t] >> 16, vw = uvw[(t + 7) % n] & 0xffff;"]
    var = {"a": "va", "b": "vb", "c": "vc", "A": "vA", "B": "vB", "C": "vC", "x": "vx", "y": "vy", "z": "vz",
           "u": "vu", "v": "vv", "w": "vw", "i": "vi", "I": "vI"}
    for k, (name, tmpl, kinds, _) in enumerate(CASES):
        out, srcs = kinds[0], kinds[1:]
        args = {s: f"%{j + 1}" for j, s in enumerate(srcs)}
        text = tmpl.format(d="%0", **args)
        ins = []
        for s in srcs:
            kind = SRC[s][0]
            ctype, con, conv, _, _ = _C[kind]
            ins.append(f'"{con}"({conv.format(var[s])})')
        ctype, con, _, back, store = _C[out]
        lines.append(f"  {{ {ctype} r; asm volatile(\"{text}\" : \"={con}\"(r) : {', '.join(ins)}); "
                     f"out[{k} * n + t] = ({store}){back.format('r')}; }}  // {name}")
    lines.append("}")
    return "\n".join(lines) + "\n"
