"""The one generic block-FMA kernel (numba; exact integer arithmetic). f64: f64_kernel.py.

Imported only when `layoutsim.mma` runs (it imports numba). The float kernel computes, for
each output element of each instruction in the batch:

    for each block of L products (k in the plan's order), with C the running accumulator:
        specials: NaN in, Inf*0, or +Inf with -Inf -> NaN; otherwise any Inf -> that Inf
        Emax  = max(floor, exponents of the nonzero products, exponent of C if C != 0)
        each term (exact product, and C) is truncated toward zero to a multiple of 2**(Emax - F)
        S     = exact integer sum of the truncated terms (int64: every term < 2**(F+3))
        C     = S * 2**(Emax - F) rounded to the D format (RZ / RNE / RD / RU, `keep` fraction bits)
    D = C

A term is an integer significand times a power of two: a product a*b of formats with ma and
mb fraction bits is Sa*Sb * 2**(ea + eb - ma - mb), where ea is the exponent (emin for
subnormals) and Sa the significand with its hidden bit. Its alignment exponent is ea + eb
(significand in [1, 4)), or the normalised one when the plan says so.

Every parameter arrives in `cfg` (int64 array, indices in cfg.py), so one compiled function
serves every instruction and every candidate behaviour.

Three paths compute that same arithmetic (block_fma picks per call; each is bit-exact):
  * the vector path (_vchunk in vector.py, its LLVM vector code in lanes.py): V = 8 outputs of
    a row, ROWS = 2 rows at a time; the profile defaults with N a multiple of 8. Values
    travel as float64 (or float32 where f32_ok proves every step exact), each truncated term
    is an exact integer, the sum is exact, and the result is rounded from its bits;
  * the scalar fast path (_chunk with every product finite): integer significands and shifts;
  * the general path (_general, _dot, _block): any profile, Inf/NaN, normalised exponents.
Lanes with an Inf/NaN input, and results that are not normal numbers, drop from the vector
path to the scalar ones, so the vector path only ever has to get the common case right.
"""
import math

import numpy as np
from numba import njit, prange
from numba.cpython.unsafe.numbers import leading_zeros

from .cfg import (ALIGN, A_EB, A_FN, A_MB, BLOCK, B_EB, B_FN, B_MB, CZERO_EMIN, C_EB, C_FN,
                  C_MB, D_EB, D_MB, FLOOR, IN_FTZ, KEEP, LATE_C, NAN_BITS, OUT_FTZ, OVF_INF,
                  PROD_NORM, RD, RNE, ROUND, RU, RZ, UPFRONT, ZERO_SIGNED)


@njit(cache=True, inline="always")
def _bitlen(x):
    """Number of bits of a non-negative int64 (0 for 0): llvm.ctlz."""
    return 64 - leading_zeros(np.int64(x))


@njit(cache=True, inline="always")
def _decode(bits, eb, mb, fn, ftz):
    """(signed significand, exponent, class 0 finite / 1 inf / 2 nan, sign) of raw float bits."""
    bits = np.int64(bits)
    sign = (bits >> (eb + mb)) & 1
    e = (bits >> mb) & ((1 << eb) - 1)
    fr = bits & ((1 << mb) - 1)
    top = (1 << eb) - 1
    bias = (1 << (eb - 1)) - 1
    cls = 0
    if fn:
        if e == top and fr == (1 << mb) - 1:
            cls = 2
    elif e == top:
        cls = 2 if fr != 0 else 1
    if e == 0:
        m = 0 if ftz else fr
        ex = 1 - bias
    else:
        m = fr | (1 << mb)
        ex = e - bias
    if cls == 1:
        m = 1
    return (-m if sign else m), ex, cls, sign


@njit(cache=True, inline="always")
def _round_pack(S, q, neg_zero_sign, cfg):
    """Raw bits of S * 2**q (S an exact int64) in the D format, rounded as cfg says."""
    return _round_bits(S, q, neg_zero_sign, cfg[D_EB], cfg[D_MB], cfg[KEEP], cfg[ROUND],
                       cfg[ZERO_SIGNED] != 0, cfg[OVF_INF] != 0, cfg[OUT_FTZ] != 0)


