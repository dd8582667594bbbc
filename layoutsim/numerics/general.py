"""The general path of the block-FMA kernel (numba; exact integer arithmetic): decoding, one
block step under any profile (Inf/NaN, normalised exponents, the gfx12 grouped floor steps of
cfg.py), rounding to the D format, the chain of blocks, the late C of sm_90's fp8
path, and the driver over a batch (_general_chunk). kernel.py's fast and vector paths call the
same rounding and fall back to _general_chunk for any output they do not take; the arithmetic
is described in kernel.py's docstring.
"""
import math

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import leading_zeros

from .cfg import (ALIGN, ALIGN_FLOOR, A_EB, A_FN, A_MB, BLOCK, B_EB, B_FN, B_MB, CZERO_EMIN,
                  C_EB, C_EXTRA, C_FN, C_MB, D_EB, D_MB, FLOOR, GROUP, IN_FTZ, KEEP,
                  NAN_BITS, NAN_C_QUIET, NAN_FACTOR, NAN_INVALID, OUT_FTZ, OVF_INF, PROD_NORM,
                  RD, RNE, RNE32_TRUNC, ROUND, RU, RZ, SIGN_FRAME, TINY_C_ZERO, UPFRONT,
                  ZERO_NEG, ZERO_SIGNED)


# The steps of the general path. Each is a function of its own, called, not inlined: numba's
# inline="always" types the callee's body again at every call site (inlining every step made a
# first gfx12 call compile for 15 s). They allocate nothing, so they run without numba's
# reference counting (numba's _nrt=False option): no incref/decref of every array argument on
# every call. Issue 14, measured in fresh installs, the old and this code in turn
# (benchmarks/bench_first_run.py): the first gfx12 WMMA call 3.4 -> 2.8 s, and the general path
# runs 2.1x faster (4.6k -> 9.6k gfx12 WMMA instructions/s). Nothing but compiled code calls
# them, so numba builds no Python or C entry wrapper for them (INTERNAL: two wrappers less to
# lower and compile per function). Issue 26: with the chain of blocks merged into
# _general_chunk, the first gfx12 WMMA call 3.6 -> 2.7 s of CPU (fresh processes, the least
# of 4 each, on a 2-core machine at a load average of 6-8).
INTERNAL = {"no_cpython_wrapper": True, "no_cfunc_wrapper": True}
step = njit(cache=True, _nrt=False, **INTERNAL)


@njit(cache=True, inline="always")
def _bitlen(x):
    """Number of bits of a non-negative int64 (0 for 0): llvm.ctlz."""
    return 64 - leading_zeros(np.int64(x))


@step
def _decode(bits, eb, mb, fn, ftz):
    """(signed significand, exponent, class 0 finite / 1 inf / 2 nan, sign) of raw float bits
    (an int64; fn, ftz: int64 flags, nonzero for yes). Callers pass exactly these types, so
    that one compiled variant serves every call site (a literal False or a uint16 bits
    argument compiled it once more each: 0.1 s of a first call)."""
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


@step
def _round_pack(S, q, neg_zero_sign, cfg):
    """Raw bits of S * 2**q (S an exact int64) in the D format, rounded as cfg says."""
    # one call, every argument an int64/bool (a literal argument would make numba compile
    # _round_bits once more for each call site: 0.3-0.6 s each)
    trunc = cfg[ROUND] == RNE32_TRUNC  # an fp32 rounded to nearest, its low 16 bits dropped
    eb = np.int64(8) if trunc else cfg[D_EB]
    mb = np.int64(23) if trunc else cfg[D_MB]
    keep = np.int64(23) if trunc else cfg[KEEP]
    rnd = np.int64(RNE) if trunc else cfg[ROUND]
    r = _round_bits(S, q, neg_zero_sign, eb, mb, keep, rnd, cfg[ZERO_SIGNED] != 0,
                    cfg[OVF_INF] != 0, cfg[OUT_FTZ] != 0)
    return r >> 16 if trunc else r


@step
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


