"""The CDNA MFMA float models of `cdna.py` (numba). Imported only when `layoutsim.mma` runs a
CDNA float MFMA.

Inputs are exact values (float64 arrays, decoded on the host by `layoutsim.formats`), so every
format reaches the same code; a factor of a format with `mb` <= 23 fraction bits is taken
apart here as M * 2**(e - 23) with M an integer and e its exponent, MMA-Sim's normalised
exponent (frexp_and_normalize: e of the leading bit, or the format's subnormal exponent).
Each model computes one output from the row of A, the column of B and C; results are raw f32
bits, every NaN the one NaN MMA-Sim writes (0x7FFFFFFF).
"""
import math

import numpy as np
from numba import njit

from ..formats import canonical_nan
from .bitcast import f32_bits, f32_from_bits, fma
from .cfg import RNE
from .general import INTERNAL, _bitlen, _round_bits

NAN = np.int64(canonical_nan("f32"))
POS_INF = np.int64(0x7F800000)
NEG_INF = np.int64(0xFF800000)
NO_TERM = -(1 << 20)             # exponent of a zero product (MMA-Sim: -999), below any real one
FMA, EXACT, FTZ_MUL_ADD, TWO_STAGE, EVEN_ODD = range(5)     # cdna.MODEL_CODES
F32_EMIN = -126


@njit(cache=True, inline="always")
def _f32_bits(x):
    """Raw bits of a float32 value (every NaN as NAN)."""
    if x != x:
        return NAN
    return f32_bits(np.float32(x))


@njit(cache=True, inline="always")
def _split(x, e_sub):
    """(M, e): x = M * 2**(e - 23), e = max(exponent of x's leading bit, e_sub) (x finite)."""
    if x == 0.0:
        return np.int64(0), np.int64(e_sub)
    m, ex = math.frexp(x)
    e = max(ex - 1, e_sub)
    return np.int64(math.ldexp(x, 23 - e)), np.int64(e)


@njit(cache=True, inline="always")
def _floor_shift(v, sh):
    """floor(v * 2**sh) for an int64 v (sh < 0: an arithmetic right shift)."""
    if sh >= 0:
        return v << sh
    if sh <= -63:
        return np.int64(-1) if v < 0 else np.int64(0)
    return v >> -sh


@njit(cache=True, inline="always")
def _trunc_shift(v, sh):
    """trunc(v * 2**sh), sh <= 0: the magnitude shifted, the sign kept."""
    mag = abs(v) >> min(-sh, 63)
    return -mag if v < 0 else mag


@njit(cache=True, **INTERNAL)
def _specials(a, b, k0, k1, c, overflow_is_inf):
    """Raw D bits when the step's products or C are not all finite (NaN in, Inf * 0, +Inf with
    -Inf: NaN; else that Inf), -1 when they are. `overflow_is_inf`: a finite product at or
    above 2**128 counts as an Inf of its sign (MMA-Sim tr_fdpa)."""
    nan = c != c
    pinf = c == np.inf
    ninf = c == -np.inf
    for t in range(k0, k1):
        x, y = a[t], b[t]
        if x != x or y != y:
            nan = True
        elif math.isinf(x) or math.isinf(y):
            if x == 0.0 or y == 0.0:
                nan = True
            elif (x < 0) != (y < 0):
                ninf = True
            else:
                pinf = True
        elif overflow_is_inf and abs(x * y) >= 2.0 ** 128:
            if x * y < 0:
                ninf = True
            else:
                pinf = True
    if nan or (pinf and ninf):
        return NAN
    if pinf:
        return POS_INF
    if ninf:
        return NEG_INF
    return np.int64(-1)


@njit(cache=True, inline="always")
def _all_negative_zero(a, b, k0, k1, c):
    """Whether every product of the step and C are -0 (an IEEE sum of them is then -0)."""
    if not (c == 0.0 and math.copysign(1.0, c) < 0):
        return False
    for t in range(k0, k1):
        if a[t] * b[t] != 0.0 or math.copysign(1.0, a[t]) * math.copysign(1.0, b[t]) > 0:
            return False
    return True


# ---- exact: RNE of the exact sum of the step's products and C (MMA-Sim MMA_E_FDPA) --------------
@njit(cache=True, inline="always")
def _two_sum(x, y):
    s = x + y
    yy = s - x
    return s, (x - (s - yy)) + (y - yy)