@njit(cache=True)
def _round_bits(S, q, neg_zero_sign, eb, mb, keep, rnd, zero_signed, ovf_inf, out_ftz):
    """_round_pack with scalar arguments (a plain call: no array to reference-count)."""
    bias = (1 << (eb - 1)) - 1
    emin = 1 - bias
    sbit = np.int64(1) << (eb + mb)
    if S == 0:
        return sbit if (neg_zero_sign and zero_signed) else np.int64(0)
    neg = S < 0
    mag = -S if neg else S
    nbits = _bitlen(mag)
    lead = nbits - 1 + q
    if rnd == RZ and emin <= lead <= bias:      # the common case: a normal result, truncated
        sh = nbits - 1 - keep
        R = mag >> sh if sh >= 0 else mag << -sh
        return ((sbit if neg else np.int64(0)) | (np.int64(lead + bias) << mb)
                | ((R - (np.int64(1) << keep)) << (mb - keep)))
    qo = (lead if lead > emin else emin) - keep
    sh = qo - q
    if sh <= 0:
        R = mag << (-sh)
    else:
        if sh >= 63:
            R = np.int64(0)
            rem_nz = True
            above = False
            tie = False
        else:
            R = mag >> sh
            rem = mag - (R << sh)
            half = np.int64(1) << (sh - 1)
            rem_nz = rem != 0
            above = rem > half
            tie = rem == half
        if rnd == RNE:
            if above or (tie and (R & 1) == 1):
                R += 1
        elif rnd == RU:
            if rem_nz and not neg:
                R += 1
        elif rnd == RD:
            if rem_nz and neg:
                R += 1
        if (R >> (keep + 1)) != 0:
            R >>= 1
            qo += 1
    if R == 0:
        return sbit if (neg and zero_signed) else np.int64(0)
    s = sbit if neg else np.int64(0)
    nbr = _bitlen(R)
    lead_r = nbr - 1 + qo
    if lead_r > bias:          # overflow
        to_inf = ovf_inf or rnd == RNE or (rnd == RU and not neg) or (rnd == RD and neg)
        if to_inf:
            return s | (np.int64((1 << eb) - 1) << mb)
        return s | (np.int64((1 << eb) - 2) << mb) | (((np.int64(1) << keep) - 1) << (mb - keep))
    if lead_r >= emin:
        frac = (R << (mb - (nbr - 1))) - (np.int64(1) << mb)
        return s | (np.int64(lead_r + bias) << mb) | frac
    if out_ftz:
        return sbit if (neg and zero_signed) else np.int64(0)
    return s | (R << (qo - (emin - mb)))


@njit(cache=True)
def _special_result(asig, acls, bsig, bcls, k0, k1, csig, ccls, cfg):
    """The raw D bits when products k0..k1-1 or C (class 0 finite / 1 inf / 2 nan) are not
    all finite: NaN for a NaN in, Inf * 0 or +Inf meeting -Inf, else that Inf; -1 when every
    product and C are finite."""
    nan = ccls == 2
    pinf = ccls == 1 and csig > 0
    ninf = ccls == 1 and csig < 0
    for t in range(k0, k1):
        ca = acls[t]
        cb = bcls[t]
        if ca == 2 or cb == 2:
            nan = True
        elif ca == 1 or cb == 1:
            if (ca == 0 and asig[t] == 0) or (cb == 0 and bsig[t] == 0):
                nan = True
            elif (asig[t] < 0) != (bsig[t] < 0):
                ninf = True
            else:
                pinf = True
    if nan or (pinf and ninf):
        return np.int64(cfg[NAN_BITS])
    inf_bits = np.int64((1 << cfg[D_EB]) - 1) << cfg[D_MB]
    if pinf:
        return inf_bits
    if ninf:
        return inf_bits | (np.int64(1) << (cfg[D_EB] + cfg[D_MB]))
    return np.int64(-1)