@step
def _special_result(asig, acls, bsig, bcls, k0, k1, csig, ccls, craw, cmb, cfg):
    """The raw D bits when products k0..k1-1 or C (class 0 finite / 1 inf / 2 nan; raw bits
    craw with cmb fraction bits) are not all finite, -1 when they all are. In this order: a
    NaN factor (NAN_FACTOR), an invalid product, Inf * 0 or +Inf meeting -Inf among the
    products (NAN_INVALID), a NaN C (quieted and kept under NAN_C_QUIET), +Inf meeting -Inf
    with C (NAN_INVALID), else that Inf. Unset NaN kinds are NAN_BITS (NVIDIA: every NaN
    result is the canonical one, so the order does not show)."""
    fnan = False
    invalid = False
    pinf = False
    ninf = False
    for t in range(k0, k1):
        ca = acls[t]
        cb = bcls[t]
        if ca == 2 or cb == 2:
            fnan = True
        elif ca == 1 or cb == 1:
            if (ca == 0 and asig[t] == 0) or (cb == 0 and bsig[t] == 0):
                invalid = True
            elif (asig[t] < 0) != (bsig[t] < 0):
                ninf = True
            else:
                pinf = True
    nan_bits = np.int64(cfg[NAN_BITS])
    if fnan:
        return np.int64(cfg[NAN_FACTOR]) if cfg[NAN_FACTOR] >= 0 else nan_bits
    invalid_bits = np.int64(cfg[NAN_INVALID]) if cfg[NAN_INVALID] >= 0 else nan_bits
    if invalid or (pinf and ninf):
        return invalid_bits
    if ccls == 2:
        if cfg[NAN_C_QUIET] != 0:
            return np.int64(craw) | (np.int64(1) << (cmb - 1))
        return nan_bits
    if ccls == 1:
        if csig > 0:
            pinf = True
        else:
            ninf = True
    if pinf and ninf:
        return invalid_bits
    inf_bits = np.int64((1 << cfg[D_EB]) - 1) << cfg[D_MB]
    if pinf:
        return inf_bits
    if ninf:
        return inf_bits | (np.int64(1) << (cfg[D_EB] + cfg[D_MB]))
    return np.int64(-1)


@step
def _align_term(sig, sh, floor):
    """sig * 2**sh as an integer: exact for sh >= 0, else truncated toward zero, or by floor
    (toward -inf: an arithmetic shift) when `floor`."""
    if sh >= 0:
        return sig << sh
    if floor:
        return sig >> min(-sh, 63)
    mag = abs(sig) >> min(-sh, 63)
    return -mag if sig < 0 else mag


@step
def _product_exp(p, e, pmb, cfg):
    """The alignment exponent of a nonzero product p whose factors' exponents sum to e."""
    if cfg[PROD_NORM] == 1 and abs(p) >= (np.int64(1) << (pmb + 1)):
        return e + 1              # normalised: significand back in [1, 2)
    if cfg[PROD_NORM] == 2:
        return e + _bitlen(abs(p)) - 1 - pmb   # true exponent of the product's leading bit
    return e


@step
def _block(asig, aexp, acls, bsig, bexp, bcls, k0, k1, csig, cexp, ccls, craw, cmb, cemin, cfg,
           grouped):
    """One block: products k0..k1-1 (already in plan order) plus C -> raw D bits. grouped: None
    unless cfg[GROUP] > 0 (gfx12's group stage), so each profile compiles one of the two sums."""
    special = _special_result(asig, acls, bsig, bcls, k0, k1, csig, ccls, craw, cmb, cfg)
    if special >= 0:
        return special
    pmb = cfg[A_MB] + cfg[B_MB]
    F = cfg[ALIGN]
    floor = cfg[ALIGN_FLOOR] != 0
    emax = cfg[FLOOR]
    have = False
    for t in range(k0, k1):
        p = asig[t] * bsig[t]
        if p != 0:
            e = _product_exp(p, aexp[t] + bexp[t], pmb, cfg)
            if e > emax:
                emax = e
            have = True
    if csig != 0:
        if cexp - cfg[C_EXTRA] > emax:
            emax = cexp - cfg[C_EXTRA]
        have = True
    elif cfg[CZERO_EMIN] != 0 and cemin > emax:
        emax = cemin
    if not have:
        return np.int64(0)
    q = emax - F
    S = np.int64(0)
    if grouped is None:
        for t in range(k0, k1):
            p = asig[t] * bsig[t]
            if p != 0:
                S += _align_term(p, aexp[t] + bexp[t] - pmb - q, floor)
    else:
        # groups of G products: each aligned to its own largest product, summed, and the
        # sum aligned to the step's grid
        G = cfg[GROUP]
        for g0 in range(k0, k1, G):
            g1 = min(g0 + G, k1)
            gmax = np.int64(-(1 << 40))
            for t in range(g0, g1):
                p = asig[t] * bsig[t]
                if p != 0:
                    gmax = max(gmax, _product_exp(p, aexp[t] + bexp[t], pmb, cfg))
            if gmax == -(1 << 40):
                continue
            gq = gmax - F
            gs = np.int64(0)
            for t in range(g0, g1):
                p = asig[t] * bsig[t]
                if p != 0:
                    gs += _align_term(p, aexp[t] + bexp[t] - pmb - gq, floor)
            S += _align_term(gs, gq - q, floor)
    if csig != 0:
        ct = _align_term(csig, cexp - cmb - q, floor)
        if ct == -1 and cfg[TINY_C_ZERO] != 0 and q > cemin and (-csig) >> min(q - cexp + cmb, 63) == 0:
            ct = 0                # a negative C with no bit left counts 0 above C's emin
        S += ct
    return _round_pack(S, q, False, cfg)


