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

Three paths compute that same arithmetic (block.block_fma picks per call; each is bit-exact):
  * the vector path (_vchunk in vector.py, its LLVM vector code in lanes.py): V = 8 outputs of
    a row, ROWS = 2 rows at a time; the profile defaults with N a multiple of 8. Values
    travel as float64 (or float32 where f32_ok proves every step exact), each truncated term
    is an exact integer, the sum is exact, and the result is rounded from its bits;
  * the scalar fast path (_fast_chunk, outputs whose products are all finite): integer
    significands and shifts;
  * the general path (general.py: _general_chunk, _block): any profile, Inf/NaN, normalised
    exponents, the gfx12 grouped floor steps.
An instance with an Inf/NaN input drops from the vector path to the general one, and a result
that is not a normal number to _round_pack, so the vector path only ever has to get the common
case right.

First-call compile time (issue 14): each piece is compiled only when a call first takes it,
and holds only what its profiles need. The choice is made in Python (block.block_fma, _chunk,
vector._vchunk) or by numba's pruning of a branch on `x is None` for an argument passed as
None (vector._vcore's hold, general._general_chunk's frame/plain/grouped/late, _fast_chunk's
multi/late), and the batch runs in chunks on Python threads (in_chunks) rather than in a
parallel=True driver that would compile once more per path.
"""
import numpy as np
from numba import get_num_threads, njit

from .. import chunks
from .cfg import (ALIGN, ALIGN_FLOOR, A_EB, A_FN, A_MB, BLOCK, B_EB, B_FN, B_MB, CZERO_EMIN,
                  C_EB, C_EXTRA, C_FN, C_MB, D_EB, D_MB, FLOOR, GROUP, IN_FTZ, LATE_C,
                  NAN_BITS, NAN_C_QUIET, NAN_FACTOR, NAN_INVALID, OUT_FTZ, PROD_NORM,
                  RNE32_TRUNC, ROUND, SIGN_FRAME, TINY_C_ZERO)
from .general import _decode, _general_chunk, _late_add, _round_pack


# ----------------------------------------------------------------------------- fast path
# Every product finite and the profile's defaults (alignment exponent ea + eb, C in the first
# block, F <= 48): significands and exponents stored as int32, a zero element's exponent
# replaced by ZERO_EXP so that the max and the shifts need no branch (a product with a zero
# factor then has an exponent far below any floor, and a shift clamped to 62 makes its term
# 0). Written so that LLVM vectorises both loops with AVX2 (vpmuldq, vpsrlvq, vpcmpgtq).
ZERO_EXP = -(1 << 28)
NO_TERM = -(1 << 27)      # any exponent below this came from a zero factor


@njit(cache=True, inline="always")
def plain_steps(cfg):
    """Whether the blocks are the NVIDIA ones (the only kind the fast and vector paths run):
    no group stage, truncation toward zero, C aligned like the products, canonical NaNs and
    no fp32-then-truncate rounding."""
    return (cfg[GROUP] <= 0 and cfg[ALIGN_FLOOR] == 0 and cfg[C_EXTRA] == 0
            and cfg[TINY_C_ZERO] == 0 and cfg[NAN_FACTOR] < 0 and cfg[NAN_INVALID] < 0
            and cfg[NAN_C_QUIET] == 0 and cfg[ROUND] != RNE32_TRUNC and cfg[SIGN_FRAME] == 0)


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
    csig, cexp, ccls, cneg = _decode(cbits, cfg[C_EB], cfg[C_MB], cfg[C_FN], cfg[OUT_FTZ])
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
    c_eb, c_mb, c_fn, c_ftz = cfg[C_EB], cfg[C_MB], cfg[C_FN], cfg[OUT_FTZ]
    res = cbits
    for blk in range(nblk):
        csig, cexp, ccls, cneg = _decode(res, c_eb, c_mb, c_fn, c_ftz)
        if ccls != 0:
            return _special_c(ccls, cneg, cfg)
        res = _fast_block(asig, aexe, bsig, bexe, i, j, blk, csig, cexp, c_mb,
                          2 - (1 << (c_eb - 1)), cfg, F, sh0, floor, czero)
        c_eb, c_mb, c_fn, c_ftz = cfg[D_EB], cfg[D_MB], np.int64(0), np.int64(0)   # next C: this D
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


def fast_ok(cfg, K):
    """Whether the fast path takes the profile: the defaults (ea + eb as exponent, C in the
    first block, F >= the product's fraction bits, K a multiple of L) and plain_steps.
    Anything else, and any row or column with an Inf/NaN, takes the general path."""
    L = int(cfg[BLOCK])
    F = int(cfg[ALIGN])
    return bool(cfg[PROD_NORM] == 0 and F - cfg[A_MB] - cfg[B_MB] >= 0 and F <= 48 and L > 0
                and K % L == 0 and K // L > 0 and plain_steps.py_func(cfg))


def _chunk(a, b, c, cfg, out, lo, hi):
    """Instances lo..hi-1 of the batch (one thread's share), one output at a time: what the
    vector path does not take (see block_fma). The fast path where fast_ok, the general path
    for the rest; which compiled variant runs is chosen here, so a profile compiles only the
    code it takes (a first call that compiled every step took 15 s)."""
    _, M, K = a.shape
    need = None
    if fast_ok(cfg, K):
        need = np.zeros((hi - lo, M * b.shape[2]), np.uint8)
        multi = None if K == cfg[BLOCK] else True
        late = None if cfg[LATE_C] == 0 else True
        if _fast_chunk(a, b, c, cfg, out, lo, hi, need, multi, late) == 0:
            return
    _general_chunk(a, b, c, cfg, out, lo, hi, need, *_switches(cfg, K))


def general(a, b, c, cfg, out, lo, hi):
    """Instances lo..hi-1 through the general path alone (the vector path's instances with an
    Inf/NaN input)."""
    _general_chunk(a, b, c, cfg, out, lo, hi, None, *_switches(cfg, a.shape[2]))


def _switches(cfg, K):
    """general._general_chunk's frame, plain, grouped, late for this cfg, and its scratch
    (allocated here: np.empty inside compiled code compiles numba's allocation code too,
    0.16 s of a first general-path call by numba's compile events)."""
    frame = cfg[SIGN_FRAME] != 0
    return (True if frame else None), (None if frame else True), \
        (True if cfg[GROUP] > 0 else None), (None if cfg[LATE_C] == 0 else True), \
        np.empty((6, K), np.int64)


@njit(cache=True, nogil=True)
def _fast_chunk(a, b, c, cfg, out, lo, hi, need, multi, late):
    """The fast path on instances lo..hi-1 (the caller checked fast_ok). An output whose row
    of A or column of B holds an Inf/NaN is left to the general path: need[bi - lo, i * N + j]
    = 1; returns how many. multi: None when one block covers K (else _fast_dot's blocks);
    late: None unless cfg[LATE_C] (the products first, C added last by _late_add)."""
    _, M, K = a.shape
    N = b.shape[2]
    ftz = cfg[IN_FTZ] != 0
    L = cfg[BLOCK]
    F = cfg[ALIGN]
    sh0 = F - cfg[A_MB] - cfg[B_MB]
    nblk = K // L
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
    n = 0
    for bi in range(lo, hi):
        _fast_decode_lines(a[bi], asig, aexe, arow, a_eb, a_mb, a_fn, ftz)        # rows of A
        _fast_decode_lines(b[bi].T, bsig, bexe, bcol, b_eb, b_mb, b_fn, ftz)      # columns of B
        for i in range(M):
            for j in range(N):
                if arow[i] or bcol[j]:
                    need[bi - lo, i * N + j] = 1
                    n += 1
                    continue
                cb = np.int64(c[bi, i, j])
                c0 = cb
                if late is not None:
                    c0 = np.int64(0)                # late C: the products first, C last
                if multi is None:
                    r = _fast_single(asig, aexe, bsig, bexe, i, j, c0, cfg, F, sh0)
                else:
                    r = _fast_dot(asig3, aexe3, bsig3, bexe3, i, j, c0, cfg, F, sh0)
                if late is not None:
                    r = _late_add(r, cb, cfg)
                out[bi, i, j] = np.uint32(r)
    return n


def in_chunks(nb, fn):
    """fn(lo, hi) over instances 0..nb-1: one call on this thread for a small batch (below
    SERIAL_BELOW), else in chunks over numba.get_num_threads() threads (layoutsim.chunks; the
    compiled chunk functions release the GIL)."""
    if nb < SERIAL_BELOW:        # get_num_threads() costs microseconds: not asked for a small batch
        fn(0, nb)
        return
    chunks.in_chunks(nb, fn, get_num_threads(), "layoutsim-mma")


# Below this many instructions a batch runs on the calling thread: waking the worker threads
# costs milliseconds on a busy machine (measured: an empty parallel region took 2.8 ms with the
# load average at 10 on 2 cores), more than the work (layoutsim.ptx issues one call per warp-level
# mma instruction, batched over the warps that execute it).
SERIAL_BELOW = 16384
