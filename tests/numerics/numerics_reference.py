"""An independent reference of the tensor cores' block-FMA arithmetic, written from the published
rules alone, in exact rational arithmetic (fractions.Fraction and int). Nothing from layoutsim is
imported: the formats are decoded here from their definitions, the result is rounded here, and
the parameters (block size, alignment bits, exponent floor, k order, when C is added) are given
by the caller, who states where each comes from (test_independent_reference.py).

Formats (bit layouts from their definitions):
  f16   IEEE 754 binary16: 1 sign, 5 exponent (bias 15), 10 fraction bits
  bf16  bfloat16: 1, 8 (bias 127), 7 -- the top half of an IEEE binary32
  tf32  NVIDIA TensorFloat-32: 1, 8 (bias 127), 10, held in the top 19 bits of a 32-bit word;
        the tensor core ignores the low 13 bits (PTX ISA 9.7.14.5.7 ".tf32 ... the lower 13 bits
        are ignored"; MMA-Sim truncate_fp32_to_tf32)
  e4m3  OCP 8-bit floating point spec (2023) E4M3 ("fn"): 1, 4 (bias 7), 3; no infinities,
        S.1111.111 is NaN, largest finite 448
  e5m2  OCP E5M2: 1, 5 (bias 15), 2, IEEE-like (infinities, NaNs)
  f32   IEEE 754 binary32: 1, 8 (bias 127), 23

The arithmetic ("block FMA", Fasi et al. 2021 sec. D; Khattak & Mikaitis 2025
Generic_BFMA_TC.m; MMA-Sim 2025 T-FDPA): the products of a block of k and C are exact; each is
given an exponent (a product: e_a + e_b, the nominal exponents of its factors, a subnormal
counting as emin; C: its own nominal exponent; a zero C takes no part); the largest exponent,
raised to the floor if below it, fixes a grid 2^(emax - align) onto which every term is
truncated toward zero; the truncated terms are added exactly; the sum is rounded once to the
result format with `keep` fraction bits (toward zero or to nearest even), a result beyond the
largest finite number is infinite, a zero result is +0. Blocks chain: the rounded result of
one block is the C of the next. NaN in, Inf*0, or Inf against -Inf give the canonical NaN of
the result format (MMA-Sim: 0x7FFFFFFF / 0x7FFF); Inf is decided per block.
"""
from dataclasses import dataclass
from fractions import Fraction

NAN = "nan"


# Deliberately a second writing of what layoutsim/formats.py knows (`duplicates` pairs them):
# a reference that shared the decoders would confirm their mistakes.
@dataclass(frozen=True)
class Fmt:
    name: str
    ebits: int
    mbits: int
    bits: int           # width of the raw value (tf32: the 32-bit word holding it)
    shift: int = 0      # low bits of the raw word that are not part of the value (tf32: 13)
    inf: bool = True    # False: no infinities, only the all-ones pattern is NaN (e4m3)

    @property
    def bias(self):
        return (1 << (self.ebits - 1)) - 1

    @property
    def emin(self):
        return 1 - self.bias

    @property
    def emax(self):
        return self.bias if self.inf else self.bias + 1


FORMATS = {f.name: f for f in (
    Fmt("f16", 5, 10, 16), Fmt("bf16", 8, 7, 16), Fmt("tf32", 8, 10, 32, shift=13),
    Fmt("e4m3", 4, 3, 8, inf=False), Fmt("e5m2", 5, 2, 8), Fmt("f32", 8, 23, 32))}


def decode(fmt, raw):
    """Fraction, or ('inf', +1/-1), or NAN, of raw bits."""
    f = FORMATS[fmt]
    raw = int(raw) >> f.shift
    sign = -1 if (raw >> (f.ebits + f.mbits)) & 1 else 1
    e = (raw >> f.mbits) & ((1 << f.ebits) - 1)
    m = raw & ((1 << f.mbits) - 1)
    top = (1 << f.ebits) - 1
    if f.inf and e == top:
        return ("inf", sign) if m == 0 else NAN
    if not f.inf and e == top and m == (1 << f.mbits) - 1:
        return NAN
    if e == 0:
        return sign * Fraction(m, 1 << f.mbits) * Fraction(2) ** f.emin
    return sign * Fraction((1 << f.mbits) + m, 1 << f.mbits) * Fraction(2) ** (e - f.bias)


def floor_log2(x):
    """floor(log2 |x|) of a nonzero Fraction, exactly."""
    x = abs(x)
    e = x.numerator.bit_length() - x.denominator.bit_length()
    if Fraction(2) ** e > x:
        e -= 1
    return e


def nominal_exponent(x, fmt):
    """The exponent a format gives a value: floor(log2|x|), a subnormal's being emin."""
    return max(floor_log2(x), FORMATS[fmt].emin)


