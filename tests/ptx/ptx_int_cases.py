"""Integer/logic instruction cases: the PTX instruction, its operands, and an independent
reference written from the PTX ISA 9.0 semantics with Python integers.

kernels/build.py turns this table into alu_int.cu (one inline-asm statement per case, generated, not kept);
test_ptx_alu_int.py runs that kernel's PTX through layoutsim.ptx and compares every result with
the reference. Operand sources: a, b, c random 32-bit words with edge values mixed in; s a small
count (0..69, for shifts and bit positions); t a small count (0..40); A, B, C 64-bit words.
"""
M32, M64 = (1 << 32) - 1, (1 << 64) - 1


def s32(x):
    x &= M32
    return x - (1 << 32) if x >> 31 else x


def s64(x):
    x &= M64
    return x - (1 << 64) if x >> 63 else x


def s16(x):
    x &= 0xFFFF
    return x - (1 << 16) if x >> 15 else x


def _b(x, i, signed):
    v = (x >> (8 * i)) & 0xFF
    return v - 256 if signed and v >> 7 else v


def sat32(x):
    return max(-(1 << 31), min((1 << 31) - 1, x))


def tdiv(a, b):
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def trem(a, b):
    return a - tdiv(a, b) * b


def clz(x, w):
    return w - x.bit_length()


def brev(x, w):
    return int(f"{x:0{w}b}"[::-1], 2)


def bfe(a, pos, ln, w, signed):
    pos, ln = pos & 0xFF, ln & 0xFF
    sbit = 0 if (not signed or ln == 0) else (a >> min(pos + ln - 1, w - 1)) & 1
    out = 0
    for i in range(w):
        bit = (a >> (pos + i)) & 1 if (i < ln and pos + i <= w - 1) else sbit
        out |= bit << i
    return out


def bfi(a, b, pos, ln, w):
    pos, ln = pos & 0xFF, ln & 0xFF
    f = b
    for i in range(ln):
        if pos + i > w - 1:
            break
        f = (f & ~(1 << (pos + i))) | (((a >> i) & 1) << (pos + i))
    return f


def prmt(a, b, c, mode=None):
    tmp = (b << 32) | a
    table = {"f4e": [[0, 1, 2, 3], [1, 2, 3, 4], [2, 3, 4, 5], [3, 4, 5, 6]],
             "b4e": [[0, 7, 6, 5], [1, 0, 7, 6], [2, 1, 0, 7], [3, 2, 1, 0]],
             "rc8": [[0] * 4, [1] * 4, [2] * 4, [3] * 4],
             "ecl": [[0, 1, 2, 3], [1, 1, 2, 3], [2, 2, 2, 3], [3, 3, 3, 3]],
             "ecr": [[0, 0, 0, 0], [0, 1, 1, 1], [0, 1, 2, 2], [0, 1, 2, 3]],
             "rc16": [[0, 1, 0, 1], [2, 3, 2, 3], [0, 1, 0, 1], [2, 3, 2, 3]]}
    out = 0
    for i in range(4):
        if mode is None:
            ctl = (c >> (4 * i)) & 0xF
            byte = (tmp >> ((ctl & 7) * 8)) & 0xFF
            if ctl & 8:
                byte = 0xFF if byte & 0x80 else 0
        else:
            byte = (tmp >> (table[mode][c & 3][i] * 8)) & 0xFF
        out |= byte << (8 * i)
    return out


def lop3(a, b, c, lut):
    out = 0
    for i in range(32):
        k = (((a >> i) & 1) << 2) | (((b >> i) & 1) << 1) | ((c >> i) & 1)
        out |= ((lut >> k) & 1) << i
    return out


def shf(lo, hi, n, left, clamp):
    n = min(n, 32) if clamp else n & 31
    v = (hi << 32) | lo
    return ((v << n) >> 32) & M32 if left else (v >> n) & M32


def bfind(x, w, signed, shiftamt):
    if signed and (x >> (w - 1)) & 1:
        x = ~x & ((1 << w) - 1)
    if x == 0:
        return M32
    pos = x.bit_length() - 1
    return (w - 1 - pos) if shiftamt else pos


