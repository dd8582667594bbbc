"""MUFU.EX2 and MUFU.RCP (sfu.mufu_ex2, sfu.mufu_rcp) as compiled loops over the elements: the
same table models, step for step, for a process that has numba up already (the PTX executor on a
kernel with MMAs: its softmax and sigmoid steps each ran some thirty numpy calls, issue 26).
sfu.py's numpy forms are the reference; tests/numerics/test_sfu_kernel.py requires the same bits
from both on random, special and every exponent's inputs.

Per element, as the numpy forms select: a NaN gives the canonical NaN, an infinite input its
limit (ex2: +Inf or +0; rcp: a zero of its sign), ex2's out-of-range input (|x| > 4096) its limit
and rcp's zero or subnormal input an infinity of its sign; every other result is the table entry
(a float32) times a power of two, computed in float64 (exact) and rounded to float32 once (round
to nearest even, as numpy's astype), a subnormal result flushed to a zero of its sign.
"""
import math

import numpy as np
from numba import njit

_INF, _NEG_INF, _NEG_ZERO = np.uint32(0x7F800000), np.uint32(0xFF800000), np.uint32(0x80000000)
_MAG, _SIGN = np.uint32(0x7FFFFFFF), np.uint32(0x80000000)
_TINY = np.float32(2.0 ** -126)


@njit(cache=True, nogil=True, inline="always")
def _scaled(t, e, out, ob, i):
    """out[i]: table entry t (float32) times 2^e, rounded to float32, a subnormal flushed."""
    r = np.float32(math.ldexp(np.float64(t), e))
    if abs(r) < _TINY:
        ob[i] = np.uint32(0x80000000) if r < 0 or (r == 0 and math.copysign(1.0, r) < 0) else np.uint32(0)
    else:
        out[i] = r


@njit(cache=True, nogil=True, inline="always")
def _ex2_one(mag, neg, x, t0, t1, out, ob, i):
    a = 0.0 if mag < 0x00800000 else abs(np.float64(x))
    if a > 4096.0:                                      # out of range, or infinite
        ob[i] = np.uint32(0) if neg else _INF
        return
    q = np.int64(math.trunc(a * 8388608.0))             # |x| with 23 fraction bits
    whole, k = q >> 23, q & 8388607
    if neg:
        _scaled(t1[k], -whole, out, ob, i)
    else:
        _scaled(t0[k], whole, out, ob, i)


@njit(cache=True, nogil=True, inline="always")
def _rcp_one(mag, neg, t0, out, ob, i):
    if mag == _INF:
        ob[i] = _NEG_ZERO if neg else np.uint32(0)
    elif mag < 0x00800000:                              # zero or subnormal: an infinity
        ob[i] = _NEG_INF if neg else _INF
    else:
        _scaled(t0[mag & 0x7FFFFF], 127 - np.int64(mag >> 23), out, ob, i)
        if neg:
            ob[i] |= _SIGN


@njit(cache=True, nogil=True)
def _mufu(ex2, u, x, t0, t1, out, qnan):
    """MUFU.EX2 (ex2 True: tables t0, t1) or MUFU.RCP (t0) of every element of u (x: u as float32)."""
    ob = out.view(np.uint32)
    for i in range(u.shape[0]):
        mag = u[i] & _MAG
        neg = (u[i] >> 31) != 0
        if mag > _INF:                                  # NaN
            ob[i] = qnan
        elif ex2:
            _ex2_one(mag, neg, x[i], t0, t1, out, ob, i)
        else:
            _rcp_one(mag, neg, t0, out, ob, i)


def ex2(u, t0, t1, qnan):
    """mufu_ex2 of uint32 bits u (1-D, C-contiguous) with its tables (uint32)."""
    out = np.empty(u.shape[0], np.float32)
    _mufu(True, u, u.view(np.float32), t0.view(np.float32), t1.view(np.float32), out, qnan)
    return out.view(np.uint32)


def rcp(u, t0, qnan):
    """mufu_rcp of uint32 bits u (1-D, C-contiguous) with its table (uint32)."""
    out = np.empty(u.shape[0], np.float32)
    t = t0.view(np.float32)
    _mufu(False, u, u.view(np.float32), t, t, out, qnan)
    return out.view(np.uint32)