@njit(cache=True)
def _block(asig, aexp, acls, bsig, bexp, bcls, k0, k1, csig, cexp, ccls, cmb, cemin, cfg):
    """One block: products k0..k1-1 (already in plan order) plus C -> raw D bits."""
    special = _special_result(asig, acls, bsig, bcls, k0, k1, csig, ccls, cfg)
    if special >= 0:
        return special
    pmb = cfg[A_MB] + cfg[B_MB]
    F = cfg[ALIGN]
    emax = cfg[FLOOR]
    have = False
    for t in range(k0, k1):
        p = asig[t] * bsig[t]
        if p != 0:
            e = aexp[t] + bexp[t]
            if cfg[PROD_NORM] == 1 and abs(p) >= (np.int64(1) << (pmb + 1)):
                e += 1              # normalised: significand back in [1, 2)
            elif cfg[PROD_NORM] == 2:
                e += _bitlen(abs(p)) - 1 - pmb   # true exponent of the product's leading bit
            if e > emax:
                emax = e
            have = True
    if csig != 0:
        if cexp > emax:
            emax = cexp
        have = True
    elif cfg[CZERO_EMIN] != 0 and cemin > emax:
        emax = cemin
    if not have:
        return np.int64(0)
    q = emax - F
    S = np.int64(0)
    for t in range(k0, k1):
        p = asig[t] * bsig[t]
        if p != 0:
            S += _on_grid(p, aexp[t] + bexp[t] - pmb - q)
    if csig != 0:
        S += _on_grid(csig, cexp - cmb - q)
    return _round_pack(S, q, False, cfg)


@njit(cache=True, inline="always")
def _on_grid(v, sh):
    """A term v * 2**sh put on the block's alignment grid: its magnitude shifted, the bits that
    fall below the grid dropped (toward zero), its sign kept."""
    mag = abs(v)
    if sh >= 0:
        mag <<= sh
    elif sh > -63:
        mag >>= -sh
    else:
        mag = 0
    return -mag if v < 0 else mag


@njit(cache=True)
def _to_double(sig, ex, mb):
    return math.ldexp(float(sig), int(ex - mb))


@njit(cache=True)
def _late_add(dbits, cbits, cfg):
    """D = round_to_nearest(P + C) in the D format (the 'late C' candidate)."""
    eb = cfg[D_EB]
    mb = cfg[D_MB]
    ps, pe, pc, pneg = _decode(dbits, eb, mb, False, False)
    cs, ce, cc, cneg = _decode(cbits, cfg[C_EB], cfg[C_MB], cfg[C_FN] != 0, cfg[OUT_FTZ] != 0)
    if pc == 2 or cc == 2:
        return cfg[NAN_BITS]
    inf_bits = np.int64((1 << eb) - 1) << mb
    sbit = np.int64(1) << (eb + mb)
    if pc == 1 or cc == 1:
        if pc == 1 and cc == 1 and pneg != cneg:
            return cfg[NAN_BITS]
        neg = pneg if pc == 1 else cneg
        return inf_bits | (sbit if neg else 0)
    # one IEEE addition: the double sum rounds once, and double -> D (24 bits or fewer)
    # after it is innocuous double rounding (53 >= 2 * 24 + 2)
    x = _to_double(ps, pe, mb) + _to_double(cs, ce, cfg[C_MB])
    if x == 0.0:
        return np.int64(0)
    m, e = math.frexp(x)
    S = np.int64(m * 9007199254740992.0)     # m * 2**53, exact
    return _round_bits(S, e - 53, False, eb, mb, mb, RNE, cfg[ZERO_SIGNED] != 0,
                       cfg[OVF_INF] != 0, cfg[OUT_FTZ] != 0)


@njit(cache=True)
def _dot(asig, aexp, acls, bsig, bexp, bcls, cbits, cfg):
    K = asig.shape[0]
    L = cfg[BLOCK]
    csig, cexp, ccls, cneg = _decode(cbits, cfg[C_EB], cfg[C_MB], cfg[C_FN] != 0, cfg[OUT_FTZ] != 0)
    cmb = cfg[C_MB]
    cemin = 2 - (1 << (cfg[C_EB] - 1))
    if cfg[UPFRONT] != 0:
        # decide NaN/Inf from all products and C before any block runs
        special = _special_result(asig, acls, bsig, bcls, 0, K, csig, ccls, cfg)
        if special >= 0:
            return special
    late = cfg[LATE_C] != 0
    if late:
        csig = np.int64(0)
        cexp = cemin
        ccls = 0
    res = np.int64(0)
    for k0 in range(0, K, L):
        k1 = k0 + L if k0 + L < K else K
        res = _block(asig, aexp, acls, bsig, bexp, bcls, k0, k1, csig, cexp, ccls, cmb, cemin, cfg)
        csig, cexp, ccls, cneg = _decode(res, cfg[D_EB], cfg[D_MB], False, False)
        cmb = cfg[D_MB]
        cemin = 2 - (1 << (cfg[D_EB] - 1))
    if late:
        res = _late_add(res, cbits, cfg)
    return res