def simd16(a, b, f, signed):
    out = 0
    for k in (0, 16):
        x, y = (a >> k) & 0xFFFF, (b >> k) & 0xFFFF
        if signed:
            x, y = s16(x), s16(y)
        out |= (f(x, y) & 0xFFFF) << k
    return out


def mul24(a, b, signed, hi):
    if signed:
        a, b = s32(a << 8) >> 8, s32(b << 8) >> 8
    else:
        a, b = a & 0xFFFFFF, b & 0xFFFFFF
    p = a * b
    return ((p >> 16) if hi else p) & M32


def mad24(a, b, c, signed, hi, sat=False):
    r = s32(mul24(a, b, signed, hi)) + s32(c)
    return sat32(r) & M32 if sat else r & M32


# (name, ptx template with {d} {a} {b} {c} placeholders, operand kinds, reference)
# kinds: "r" u32 word, "l" u64 word; the tuple lists (result, source...) sources a/b/c/s/t/A/B/C.
CASES = [
    ("add.u32", "add.u32 {d}, {a}, {b};", ("r", "a", "b"), lambda a, b: (a + b) & M32),
    ("sub.u32", "sub.u32 {d}, {a}, {b};", ("r", "a", "b"), lambda a, b: (a - b) & M32),
    ("add.sat.s32", "add.sat.s32 {d}, {a}, {b};", ("r", "a", "b"), lambda a, b: sat32(s32(a) + s32(b)) & M32),
    ("sub.sat.s32", "sub.sat.s32 {d}, {a}, {b};", ("r", "a", "b"), lambda a, b: sat32(s32(a) - s32(b)) & M32),
    ("mul.lo.u32", "mul.lo.u32 {d}, {a}, {b};", ("r", "a", "b"), lambda a, b: (a * b) & M32),
    ("mul.hi.u32", "mul.hi.u32 {d}, {a}, {b};", ("r", "a", "b"), lambda a, b: (a * b) >> 32),
    ("mul.hi.s32", "mul.hi.s32 {d}, {a}, {b};", ("r", "a", "b"), lambda a, b: ((s32(a) * s32(b)) >> 32) & M32),
    ("mul.wide.u32", "mul.wide.u32 {d}, {a}, {b};", ("l", "a", "b"), lambda a, b: a * b),
    ("mul.wide.s32", "mul.wide.s32 {d}, {a}, {b};", ("l", "a", "b"), lambda a, b: (s32(a) * s32(b)) & M64),
    ("mad.lo.u32", "mad.lo.u32 {d}, {a}, {b}, {c};", ("r", "a", "b", "c"), lambda a, b, c: (a * b + c) & M32),
    ("mad.hi.u32", "mad.hi.u32 {d}, {a}, {b}, {c};", ("r", "a", "b", "c"), lambda a, b, c: ((a * b >> 32) + c) & M32),
    ("mad.hi.s32", "mad.hi.s32 {d}, {a}, {b}, {c};", ("r", "a", "b", "c"),
     lambda a, b, c: ((s32(a) * s32(b) >> 32) + s32(c)) & M32),
    ("mad.hi.sat.s32", "mad.hi.sat.s32 {d}, {a}, {b}, {c};", ("r", "a", "b", "c"),
     lambda a, b, c: sat32((s32(a) * s32(b) >> 32) + s32(c)) & M32),
    ("mad.wide.u32", "mad.wide.u32 {d}, {a}, {b}, {C};", ("l", "a", "b", "C"), lambda a, b, c: (a * b + c) & M64),
    ("mad.wide.s32", "mad.wide.s32 {d}, {a}, {b}, {C};", ("l", "a", "b", "C"),
     lambda a, b, c: (s32(a) * s32(b) + s64(c)) & M64),
    ("mul24.lo.u32", "mul24.lo.u32 {d}, {a}, {b};", ("r", "a", "b"), lambda a, b: mul24(a, b, False, False)),
    ("mul24.hi.u32", "mul24.hi.u32 {d}, {a}, {b};", ("r", "a", "b"), lambda a, b: mul24(a, b, False, True)),
    ("mul24.lo.s32", "mul24.lo.s32 {d}, {a}, {b};", ("r", "a", "b"), lambda a, b: mul24(a, b, True, False)),
    ("mul24.hi.s32", "mul24.hi.s32 {d}, {a}, {b};", ("r", "a", "b"), lambda a, b: mul24(a, b, True, True)),
    ("mad24.lo.u32", "mad24.lo.u32 {d}, {a}, {b}, {c};", ("r", "a", "b", "c"),
     lambda a, b, c: mad24(a, b, c, False, False)),
    ("mad24.hi.s32", "mad24.hi.s32 {d}, {a}, {b}, {c};", ("r", "a", "b", "c"),
     lambda a, b, c: mad24(a, b, c, True, True)),
    ("mad24.hi.sat.s32", "mad24.hi.sat.s32 {d}, {a}, {b}, {c};", ("r", "a", "b", "c"),
     lambda a, b, c: mad24(a, b, c, True, True, True)),
    ("dp4a.s32.s32", "dp4a.s32.s32 {d}, {a}, {b}, {c};", ("r", "a", "b", "c"),
     lambda a, b, c: (s32(c) + sum(_b(a, i, 1) * _b(b, i, 1) for i in range(4))) & M32),
    ("dp4a.u32.s32", "dp4a.u32.s32 {d}, {a}, {b}, {c};", ("r", "a", "b", "c"),
     lambda a, b, c: (s32(c) + sum(_b(a, i, 0) * _b(b, i, 1) for i in range(4))) & M32),
    ("dp4a.u32.u32", "dp4a.u32.u32 {d}, {a}, {b}, {c};", ("r", "a", "b", "c"),
     lambda a, b, c: (c + sum(_b(a, i, 0) * _b(b, i, 0) for i in range(4))) & M32),
    ("dp2a.lo.s32.u32", "dp2a.lo.s32.u32 {d}, {a}, {b}, {c};", ("r", "a", "b", "c"),
     lambda a, b, c: (s32(c) + s16(a) * _b(b, 0, 0) + s16(a >> 16) * _b(b, 1, 0)) & M32),
    ("dp2a.hi.u32.u32", "dp2a.hi.u32.u32 {d}, {a}, {b}, {c};", ("r", "a", "b", "c"),
     lambda a, b, c: (c + (a & 0xFFFF) * _b(b, 2, 0) + (a >> 16) * _b(b, 3, 0)) & M32),
    ("sad.u32", "sad.u32 {d}, {a}, {b}, {c};", ("r", "a", "b", "c"), lambda a, b, c: (abs(a - b) + c) & M32),
    ("sad.s32", "sad.s32 {d}, {a}, {b}, {c};", ("r", "a", "b", "c"),
     lambda a, b, c: (abs(s32(a) - s32(b)) + c) & M32),
    ("div.u32", "div.u32 {d}, {a}, {b};", ("r", "a", "b"), lambda a, b: a // b if b else None),
    ("div.s32", "div.s32 {d}, {a}, {b};", ("r", "a", "b"), lambda a, b: tdiv(s32(a), s32(b)) & M32 if b else None),
    ("rem.u32", "rem.u32 {d}, {a}, {b};", ("r", "a", "b"), lambda a, b: a % b if b else None),
    ("rem.s32", "rem.s32 {d}, {a}, {b};", ("r", "a", "b"), lambda a, b: trem(s32(a), s32(b)) & M32 if b else None),
    ("min.u32", "min.u32 {d}, {a}, {b};", ("r", "a", "b"), min),
    ("max.s32", "max.s32 {d}, {a}, {b};", ("r", "a", "b"), lambda a, b: max(s32(a), s32(b)) & M32),
    ("min.s32", "min.s32 {d}, {a}, {b};", ("r", "a", "b"), lambda a, b: min(s32(a), s32(b)) & M32),
    ("max.relu.s32", "max.relu.s32 {d}, {a}, {b};", ("r", "a", "b"), lambda a, b: max(s32(a), s32(b), 0)),
    ("min.relu.s32", "min.relu.s32 {d}, {a}, {b};", ("r", "a", "b"), lambda a, b: max(min(s32(a), s32(b)), 0)),
    ("add.u16x2", "add.u16x2 {d}, {a}, {b};", ("r", "a", "b"), lambda a, b: simd16(a, b, lambda x, y: x + y, False)),
    ("add.s16x2", "add.s16x2 {d}, {a}, {b};", ("r", "a", "b"), lambda a, b: simd16(a, b, lambda x, y: x + y, True)),
    ("min.s16x2", "min.s16x2 {d}, {a}, {b};", ("r", "a", "b"), lambda a, b: simd16(a, b, min, True)),
    ("max.u16x2", "max.u16x2 {d}, {a}, {b};", ("r", "a", "b"), lambda a, b: simd16(a, b, max, False)),
    ("max.relu.s16x2", "max.relu.s16x2 {d}, {a}, {b};", ("r", "a", "b"),
     lambda a, b: simd16(a, b, lambda x, y: max(x, y, 0), True)),
    ("abs.s32", "abs.s32 {d}, {a};", ("r", "a"), lambda a: abs(s32(a)) & M32),
    ("neg.s32", "neg.s32 {d}, {a};", ("r", "a"), lambda a: (-a) & M32),
    ("not.b32", "not.b32 {d}, {a};", ("r", "a"), lambda a: ~a & M32),
    ("cnot.b32", "cnot.b32 {d}, {a};", ("r", "a"), lambda a: int(a == 0)),
    ("and.b32", "and.b32 {d}, {a}, {b};", ("r", "a", "b"), lambda a, b: a & b),
    ("or.b32", "or.b32 {d}, {a}, {b};", ("r", "a", "b"), lambda a, b: a | b),
    ("xor.b32", "xor.b32 {d}, {a}, {b};", ("r", "a", "b"), lambda a, b: a ^ b),
    ("popc.b32", "popc.b32 {d}, {a};", ("r", "a"), lambda a: bin(a).count("1")),
    ("clz.b32", "clz.b32 {d}, {a};", ("r", "a"), lambda a: clz(a, 32)),
    ("brev.b32", "brev.b32 {d}, {a};", ("r", "a"), lambda a: brev(a, 32)),
    ("bfind.u32", "bfind.u32 {d}, {a};", ("r", "a"), lambda a: bfind(a, 32, False, False)),
    ("bfind.s32", "bfind.s32 {d}, {a};", ("r", "a"), lambda a: bfind(a, 32, True, False)),
    ("bfind.shiftamt.u32", "bfind.shiftamt.u32 {d}, {a};", ("r", "a"), lambda a: bfind(a, 32, False, True)),
    ("shl.b32", "shl.b32 {d}, {a}, {s};", ("r", "a", "s"), lambda a, s: (a << s) & M32 if s < 32 else 0),
    ("shr.u32", "shr.u32 {d}, {a}, {s};", ("r", "a", "s"), lambda a, s: a >> s if s < 32 else 0),
    ("shr.s32", "shr.s32 {d}, {a}, {s};", ("r", "a", "s"), lambda a, s: (s32(a) >> min(s, 32)) & M32),
    ("shf.l.wrap.b32", "shf.l.wrap.b32 {d}, {a}, {b}, {s};", ("r", "a", "b", "s"),
     lambda a, b, s: shf(a, b, s, True, False)),
    ("shf.l.clamp.b32", "shf.l.clamp.b32 {d}, {a}, {b}, {s};", ("r", "a", "b", "s"),
     lambda a, b, s: shf(a, b, s, True, True)),
    ("shf.r.wrap.b32", "shf.r.wrap.b32 {d}, {a}, {b}, {s};", ("r", "a", "b", "s"),
     lambda a, b, s: shf(a, b, s, False, False)),
    ("shf.r.clamp.b32", "shf.r.clamp.b32 {d}, {a}, {b}, {s};", ("r", "a", "b", "s"),
     lambda a, b, s: shf(a, b, s, False, True)),
    ("bfe.u32", "bfe.u32 {d}, {a}, {s}, {t};", ("r", "a", "s", "t"), lambda a, p, n: bfe(a, p, n, 32, False)),
    ("bfe.s32", "bfe.s32 {d}, {a}, {s}, {t};", ("r", "a", "s", "t"),
     lambda a, p, n: bfe(a, p, n, 32, True)),
    ("bfi.b32", "bfi.b32 {d}, {a}, {b}, {s}, {t};", ("r", "a", "b", "s", "t"),
     lambda a, b, p, n: bfi(a, b, p, n, 32)),
    ("prmt.b32", "prmt.b32 {d}, {a}, {b}, {c};", ("r", "a", "b", "c"), lambda a, b, c: prmt(a, b, c)),
] + [(f"prmt.b32.{m}", f"prmt.b32.{m} {{d}}, {{a}}, {{b}}, {{c}};", ("r", "a", "b", "c"),
      (lambda m: lambda a, b, c: prmt(a, b, c, m))(m)) for m in ("f4e", "b4e", "rc8", "ecl", "ecr", "rc16")] + [
    (f"lop3.b32.{lut:#04x}", f"lop3.b32 {{d}}, {{a}}, {{b}}, {{c}}, {lut:#x};", ("r", "a", "b", "c"),
     (lambda lut: lambda a, b, c: lop3(a, b, c, lut))(lut)) for lut in (0x96, 0xE8, 0xF8, 0x1E, 0x80, 0x01)] + [
    ("add.u64", "add.u64 {d}, {A}, {B};", ("l", "A", "B"), lambda a, b: (a + b) & M64),
    ("mul.lo.u64", "mul.lo.u64 {d}, {A}, {B};", ("l", "A", "B"), lambda a, b: (a * b) & M64),
    ("mul.hi.u64", "mul.hi.u64 {d}, {A}, {B};", ("l", "A", "B"), lambda a, b: (a * b) >> 64),
    ("mul.hi.s64", "mul.hi.s64 {d}, {A}, {B};", ("l", "A", "B"), lambda a, b: ((s64(a) * s64(b)) >> 64) & M64),
    ("div.s64", "div.s64 {d}, {A}, {B};", ("l", "A", "B"), lambda a, b: tdiv(s64(a), s64(b)) & M64 if b else None),
    ("rem.u64", "rem.u64 {d}, {A}, {B};", ("l", "A", "B"), lambda a, b: a % b if b else None),
    ("min.s64", "min.s64 {d}, {A}, {B};", ("l", "A", "B"), lambda a, b: min(s64(a), s64(b)) & M64),
    ("shl.b64", "shl.b64 {d}, {A}, {s};", ("l", "A", "s"), lambda a, s: (a << s) & M64 if s < 64 else 0),
    ("shr.s64", "shr.s64 {d}, {A}, {s};", ("l", "A", "s"), lambda a, s: (s64(a) >> min(s, 64)) & M64),
    ("popc.b64", "popc.b64 {d}, {A};", ("r", "A"), lambda a: bin(a).count("1")),
    ("clz.b64", "clz.b64 {d}, {A};", ("r", "A"), lambda a: clz(a, 64)),
    ("brev.b64", "brev.b64 {d}, {A};", ("l", "A"), lambda a: brev(a, 64)),
    ("bfind.s64", "bfind.s64 {d}, {A};", ("r", "A"), lambda a: bfind(a, 64, True, False)),
    ("bfe.s64", "bfe.s64 {d}, {A}, {s}, {t};", ("l", "A", "s", "t"), lambda a, p, n: bfe(a, p, n, 64, True)),
    ("bfi.b64", "bfi.b64 {d}, {A}, {B}, {s}, {t};", ("l", "A", "B", "s", "t"),
     lambda a, b, p, n: bfi(a, b, p, n, 64)),
    # carries: a 64-bit add/sub/multiply-add made of 32-bit halves
    ("add.cc+addc", "{{ .reg .b32 lo, hi; add.cc.u32 lo, {a}, {b}; addc.u32 hi, {c}, {a}; "
                    "mov.b64 {d}, {{lo, hi}}; }}", ("l", "a", "b", "c"),
     lambda a, b, c: ((a + b) & M32) | (((c + a + ((a + b) >> 32)) & M32) << 32)),
    ("sub.cc+subc", "{{ .reg .b32 lo, hi; sub.cc.u32 lo, {a}, {b}; subc.u32 hi, {c}, {a}; "
                    "mov.b64 {d}, {{lo, hi}}; }}", ("l", "a", "b", "c"),
     lambda a, b, c: ((a - b) & M32) | (((c - a - int(a < b)) & M32) << 32)),
    ("mad.lo.cc+madc.hi", "{{ .reg .b32 lo, hi; mad.lo.cc.u32 lo, {a}, {b}, {c}; madc.hi.u32 hi, {a}, {b}, 0; "
                          "mov.b64 {d}, {{lo, hi}}; }}", ("l", "a", "b", "c"), lambda a, b, c: (a * b + c) & M64),
    ("add.cc.u64+addc.u64", "{{ .reg .b64 lo; add.cc.u64 lo, {A}, {B}; addc.u64 {d}, {C}, 0; }}",
     ("l", "A", "B", "C"), lambda a, b, c: (c + ((a + b) >> 64)) & M64),
    ("add.u16", "{{ .reg .b16 x, y, z; cvt.u16.u32 x, {a}; cvt.u16.u32 y, {b}; add.u16 z, x, y; "
                "cvt.u32.u16 {d}, z; }}", ("r", "a", "b"), lambda a, b: (a + b) & 0xFFFF),
    ("mul.wide.s16", "{{ .reg .b16 x, y; cvt.u16.u32 x, {a}; cvt.u16.u32 y, {b}; mul.wide.s16 {d}, x, y; }}",
     ("r", "a", "b"), lambda a, b: (s16(a) * s16(b)) & M32),
    ("selp.b32", "{{ .reg .pred p; setp.lt.u32 p, {a}, {b}; selp.b32 {d}, {a}, {c}, p; }}", ("r", "a", "b", "c"),
     lambda a, b, c: a if a < b else c),
    ("slct.s32", "slct.u32.s32 {d}, {a}, {b}, {c};", ("r", "a", "b", "c"), lambda a, b, c: a if s32(c) >= 0 else b),
] + [(f"setp.{cmp}.{t}", f"{{{{ .reg .pred p; setp.{cmp}.{t} p, {{a}}, {{b}}; selp.u32 {{d}}, 1, 0, p; }}}}",
      ("r", "a", "b"), (lambda f, t: lambda a, b: int(f(s32(a), s32(b)) if t == "s32" else f(a, b)))(f, t))
     for cmp, f in (("eq", lambda x, y: x == y), ("ne", lambda x, y: x != y), ("lt", lambda x, y: x < y),
                    ("le", lambda x, y: x <= y), ("gt", lambda x, y: x > y), ("ge", lambda x, y: x >= y))
     for t in ("u32", "s32")] + [
    ("setp.lo.and", "{{ .reg .pred p, q; setp.ne.u32 q, {c}, 0; setp.lo.and.u32 p, {a}, {b}, q; "
                    "selp.u32 {d}, 1, 0, p; }}", ("r", "a", "b", "c"), lambda a, b, c: int(a < b and c != 0)),
    ("setp.hs.or.not", "{{ .reg .pred p, q; setp.ne.u32 q, {c}, 0; setp.hs.or.u32 p|q, {a}, {b}, !q; "
                       "selp.u32 {d}, 1, 0, q; }}", ("r", "a", "b", "c"), lambda a, b, c: int((a < b) or c == 0)),
]
