"""The vector path of the block-FMA kernel: ROWS x V outputs at a time (kernel.py's docstring
says what it computes; lanes.py holds its LLVM vector arithmetic and why each step is exact).
`vector_ok` / `f32_ok` decide, in plain Python once per call, whether an instruction takes it
and in which lane type; outputs it cannot finish (an Inf/NaN input, a result that is not a
normal number, a late C) are completed here by the scalar paths of kernel.py.
"""
import numpy as np
from numba import njit, prange

from .bitcast import f64_from_bits
from .cfg import (ALIGN, A_EB, A_FN, A_MB, BLOCK, B_EB, B_FN, B_MB, CZERO_EMIN, C_EB, C_FN, C_MB,
                  D_EB, D_MB, FLOOR, IN_FTZ, KEEP, LATE_C, OUT_FTZ, PROD_NORM, ROUND)
from .kernel import _decode, _fast_decode, _general, _late_add, _round_pack, _special_c
from .lanes import F32_SCALE_MAX, ROWS, V, VZERO, _lanes_decode, _lanes_mma

E_LOW = -(1 << 20)        # floor of Emax when the profile has none (every real exponent is above)


@njit(cache=True, inline="always")
def _pow2(e):
    """2.0**e for an integer -1022 <= e <= 1023, from its bits."""
    return f64_from_bits((np.int64(e) + np.int64(1023)) << np.int64(52))


@njit(cache=True, inline="always")
def _vdecode(bits, eb, mb):
    """(exact float64 value, alignment exponent as int32 (VZERO for a zero), special?) of raw
    float bits, as _lanes_decode gives them (an Inf/NaN gets a finite stand-in value)."""
    sig, ex, special = _fast_decode(bits, eb, mb, False, False)
    if sig == 0:
        return 0.0, np.int32(VZERO), special
    return np.float64(sig) * _pow2(ex - np.int32(mb)), ex, special


@njit(cache=True, inline="always")
def _is_special(bits, eb, mb, fn):
    """Whether raw float bits are an Inf or a NaN."""
    e = (np.int64(bits) >> mb) & ((1 << eb) - 1)
    fr = np.int64(bits) & ((1 << mb) - 1)
    return e == (1 << eb) - 1 and (not fn or fr == (1 << mb) - 1)