# ----------------------------------------------------------------------------- fast path
# Every product finite and the profile's defaults (alignment exponent ea + eb, C in the first
# block, F <= 48): significands and exponents stored as int32, a zero element's exponent
# replaced by ZERO_EXP so that the max and the shifts need no branch (a product with a zero
# factor then has an exponent far below any floor, and a shift clamped to 62 makes its term
# 0). Written so that LLVM vectorises both loops with AVX2 (vpmuldq, vpsrlvq, vpcmpgtq).
ZERO_EXP = -(1 << 28)
NO_TERM = -(1 << 27)      # any exponent below this came from a zero factor


@njit(cache=True, inline="always")
def _trunc_shift(x, d):
    """x / 2**d truncated toward zero, for 0 <= d <= 62 (negatives biased, no branch)."""
    return (x + ((x >> 63) & ((np.int64(1) << d) - 1))) >> d


@njit(cache=True, inline="always")
def _trunc_shift_mag(x, d):
    """x / 2**d truncated toward zero, 0 <= d <= 62, through the magnitude and a logical shift
    (the form AVX2 vectorises: no 64-bit arithmetic shift needed)."""
    neg = -np.int64(x < 0)
    q = np.int64(np.uint64((x ^ neg) - neg) >> np.uint64(d))
    return (q ^ neg) - neg


@njit(cache=True, inline="always")
def _c_term(csig, cexp, cmb, emax, F):
    sh = cexp - cmb - emax + F
    if sh >= 0:
        return csig << sh
    return _trunc_shift(csig, min(-sh, 62))


@njit(cache=True, inline="always")
def _emax0(csig, cexp, cemin, floor, czero):
    if csig != 0:
        return max(cexp, floor)
    if czero:
        return max(cemin, floor)
    return floor


@njit(cache=True, inline="always")
def _special_c(ccls, cneg, cfg):
    """D bits when C is Inf/NaN and every product is finite."""
    if ccls == 2:
        return cfg[NAN_BITS]
    eb = cfg[D_EB]
    mb = cfg[D_MB]
    return (np.int64((1 << eb) - 1) << mb) | (np.int64(cneg) << (eb + mb))


@njit(cache=True, inline="always")
def _fast_block(asig, aexe, bsig, bexe, i, j, blk, csig, cexp, cmb, cemin, cfg, F, sh0, floor, czero):
    """One block of the fast path: raw D bits."""
    L = asig.shape[2]
    m = np.int64(ZERO_EXP)
    for t in range(L):
        v = np.int64(aexe[i, blk, t]) + np.int64(bexe[j, blk, t])
        m = v if v > m else m
    have = m > NO_TERM or csig != 0
    if not have:
        return np.int64(0)
    emax = max(m, _emax0(csig, cexp, cemin, floor, czero))
    S = np.int64(0)
    for t in range(L):
        x = (np.int64(asig[i, blk, t]) * np.int64(bsig[j, blk, t])) << sh0
        d = emax - aexe[i, blk, t] - bexe[j, blk, t]
        S += _trunc_shift_mag(x, d if d < 62 else 62)
    if csig != 0:
        S += _c_term(csig, cexp, cmb, emax, F)
    return _round_pack(S, emax - F, False, cfg)


