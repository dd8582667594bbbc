"""A second, slow implementation of MMA-Sim's CDNA MFMA models (layoutsim/numerics/cdna.py
states them; pip mmasim 2.1.1 mmasim/arithmetic/{fma,ftz_mul_add,fdpa}.py define them) in exact
rational arithmetic, written from the model's description and not from cdna_kernel.py, for finite
inputs: tests/numerics/test_cdna.py checks the kernel against it output by output."""
import math
import struct
from fractions import Fraction

F, F2 = 24, 31
F32_EMIN = -126


def f32_bits(v, negative_zero=False):
    """Raw bits of the exact rational v rounded to binary32, to nearest even (Inf beyond)."""
    if v == 0:
        return 0x80000000 if negative_zero else 0
    sign = 0x80000000 if v < 0 else 0
    m = abs(v)
    e = math.floor(math.log2(m))
    while Fraction(2) ** e > m:
        e -= 1
    while Fraction(2) ** (e + 1) <= m:
        e += 1
    q = max(e, F32_EMIN) - 23
    r = m / Fraction(2) ** q
    R = math.floor(r)
    if r - R > Fraction(1, 2) or (r - R == Fraction(1, 2) and R % 2):
        R += 1
    if R == 0:
        return sign
    value = R * Fraction(2) ** q
    if value >= Fraction(2) ** 128:
        return sign | 0x7F800000
    return sign | struct.unpack("<I", struct.pack("<f", float(value)))[0]


def value(bits):
    return Fraction(struct.unpack("<f", struct.pack("<I", bits))[0])


def negative(x):
    return math.copysign(1.0, x) < 0


def split(x, e_sub):
    """MMA-Sim frexp_and_normalize: (s, e) with x = s * 2**e, e = max(leading exponent, e_sub)."""
    x = Fraction(x)
    if x == 0:
        return Fraction(0), e_sub
    e = math.floor(math.log2(abs(x)))
    while Fraction(2) ** e > abs(x):
        e -= 1
    while Fraction(2) ** (e + 1) <= abs(x):
        e += 1
    e = max(e, e_sub)
    return x / Fraction(2) ** e, e


def fused(pairs, e_sub_a, e_sub_b):
    """truncated_fused_sum of products [(a, b)]: (sum, e) with the sum in units of 2**e."""
    terms = []
    for a, b in pairs:
        sa, ea = split(a, e_sub_a)
        sb, eb = split(b, e_sub_b)
        if sa * sb != 0:
            terms.append((sa * sb, ea + eb))
    if not terms:
        return Fraction(0), None
    e_max = max(e for _, e in terms)
    scale = Fraction(2) ** F
    return sum(Fraction(math.trunc(s * Fraction(2) ** (e - e_max) * scale)) / scale
               for s, e in terms), e_max


def two_stage(a, b, c, e_sub_a, e_sub_b, even_odd):
    """One MMA_TR_FDPA / MMA_GTR_FDPA step: raw f32 bits (c: bits of the accumulator)."""
    if even_odd:
        (se, ee), (so, eo) = (fused(list(zip(a[i::2], b[i::2])), e_sub_a, e_sub_b) for i in (0, 1))
        e_dot = max(e for e in (ee, eo) if e is not None) if (ee, eo) != (None, None) else None
        s_dot = Fraction(0)
        for s, e in ((se, ee), (so, eo)):
            if e is not None:
                s_dot += Fraction(math.floor(s * Fraction(2) ** (e - e_dot + F))) / Fraction(2) ** F
    else:
        s_dot, e_dot = fused(list(zip(a, b)), e_sub_a, e_sub_b)
    s_c, e_c = split(value(c), F32_EMIN)
    e_max = e_c if e_dot is None else max(e_dot, e_c)
    d = Fraction(0) if e_dot is None else s_dot * Fraction(2) ** (e_dot - e_max)
    d = Fraction(math.floor(d * Fraction(2) ** (F2 + 1))) / Fraction(2) ** (F2 + 1)
    cc = Fraction(math.floor(s_c * Fraction(2) ** (e_c - e_max + F))) / Fraction(2) ** F
    if even_odd and e_c < e_max - F - 1:
        cc = Fraction(0)
    v = (d + cc) * Fraction(2) ** e_max
    if v == 0:
        neg = all(a_ * b_ == 0 and negative(a_) != negative(b_) for a_, b_ in zip(a, b)) \
            and c == 0x80000000
        return 0x80000000 if neg else 0
    s, e = split(v, F32_EMIN)
    s = Fraction(math.floor(s * Fraction(2) ** F2)) / Fraction(2) ** F2
    return f32_bits(s * Fraction(2) ** e, negative_zero=True)