@njit(cache=True)
def _vchunk(a, b, c, cfg, out, lo, hi, vdt):
    """Instances lo..hi-1 of the batch, ROWS x V outputs at a time (see the notes above);
    A and B values as vdt (float32 lanes where f32_ok, else float64)."""
    nb, M, K = a.shape
    N = b.shape[2]
    L = cfg[BLOCK]
    nblk = K // L
    F = cfg[ALIGN]
    late = cfg[LATE_C] != 0
    floor = max(cfg[FLOOR], E_LOW)
    ftz = cfg[IN_FTZ]
    a_eb, a_mb, a_fn = cfg[A_EB], cfg[A_MB], cfg[A_FN]
    b_eb, b_mb, b_fn = cfg[B_EB], cfg[B_MB], cfg[B_FN]
    c_eb, c_mb, c_fn, c_ftz = cfg[C_EB], cfg[C_MB], cfg[C_FN], cfg[OUT_FTZ]
    d_eb, d_mb = cfg[D_EB], cfg[D_MB]
    keep, rnd = cfg[KEEP], cfg[ROUND]
    # Emax's start from C: its exponent, or (C = 0) its format's emin when C counts, or the floor
    czero = cfg[CZERO_EMIN] != 0
    c0e = max(2 - (1 << (c_eb - 1)), floor) if czero else floor
    d0e = np.int32(max(2 - (1 << (d_eb - 1)), floor) if czero else floor)
    a2 = a.reshape((nb, M * K))
    b2 = b.reshape((nb, K * N))
    c2 = c.reshape((nb, M * N))
    o2 = out.reshape((nb, M * N))
    av = np.empty((M, K), vdt)
    ae = np.empty((M, K), np.int32)
    bv = np.empty((K, N), vdt)
    be = np.empty((K, N), np.int32)
    av1 = av.reshape(M * K)
    ae1 = ae.reshape(M * K)
    bv1 = bv.reshape(K * N)
    be1 = be.reshape(K * N)
    cv = np.zeros(M * N, np.float64)
    ce = np.full(M * N, np.int32(c0e))
    csp = np.zeros(M * N, np.bool_)
    arow = np.zeros(M, np.bool_)
    bcol = np.zeros(N, np.bool_)
    LN = ROWS * V                                       # lanes of one _lanes_mma
    em = np.empty(LN, np.int32)
    S = np.empty(LN, np.float64)
    cl = np.empty(M * N, np.float64)                    # C of a later block: the last D
    cle = np.empty(M * N, np.int32)
    held = np.zeros(LN, np.bool_)
    hold = np.empty(LN, np.int64)
    g = np.empty((6, K), np.int64)                      # general-path scratch
    for bi in range(lo, hi):
        anysp = _lanes_decode(a2, bi, M * K, a_eb, a_mb, a_fn, ftz, av1, ae1, 0)
        anysp |= _lanes_decode(b2, bi, K * N, b_eb, b_mb, b_fn, ftz, bv1, be1, 1)
        if not late:                    # a late C joins at the end: the blocks see C = 0
            anysp |= _lanes_decode(c2, bi, M * N, c_eb, c_mb, c_fn, c_ftz, cv, ce, 0)
        if anysp:                       # which rows of A, columns of B, C hold an Inf/NaN
            for i in range(M):
                arow[i] = False
                for t in range(K):
                    arow[i] |= _is_special(a2[bi, i * K + t], a_eb, a_mb, a_fn)
            for j in range(N):
                bcol[j] = False
                for t in range(K):
                    bcol[j] |= _is_special(b2[bi, t * N + j], b_eb, b_mb, b_fn)
            for o in range(M * N):
                csp[o] = not late and _is_special(c2[bi, o], c_eb, c_mb, c_fn)
        for i0 in range(0, M, ROWS):
            for j0 in range(0, N, V):
                fb = _lanes_mma(av, ae, bv, be, i0, j0, 0, L, F, cv, ce, c0e, S, em, o2, bi,
                                d_eb, d_mb, keep, rnd)
                for blk in range(1, nblk):
                    for l in range(LN):
                        o = (i0 + l // V) * N + j0 + l % V
                        if fb & (1 << l):
                            o2[bi, o] = _round_pack(np.int64(S[l]), np.int64(em[l]) - F, False,
                                                    cfg)
                        r = np.int64(o2[bi, o])
                        v, e, x = _vdecode(r, d_eb, d_mb)    # C: the last D
                        cl[o] = v
                        cle[o] = max(e, d0e)
                        if x and not held[l]:
                            held[l] = True
                            hold[l] = r
                    fb = _lanes_mma(av, ae, bv, be, i0, j0, blk * L, blk * L + L, F, cl, cle,
                                    d0e, S, em, o2, bi, d_eb, d_mb, keep, rnd)
                if fb != 0:
                    for l in range(LN):
                        if fb & (1 << l):
                            o = (i0 + l // V) * N + j0 + l % V
                            o2[bi, o] = _round_pack(np.int64(S[l]), np.int64(em[l]) - F, False,
                                                    cfg)
                if not (anysp or late or nblk > 1):
                    continue
                for l in range(LN):
                    i = i0 + l // V
                    j = j0 + l % V
                    o = i * N + j
                    r = np.int64(o2[bi, o])
                    if held[l]:
                        held[l] = False
                        _, _, ccls, cneg = _decode(hold[l], d_eb, d_mb, False, False)
                        r = _special_c(ccls, cneg, cfg)
                    if anysp:
                        if arow[i] or bcol[j]:
                            o2[bi, o] = _general(a[bi, i], b[bi, :, j], c2[bi, o], cfg,
                                                 g[0], g[1], g[2], g[3], g[4], g[5])
                            continue
                        if csp[o]:
                            _, _, ccls, cneg = _decode(c2[bi, o], c_eb, c_mb, c_fn != 0,
                                                       c_ftz != 0)
                            r = _special_c(ccls, cneg, cfg)
                    if late:
                        r = _late_add(r, np.int64(c2[bi, o]), cfg)
                    o2[bi, o] = r


def vector_ok(cfg, M, N, K):
    """Whether _vchunk takes this instruction: the fast path's conditions, N a multiple of V,
    M of ROWS, M*K of V, and sums that stay exact in float64. (Plain Python: decided once
    per call, so only the path that runs gets compiled.)"""
    L = int(cfg[BLOCK])
    F = int(cfg[ALIGN])
    return bool(cfg[PROD_NORM] == 0 and F - cfg[A_MB] - cfg[B_MB] >= 0 and F <= 40 and L > 0
                and L <= 64 and K % L == 0 and N % V == 0 and N > 0 and (M * K) % V == 0
                and M % ROWS == 0 and cfg[A_MB] + cfg[B_MB] + 2 <= 53
                and cfg[KEEP] <= cfg[D_MB])


def _exp_range(eb, mb, fn):
    """(exponent of the least subnormal bit, emin, exponent of the largest finite value)."""
    eb, mb = int(eb), int(mb)
    bias = (1 << (eb - 1)) - 1
    return 1 - bias - mb, 1 - bias, bias + 1 if fn else bias


def f32_ok(cfg):
    """Whether _vchunk may run its products in float32 lanes (see _lanes_mma): A and B
    significands of 24 bits together, every nonzero product a normal float32, F - Emax
    within F32_SCALE_MAX whenever a product is nonzero and at least -126 always, and the
    int32 sum of a block's terms (each below 2**(F + 2)) cannot overflow."""
    F = int(cfg[ALIGN])
    L = int(cfg[BLOCK])
    alsb, aemin, atop = _exp_range(cfg[A_EB], cfg[A_MB], cfg[A_FN] != 0)
    blsb, bemin, btop = _exp_range(cfg[B_EB], cfg[B_MB], cfg[B_FN] != 0)
    _, _, ctop = _exp_range(cfg[C_EB], cfg[C_MB], False)
    _, _, dtop = _exp_range(cfg[D_EB], cfg[D_MB], False)
    emax_top = max(ctop + 1, dtop + 1, atop + btop + 2)   # + 1 each: an Inf's stand-in
    return bool(cfg[A_MB] + cfg[B_MB] + 2 <= 24 and alsb + blsb >= -126
                and atop + btop + 2 <= 127 and F - (aemin + bemin) <= F32_SCALE_MAX
                and F - emax_top >= -126 and F + 2 <= 31 and (L << (F + 2)) <= (1 << 31))


@njit(cache=True, parallel=True)
def run(a, b, c, cfg, out, vdt):
    """The parallel driver: up to 64 chunks of consecutive instructions (threads take chunks);
    numba compiles it once per value type (vdt is a type argument)."""
    nb = a.shape[0]
    n = min(nb, 64)
    for ch in prange(n):
        _vchunk(a, b, c, cfg, out, ch * nb // n, (ch + 1) * nb // n, vdt)