@njit(cache=True, inline="always")
def _fast_single(asig, aexe, bsig, bexe, i, j, cbits, cfg, F, sh0):
    """_fast_dot when one block covers all of K (2-D arrays: the loops the compiler likes)."""
    K = asig.shape[1]
    csig, cexp, ccls, cneg = _decode(cbits, cfg[C_EB], cfg[C_MB], cfg[C_FN] != 0, cfg[OUT_FTZ] != 0)
    if ccls != 0:
        return _special_c(ccls, cneg, cfg)
    m = np.int64(ZERO_EXP)
    for t in range(K):
        v = np.int64(aexe[i, t]) + np.int64(bexe[j, t])
        m = v if v > m else m
    if m <= NO_TERM and csig == 0:
        return np.int64(0)
    emax = _emax0(csig, cexp, 2 - (1 << (cfg[C_EB] - 1)), cfg[FLOOR], cfg[CZERO_EMIN] != 0)
    if m > emax:
        emax = m
    S = np.int64(0)
    for t in range(K):
        x = (np.int64(asig[i, t]) * np.int64(bsig[j, t])) << sh0
        d = emax - aexe[i, t] - bexe[j, t]
        S += _trunc_shift_mag(x, d if d < 62 else 62)
    if csig != 0:
        S += _c_term(csig, cexp, cfg[C_MB], emax, F)
    return _round_pack(S, emax - F, False, cfg)


@njit(cache=True, inline="always")
def _fast_dot(asig, aexe, bsig, bexe, i, j, cbits, cfg, F, sh0):
    """All blocks (arrays shaped (rows, blocks, L)) of one output, every product finite."""
    nblk = asig.shape[1]
    floor = cfg[FLOOR]
    czero = cfg[CZERO_EMIN] != 0
    c_eb, c_mb, c_fn, c_ftz = cfg[C_EB], cfg[C_MB], cfg[C_FN] != 0, cfg[OUT_FTZ] != 0
    res = cbits
    for blk in range(nblk):
        csig, cexp, ccls, cneg = _decode(res, c_eb, c_mb, c_fn, c_ftz)
        if ccls != 0:
            return _special_c(ccls, cneg, cfg)
        res = _fast_block(asig, aexe, bsig, bexe, i, j, blk, csig, cexp, c_mb,
                          2 - (1 << (c_eb - 1)), cfg, F, sh0, floor, czero)
        c_eb, c_mb, c_fn, c_ftz = cfg[D_EB], cfg[D_MB], False, False   # next C: this D
    return res


@njit(cache=True, inline="always")
def _fast_decode_lines(raw, sig, exe, special, eb, mb, fn, ftz):
    """_fast_decode every element raw[line, t] into sig/exe[line, t]; special[line]: the line
    holds an element the fast path cannot take."""
    for i in range(raw.shape[0]):
        sp = False
        for t in range(raw.shape[1]):
            s, e, x = _fast_decode(raw[i, t], eb, mb, fn, ftz)
            sig[i, t] = s
            exe[i, t] = e
            sp = sp | x
        special[i] = sp


@njit(cache=True, inline="always")
def _fast_decode(bits, eb, mb, fn, ftz):
    """(int32 signed significand, int32 exponent or ZERO_EXP, special?) without branches."""
    bits = np.int32(bits)
    emask = np.int32((1 << eb) - 1)
    fmask = np.int32((1 << mb) - 1)
    e = (bits >> np.int32(mb)) & emask
    fr = bits & fmask
    normal = e != 0
    m = fr | (np.int32(normal) << np.int32(mb))
    if ftz and not normal:
        m = np.int32(0)
    ex = e - np.int32((1 << (eb - 1)) - 1) + np.int32(not normal)
    neg = (bits >> np.int32(eb + mb)) & np.int32(1)
    sig = (m ^ -neg) + neg
    special = (e == emask) and ((not fn) or fr == fmask)
    return sig, (ex if m != 0 else np.int32(ZERO_EXP)), special


@njit(cache=True)
def _general(a_row, b_col, cbits, cfg, sig_a, exp_a, cls_a, sig_b, exp_b, cls_b):
    """Decode one row of A and one column of B (raw, length K) and run the general _dot."""
    ftz = cfg[IN_FTZ] != 0
    for t in range(a_row.shape[0]):
        s, e, cl, _ = _decode(a_row[t], cfg[A_EB], cfg[A_MB], cfg[A_FN] != 0, ftz)
        sig_a[t] = s
        exp_a[t] = e
        cls_a[t] = cl
        s, e, cl, _ = _decode(b_col[t], cfg[B_EB], cfg[B_MB], cfg[B_FN] != 0, ftz)
        sig_b[t] = s
        exp_b[t] = e
        cls_b[t] = cl
    return _dot(sig_a, exp_a, cls_a, sig_b, exp_b, cls_b, cbits, cfg)