@njit(cache=True, **INTERNAL)
def _exact_step(a, b, k0, k1, c, parts):
    """Raw f32 bits of RNE(sum of a[t]*b[t], t in k0..k1-1, plus c), all finite.

    The terms (exact doubles) are gathered into a nonoverlapping expansion (Shewchuk's
    grow-expansion: each component's lowest bit above the next one's magnitude), so the largest
    component dominates. Its components on a grid 61 bits below it are summed exactly, and the
    rest only matters through its sign, which is the sign of the first component (or remainder)
    below the grid; that sign as a half-grid unit rounds like the exact value, since every f32
    rounding boundary near the result lies on the grid.
    """
    n = 0
    for t in range(k0, k1 + 1):
        q = c if t == k1 else a[t] * b[t]
        for i in range(n):
            q, h = _two_sum(q, parts[i])
            parts[i] = h
        parts[n] = q
        n += 1
    top = 0.0
    for i in range(n - 1, -1, -1):
        if parts[i] != 0.0:
            top = parts[i]
            break
    if top == 0.0:
        return np.int64(0x80000000) if _all_negative_zero(a, b, k0, k1, c) else np.int64(0)
    _, ex = math.frexp(top)
    q = ex - 1 - 60                                   # the grid: 2**q
    S = np.int64(0)
    sign = 0
    for i in range(n - 1, -1, -1):
        x = parts[i]
        if x == 0.0:
            continue
        u = math.ldexp(x, -q)
        whole = math.trunc(u)
        S += np.int64(whole)
        if u != whole:                                # below the grid: only its sign counts
            sign = 1 if u > whole else -1
            break
    return _round_bits(2 * S + sign, q - 1, False, 8, 23, 23, RNE, True, True, False)


# ---- the two-stage truncated sum of CDNA3 (MMA-Sim MMA_TR_FDPA / MMA_GTR_FDPA) ---------------
@njit(cache=True, **INTERNAL)
def _fused(a, b, k0, k1, stride, e_sub_a, e_sub_b, F):
    """MMA-Sim truncated_fused_sum of the products k0, k0+stride, ... < k1: (P, e), the sum
    P * 2**(e - F) of each product truncated toward zero to F fraction bits below e, the
    largest product exponent ea + eb (NO_TERM when every product is 0)."""
    e_max = NO_TERM
    for t in range(k0, k1, stride):
        if a[t] != 0.0 and b[t] != 0.0:
            e_max = max(e_max, _split(a[t], e_sub_a)[1] + _split(b[t], e_sub_b)[1])
    P = np.int64(0)
    if e_max == NO_TERM:
        return P, e_max
    for t in range(k0, k1, stride):
        ma, ea = _split(a[t], e_sub_a)
        mb, eb = _split(b[t], e_sub_b)
        if ma != 0 and mb != 0:        # product ma*mb * 2**(ea + eb - 46)
            P += _trunc_shift(ma * mb, ea + eb - e_max + F - 46)
    return P, e_max


@njit(cache=True, **INTERNAL)
def _two_stage_step(a, b, k0, k1, c, e_sub_a, e_sub_b, F, F2, even_odd):
    """Raw f32 bits of one step (products finite): the products' fused sum (CDNA3 fp8: the
    even-k and odd-k products each, both floored to F bits below the larger exponent and
    added), then with C on the grid of e_max = max(its exponent, C's): the sum floored to
    F2 + 1 and C to F fraction bits below e_max (fp8: a C below e_max - F - 1 counts 0), their
    sum normalised (subnormal below 2**-126), floored to F2 fraction bits, rounded to f32."""
    # stride as an int64, not a literal: one compiled _fused for all three calls
    if even_odd:
        pe, ee = _fused(a, b, k0, k1, np.int64(2), e_sub_a, e_sub_b, F)
        po, eo = _fused(a, b, k0 + 1, k1, np.int64(2), e_sub_a, e_sub_b, F)
        e_dot = max(ee, eo)
        P = _floor_shift(pe, ee - e_dot) + _floor_shift(po, eo - e_dot)
    else:
        P, e_dot = _fused(a, b, k0, k1, np.int64(1), e_sub_a, e_sub_b, F)
    mc, e_c = _split(c, F32_EMIN)
    e_max = max(e_dot, e_c)
    # V in units of 2**(e_max - F2 - 1)
    V = _floor_shift(P, e_dot - e_max + F2 + 1 - F)
    if not (even_odd and e_c < e_max - F - 1):
        V += _floor_shift(mc, e_c - e_max + F - 23) << (F2 + 1 - F)
    if V == 0:
        return np.int64(0x80000000) if _all_negative_zero(a, b, k0, k1, c) else np.int64(0)
    e_n = max(_bitlen(abs(V)) - 1 + e_max - F2 - 1, F32_EMIN)   # exponent of the normalised sum
    W = _floor_shift(V, e_max - F2 - 1 - e_n + F2)      # floor(v * 2**(F2 - e_n))
    return _round_bits(W, e_n - F2, False, 8, 23, 23, RNE, True, True, False)