def flush(x, e_sub, keep_sign):
    """(value, is -0) of x flushed when below 2**e_sub (keep_sign: the zero keeps x's sign)."""
    v, neg = x
    if abs(v) < Fraction(2) ** e_sub:           # zeros too: a -0 becomes +0 unless keep_sign
        return Fraction(0), keep_sign and (v < 0 or neg)
    return v, neg


def f32_add(x, y):
    """IEEE binary32 x + y of (value, is -0) pairs, as a (value, is -0) pair."""
    s = x[0] + y[0]
    if s == 0:
        return Fraction(0), x[0] == 0 and y[0] == 0 and x[1] and y[1]
    bits = f32_bits(s)
    return value(bits), bits == 0x80000000


def ftz_mul_add(a, b, c_bits, e_sub, P):
    acc = flush((value(c_bits), c_bits == 0x80000000), F32_EMIN, False)
    for k0 in range(0, len(a), P):
        p = []
        for x, y in zip(a[k0:k0 + P], b[k0:k0 + P]):
            x = flush((Fraction(x), negative(x) and x == 0), e_sub, False)
            y = flush((Fraction(y), negative(y) and y == 0), e_sub, False)
            prod = x[0] * y[0]
            neg_zero = prod == 0 and ((x[0] < 0 or x[1]) != (y[0] < 0 or y[1]))
            bits = f32_bits(prod, neg_zero)
            p.append(flush((value(bits), bits == 0x80000000), F32_EMIN, True))
        s = flush(f32_add(p[0], p[1]), F32_EMIN, True)
        if P == 4:
            s = flush(f32_add(s, flush(f32_add(p[2], p[3]), F32_EMIN, True)), F32_EMIN, True)
        acc = flush(f32_add(acc, s), F32_EMIN, True)
    return f32_bits(acc[0], acc[1])


def exact(a, b, c_bits):
    total = value(c_bits) + sum(Fraction(x) * Fraction(y) for x, y in zip(a, b))
    neg = c_bits == 0x80000000 and all(x * y == 0 and negative(x) != negative(y) for x, y in zip(a, b))
    return f32_bits(total, neg)


def fma_chain(a, b, c_bits):
    acc = c_bits
    for x, y in zip(a, b):
        prod = Fraction(x) * Fraction(y)
        s = prod + value(acc)
        neg = s == 0 and prod == 0 and (negative(x) != negative(y)) and acc == 0x80000000
        acc = f32_bits(s, neg)
    return acc


def dot(model, L, a, b, c_bits, e_sub_a, e_sub_b):
    """Raw f32 D bits of one output (a, b: exact float values of the row and column)."""
    if model == "fma":
        return fma_chain(a, b, c_bits)
    if model == "ftz_mul_add":
        return ftz_mul_add(a, b, c_bits, e_sub_a, L)
    for k0 in range(0, len(a), L):
        ka, kb = a[k0:k0 + L], b[k0:k0 + L]
        c_bits = (exact(ka, kb, c_bits) if model == "exact" else
                  two_stage(ka, kb, c_bits, e_sub_a, e_sub_b, model == "even_odd"))
    return c_bits