@njit(cache=True)
def _chunk(a, b, c, cfg, out, lo, hi):
    """Instances lo..hi-1 of the batch (one thread's share), one output at a time: what the
    vector path does not take (see block_fma)."""
    nb, M, K = a.shape
    N = b.shape[2]
    ftz = cfg[IN_FTZ] != 0
    L = cfg[BLOCK]
    F = cfg[ALIGN]
    sh0 = F - cfg[A_MB] - cfg[B_MB]
    nblk = K // L if K % L == 0 else 0
    # the fast path needs the defaults: ea + eb as exponent, C in the first block, F >= the
    # product's fraction bits, K a multiple of L; anything else, and any row or column with
    # an Inf/NaN, takes the general path
    fast_ok = (cfg[PROD_NORM] == 0 and sh0 >= 0 and F <= 48 and nblk > 0)
    late = cfg[LATE_C] != 0
    nblk = max(nblk, 1)
    a_eb, a_mb, a_fn = cfg[A_EB], cfg[A_MB], cfg[A_FN] != 0
    b_eb, b_mb, b_fn = cfg[B_EB], cfg[B_MB], cfg[B_FN] != 0
    asig3 = np.empty((M, nblk, K // nblk), np.int32)
    aexe3 = np.empty((M, nblk, K // nblk), np.int32)
    bsig3 = np.empty((N, nblk, K // nblk), np.int32)
    bexe3 = np.empty((N, nblk, K // nblk), np.int32)
    asig = asig3.reshape((M, K))
    aexe = aexe3.reshape((M, K))
    bsig = bsig3.reshape((N, K))
    bexe = bexe3.reshape((N, K))
    arow = np.zeros(M, np.bool_)
    bcol = np.zeros(N, np.bool_)
    g = np.empty((6, K), np.int64)                          # general-path scratch
    for bi in range(lo, hi):
        if fast_ok:
            _fast_decode_lines(a[bi], asig, aexe, arow, a_eb, a_mb, a_fn, ftz)        # rows of A
            _fast_decode_lines(b[bi].T, bsig, bexe, bcol, b_eb, b_mb, b_fn, ftz)      # columns of B
        for i in range(M):
            for j in range(N):
                cb = np.int64(c[bi, i, j])
                if fast_ok and not arow[i] and not bcol[j]:
                    c0 = np.int64(0) if late else cb       # late C: the products first, C last
                    if nblk == 1:
                        r = _fast_single(asig, aexe, bsig, bexe, i, j, c0, cfg, F, sh0)
                    else:
                        r = _fast_dot(asig3, aexe3, bsig3, bexe3, i, j, c0, cfg, F, sh0)
                    if late:
                        r = _late_add(r, cb, cfg)
                else:
                    r = _general(a[bi, i], b[bi, :, j], cb, cfg, g[0], g[1], g[2], g[3], g[4], g[5])
                out[bi, i, j] = np.uint32(r)


# The parallel drivers: numba compiles one per path (the vector one in vector.py), on the first
# call that takes it. Each splits the batch into up to 64 chunks of consecutive instructions
# (threads take chunks).
@njit(cache=True, parallel=True)
def _run_scalar(a, b, c, cfg, out):
    nb = a.shape[0]
    n = min(nb, 64)
    for ch in prange(n):
        _chunk(a, b, c, cfg, out, ch * nb // n, (ch + 1) * nb // n)


def path(cfg, M, N, K):
    """Which path block_fma takes: "vector f32", "vector f64" or "scalar"."""
    from .vector import f32_ok, vector_ok
    if not vector_ok(cfg, M, N, K):
        return "scalar"
    return "vector f32" if f32_ok(cfg) else "vector f64"


def block_fma(a, b, c, cfg, out):
    """a (B, M, K), b (B, K, N) (k already in the plan's order), c (B, M, N): raw bits of the
    formats in cfg (a and b one unsigned dtype, c uint32); out (B, M, N) uint32: raw D bits."""
    _, M, K = a.shape
    which = path(cfg, M, b.shape[2], K)
    if which == "scalar":
        _run_scalar(a, b, c, cfg, out)
    else:
        from . import vector
        vector.run(a, b, c, cfg, out, np.float32 if which == "vector f32" else np.float64)