# ---- CDNA2: flush-to-zero f32 multiplies and adds (MMA-Sim MMA_FTZ_MUL_ADD) ------------------
@njit(cache=True, inline="always")
def _flush(x, e_sub, keep_sign):
    """x, or a zero when |x| < 2**e_sub: +0, or x * 0 (its sign) with keep_sign."""
    if abs(x) < math.ldexp(1.0, e_sub):
        return x * np.float32(0.0) if keep_sign else np.float32(0.0)
    return x


@njit(cache=True, inline="always")
def _ftz_add(x, y):
    return _flush(np.float32(x + y), F32_EMIN, True)


@njit(cache=True, **INTERNAL)
def _ftz_chain(a, b, c, e_sub, P):
    """c += the f32 sum of each P products ((p0 + p1) + (p2 + p3)), every product of flushed
    inputs and every sum flushed, C's subnormal flushed to +0."""
    acc = _flush(np.float32(c), F32_EMIN, False)
    for k0 in range(0, a.shape[0], P):
        p = np.empty(P, np.float32)
        for t in range(P):
            x = _flush(np.float32(a[k0 + t]), e_sub, False)
            y = _flush(np.float32(b[k0 + t]), e_sub, False)
            p[t] = _flush(np.float32(x * y), F32_EMIN, True)
        s = _ftz_add(p[0], p[1])
        if P == 4:
            s = _ftz_add(s, _ftz_add(p[2], p[3]))
        acc = _ftz_add(acc, s)
    return _f32_bits(acc)


# ---- the drivers -----------------------------------------------------------------------------
# One compiled chunk function per kind of model (so a first call compiles only the model it
# runs), each over instances lo..hi-1; `run` spreads the batch over threads (kernel.in_chunks).
@njit(cache=True, inline="always")
def _fma_dot(a, b, c):
    """Raw f32 bits of one output of the FMA model: row a, column b (length K), C value c."""
    acc = np.float32(c)
    for t in range(a.shape[0]):
        acc = fma(np.float32(a[t]), np.float32(b[t]), acc)
    return _f32_bits(acc)


@njit(cache=True, **INTERNAL)
def _steps_dot(model, a, b, c, L, e_sub_a, e_sub_b, F, F2, parts):
    """Raw f32 bits of one output of a model of steps of L products: exact (parts: L + 1
    float64 scratch) or two-stage / even-odd (parts None)."""
    K = a.shape[0]
    bits = np.int64(0)
    for k0 in range(0, K, L):
        k1 = min(k0 + L, K)
        bits = _specials(a, b, k0, k1, c, model == TWO_STAGE)
        if bits < 0:
            if parts is not None:
                bits = _exact_step(a, b, k0, k1, c, parts)
            else:
                bits = _two_stage_step(a, b, k0, k1, c, e_sub_a, e_sub_b, F, F2,
                                       model == EVEN_ODD)
        c = np.float64(f32_from_bits(bits))
    return bits


@njit(cache=True, nogil=True)
def _run_fma(a, bt, c, out, lo, hi):
    _, M, _ = a.shape
    N = bt.shape[1]
    for i in range(lo, hi):
        for m in range(M):
            for n in range(N):
                out[i, m, n] = _fma_dot(a[i, m], bt[i, n], c[i, m, n])


@njit(cache=True, nogil=True)
def _run_ftz(a, bt, c, L, e_sub_a, out, lo, hi):
    _, M, _ = a.shape
    N = bt.shape[1]
    for i in range(lo, hi):
        for m in range(M):
            for n in range(N):
                out[i, m, n] = _ftz_chain(a[i, m], bt[i, n], c[i, m, n], e_sub_a, L)


@njit(cache=True, nogil=True)
def _run_steps(model, a, bt, c, L, e_sub_a, e_sub_b, F, F2, out, lo, hi, parts):
    _, M, _ = a.shape
    N = bt.shape[1]
    for i in range(lo, hi):
        for m in range(M):
            for n in range(N):
                out[i, m, n] = _steps_dot(model, a[i, m], bt[i, n], c[i, m, n], L, e_sub_a,
                                          e_sub_b, F, F2, parts)


def run(model, a, bt, c, L, e_sub_a, e_sub_b, F, F2, out):
    """out[i, m, n] = raw bits of D for A values a (nb, M, K), B values bt (nb, N, K: B
    transposed), C values c (nb, M, N)."""
    from .kernel import in_chunks
    if model == FMA:
        def chunk(lo, hi):
            _run_fma(a, bt, c, out, lo, hi)
    elif model == FTZ_MUL_ADD:
        def chunk(lo, hi):
            _run_ftz(a, bt, c, L, e_sub_a, out, lo, hi)
    else:
        def chunk(lo, hi):
            parts = np.empty(L + 1, np.float64) if model == EXACT else None
            _run_steps(model, a, bt, c, L, e_sub_a, e_sub_b, F, F2, out, lo, hi, parts)
    in_chunks(a.shape[0], chunk)