def encode(fmt, value, mode="rne", keep=None):
    """Raw bits of a Fraction (or ('inf', s), or NAN) in fmt ('f32', 'f16', 'bf16'), rounded with
    `mode` ('rz' or 'rne') to `keep` fraction bits (default: the format's)."""
    f = FORMATS[fmt]
    sign_bit = 1 << (f.ebits + f.mbits)
    inf_bits = ((1 << f.ebits) - 1) << f.mbits
    if value == NAN:
        raise ValueError("NaN results are the caller's (canonical NaN)")
    if isinstance(value, tuple):
        return inf_bits | (sign_bit if value[1] < 0 else 0)
    if value == 0:
        return 0                                 # +0 (MMA-Sim adds +0.0 to every result)
    neg = value < 0
    mag = -value if neg else value
    keep = f.mbits if keep is None else keep
    quantum = Fraction(2) ** (max(floor_log2(mag), f.emin) - keep)
    q, r = divmod(mag, quantum)
    n = int(q)
    if mode == "rne" and (r > quantum / 2 or (r == quantum / 2 and n % 2 == 1)):
        n += 1
    out = n * quantum
    if out == 0:
        return 0
    if out >= Fraction(2) ** (f.emax + 1):
        return inf_bits | (sign_bit if neg else 0)
    e = floor_log2(out)
    if e < f.emin:                               # subnormal
        bits = int(out / Fraction(2) ** (f.emin - f.mbits))
    else:
        bits = ((e + f.bias) << f.mbits) | int((out / Fraction(2) ** e - 1) * (1 << f.mbits))
    return bits | (sign_bit if neg else 0)


def nan_bits(fmt):
    return {"f32": 0x7FFFFFFF, "f16": 0x7FFF, "bf16": 0x7FFF}[fmt]


@dataclass(frozen=True)
class Rules:
    """The parameters of one instruction on one arch; the caller cites them."""
    a: str                  # A's and B's formats as stored
    b: str
    c: str
    d: str
    block: int              # products per block
    align: int              # bits kept below the largest exponent
    floor: object           # lower clamp of the largest exponent, or None
    rounding: str           # 'rz' or 'rne' for the result of a block
    keep: int               # fraction bits of a block's result
    via_f16: bool = False   # fp8 converted to f16 first (exponents then f16's)
    k_order: tuple = ()     # k in block order; () = 0..K-1
    late_c: bool = False    # blocks start from C = 0; C is added last, one RNE addition


def _block(avals, bvals, c, cfmt, rules):
    """One block, C of format cfmt: the exact sum of the truncated terms, rounded; returns
    (raw bits, value) of the result."""
    fa = "f16" if rules.via_f16 else rules.a
    fb = "f16" if rules.via_f16 else rules.b
    vals = list(zip(avals, bvals))
    if c == NAN or any(x == NAN or y == NAN for x, y in vals):
        return nan_bits(rules.d), NAN
    infs = []
    for x, y in vals:
        if isinstance(x, tuple) or isinstance(y, tuple):
            if (not isinstance(x, tuple) and x == 0) or (not isinstance(y, tuple) and y == 0):
                return nan_bits(rules.d), NAN             # Inf * 0
            sx = x[1] if isinstance(x, tuple) else (1 if x > 0 else -1)
            sy = y[1] if isinstance(y, tuple) else (1 if y > 0 else -1)
            infs.append(sx * sy)
    if isinstance(c, tuple):
        infs.append(c[1])
    if infs:
        if len(set(infs)) > 1:
            return nan_bits(rules.d), NAN
        return encode(rules.d, ("inf", infs[0])), ("inf", infs[0])
    terms = [(x * y, nominal_exponent(x, fa) + nominal_exponent(y, fb))
             for x, y in vals if x != 0 and y != 0]
    if c != 0:
        terms.append((c, nominal_exponent(c, cfmt)))
    if not terms:
        return 0, Fraction(0)
    emax = max(e for _, e in terms)
    if rules.floor is not None:
        emax = max(emax, rules.floor)
    grid = Fraction(2) ** (emax - rules.align)
    total = sum(int(t / grid) for t, _ in terms) * grid       # int(): toward zero
    bits = encode(rules.d, total, rules.rounding, rules.keep)
    return bits, decode(rules.d, bits)


def dot(a_raw, b_raw, c_raw, rules):
    """Raw D bits of one output: A row (K raw), B column (K raw), C raw, under `rules`."""
    av = [decode(rules.a, x) for x in a_raw]
    bv = [decode(rules.b, x) for x in b_raw]
    c = decode(rules.c, c_raw)
    order = list(rules.k_order) or list(range(len(av)))
    acc, cfmt = (Fraction(0), rules.d) if rules.late_c else (c, rules.c)
    for k0 in range(0, len(order), rules.block):
        ks = order[k0:k0 + rules.block]
        bits, acc = _block([av[k] for k in ks], [bv[k] for k in ks], acc, cfmt, rules)
        cfmt = rules.d                     # the next block's C is this block's result
    if not rules.late_c:
        return bits
    # C added last: one IEEE addition, rounded to nearest even
    p = acc
    if p == NAN or c == NAN:
        return nan_bits(rules.d)
    if isinstance(p, tuple) or isinstance(c, tuple):
        signs = {x[1] for x in (p, c) if isinstance(x, tuple)}
        return nan_bits(rules.d) if len(signs) > 1 else encode(rules.d, ("inf", signs.pop()))
    return encode(rules.d, p + c, "rne")