@step
def _block_frame(asig, aexp, acls, bsig, bexp, bcls, k0, k1, csig, cexp, ccls, cneg, craw, cmb,
                 cfg):
    """One gfx11 step (rocjitsu gfx11_dot2.h, rdna_dot_simd.h dot2): the grid is the larger of
    the products' ea + eb - F and C's leading bit - F - C_EXTRA; every term's magnitude is
    truncated to it and counted in C's sign frame, a term of the other sign (a zero product
    too, by its factors' signs) as -magnitude - 1; the sum, its sign taken back from C's, is
    rounded to nearest even at the D format's precision and flushed to +0 below its emin."""
    special = _special_result(asig, acls, bsig, bcls, k0, k1, csig, ccls, craw, cmb, cfg)
    if special >= 0:
        return special
    pmb = cfg[A_MB] + cfg[B_MB]
    F = cfg[ALIGN]
    q = np.int64(-(1 << 40))
    nonzero = csig != 0
    for t in range(k0, k1):
        if asig[t] * bsig[t] != 0:
            q = max(q, aexp[t] + bexp[t] - F)
            nonzero = True
    if not nonzero:                     # every significand zero: no complements, +0
        return np.int64(0)
    if csig != 0:
        q = max(q, cexp - cmb + _bitlen(abs(csig)) - 1 - F - cfg[C_EXTRA])
    S = np.int64(0)
    if csig != 0:
        S += _align_term(abs(csig), cexp - cmb - q, False)
    for t in range(k0, k1):
        p = asig[t] * bsig[t]
        if p != 0:
            neg = p < 0
            mag = _align_term(abs(p), aexp[t] + bexp[t] - pmb - q, False)
        else:                           # a zero product's sign: its factors' (ZERO_NEG marks -0)
            neg = ((asig[t] < 0) or (asig[t] == 0 and aexp[t] == ZERO_NEG)) != \
                  ((bsig[t] < 0) or (bsig[t] == 0 and bexp[t] == ZERO_NEG))
            mag = np.int64(0)
        S += -mag - 1 if neg != cneg else mag
    neg = (S < 0) != cneg
    mag = -S if S < 0 else S
    if mag == 0:
        return np.int64(0)
    eb, mb = cfg[D_EB], cfg[D_MB]
    top = _bitlen(mag) - 1
    sh = top - mb
    if sh > 0:
        R = mag >> sh
        rem = mag - (R << sh)
        half = np.int64(1) << (sh - 1)
        if rem > half or (rem == half and (R & 1) == 1):
            R += 1
    else:
        R = mag << -sh
    e = top + q
    if R >> (mb + 1):
        R >>= 1
        e += 1
    bias = (1 << (eb - 1)) - 1
    s = (np.int64(1) << (eb + mb)) if neg else np.int64(0)
    if e > bias:
        return s | (np.int64((1 << eb) - 1) << mb)
    if e < 1 - bias:
        return np.int64(0)
    return s | (np.int64(e + bias) << mb) | (R - (np.int64(1) << mb))


@step
def _to_double(sig, ex, mb):
    return math.ldexp(float(sig), int(ex - mb))


@step
def _late_add(dbits, cbits, cfg):
    """D = round_to_nearest(P + C) in the D format (the 'late C' candidate)."""
    eb = cfg[D_EB]
    mb = cfg[D_MB]
    ps, pe, pc, pneg = _decode(dbits, eb, mb, np.int64(0), np.int64(0))
    cs, ce, cc, cneg = _decode(cbits, cfg[C_EB], cfg[C_MB], cfg[C_FN], cfg[OUT_FTZ])
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
    return _round_bits(S, e - 53, False, eb, mb, mb, np.int64(RNE), cfg[ZERO_SIGNED] != 0,
                       cfg[OVF_INF] != 0, cfg[OUT_FTZ] != 0)


@njit(cache=True, nogil=True)
def _general_chunk(a, b, c, cfg, out, lo, hi, need, frame, plain, grouped, late, scratch):
    """The general path for the outputs of instances lo..hi-1: every one when need is None,
    else those with need[bi - lo, i * N + j] == 1. Each row of A is decoded once, each output
    decodes its column of B and runs its chain of blocks. Four switches that are None or not,
    so that a profile compiles only the steps it takes (numba prunes a branch on `x is None`
    before typing it, when x is None): frame, plain: exactly one is None, frame None unless
    cfg[SIGN_FRAME] (gfx11's steps, _block_frame; plain: _block); grouped: None unless
    cfg[GROUP] > 0 (_block's group stage); late: None unless cfg[LATE_C] (C added last,
    _late_add). One compiled function where there were three (the driver, the chain of one
    output, and before that two drivers): every level of calls optimises and compiles to
    machine code again everything it links in. scratch: (6, K) int64, the decoded row of A
    and column of B."""
    _, M, K = a.shape
    N = b.shape[2]
    sig_a, exp_a, cls_a = scratch[0], scratch[1], scratch[2]
    sig_b, exp_b, cls_b = scratch[3], scratch[4], scratch[5]
    L = cfg[BLOCK]
    ftz = cfg[IN_FTZ]
    signed = cfg[SIGN_FRAME] != 0       # keep the sign of zero factors (ZERO_NEG)
    for bi in range(lo, hi):
        for i in range(M):
            for t in range(K):
                s, e, cl, neg = _decode(np.int64(a[bi, i, t]), cfg[A_EB], cfg[A_MB], cfg[A_FN], ftz)
                sig_a[t] = s
                exp_a[t] = ZERO_NEG if signed and s == 0 and neg else e
                cls_a[t] = cl
            for j in range(N):
                if need is not None:
                    if need[bi - lo, i * N + j] != 1:
                        continue
                for t in range(K):
                    s, e, cl, neg = _decode(np.int64(b[bi, t, j]), cfg[B_EB], cfg[B_MB],
                                            cfg[B_FN], ftz)
                    sig_b[t] = s
                    exp_b[t] = ZERO_NEG if signed and s == 0 and neg else e
                    cls_b[t] = cl
                cbits = np.int64(c[bi, i, j])
                csig, cexp, ccls, cneg = _decode(cbits, cfg[C_EB], cfg[C_MB], cfg[C_FN],
                                                 cfg[OUT_FTZ])
                cmb = cfg[C_MB]
                cemin = 2 - (1 << (cfg[C_EB] - 1))
                res = np.int64(-1)
                if cfg[UPFRONT] != 0:
                    # decide NaN/Inf from all products and C before any block runs
                    res = _special_result(sig_a, cls_a, sig_b, cls_b, np.int64(0), K, csig, ccls,
                                          cbits, cmb, cfg)     # the types of _block's call
                if res >= 0:
                    out[bi, i, j] = np.uint32(res)
                    continue
                craw = cbits
                if late is not None:
                    csig = np.int64(0)
                    cexp = cemin
                    ccls = 0
                    craw = np.int64(0)
                res = np.int64(0)
                for k0 in range(0, K, L):
                    k1 = k0 + L if k0 + L < K else K
                    if frame is not None:
                        res = _block_frame(sig_a, exp_a, cls_a, sig_b, exp_b, cls_b, k0, k1, csig,
                                           cexp, ccls, cneg, craw, cmb, cfg)
                    if plain is not None:
                        res = _block(sig_a, exp_a, cls_a, sig_b, exp_b, cls_b, k0, k1, csig, cexp,
                                     ccls, craw, cmb, cemin, cfg, grouped)
                    craw = res
                    csig, cexp, ccls, cneg = _decode(res, cfg[D_EB], cfg[D_MB], np.int64(0),
                                                     np.int64(0))
                    cmb = cfg[D_MB]
                    cemin = 2 - (1 << (cfg[D_EB] - 1))
                if late is not None:
                    res = _late_add(res, cbits, cfg)
                out[bi, i, j] = np.uint32(res)
