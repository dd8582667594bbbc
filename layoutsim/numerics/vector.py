"""The vector path of the block-FMA kernel: ROWS x V outputs at a time (kernel.py's docstring
says what it computes; lanes.py holds its LLVM vector arithmetic and why each step is exact).
`vector_ok` / `f32_ok` decide, in plain Python once per call, whether an instruction takes it
and in which lane type; what it cannot finish in vector lanes (an instance with an Inf/NaN
input, a result that is not a normal number, a late C) is completed by the scalar code of
kernel.py / general.py, compiled only when first needed.
"""
import threading

import numpy as np
from numba import njit

from .cfg import (ALIGN, A_EB, A_FN, A_MB, BLOCK, B_EB, B_FN, B_MB, CZERO_EMIN, C_EB, C_FN, C_MB,
                  D_EB, D_MB, FLOOR, IN_FTZ, KEEP, LATE_C, NAN_BITS, OUT_FTZ, OVF_INF, PROD_NORM,
                  ROUND)
from .general import _late_add, _round_pack
from .kernel import SERIAL_BELOW, general, in_chunks, plain_steps
from .lanes import F32_SCALE_MAX, ROWS, V, _lanes_decode, _lanes_mma
from .lanes import formats_code

E_LOW = -(1 << 20)
F32_TINY = np.float32(2.0 ** -126)       # the least normal float32
F32_MAX = np.float32(3.4028234663852886e38)        # floor of Emax when the profile has none (every real exponent is above)


@njit(cache=True, nogil=True)
def _vcore(a2, b2, c2, o2, cfg, fmts, M, K, lo, hi, vdt, av, ae, ap, bv, be, fs, es, S, em,
           redo, left, hold):
    """Instances lo..hi-1 of the batch, ROWS x V outputs at a time (see the notes above), with
    A, B, C and out as (nb, M * K), (nb, K * N), (nb, M * N), (nb, M * N). Values as vdt
    (float32 lanes where f32_ok, else float64) in the scratch arrays av (M, K), bv (K, N);
    exponents in ae, be (int32, same shapes), A's as row pairs in ap (M / 2, K: pair_rows); fs (2, M * N) float64 and es (2, M * N) int32:
    C's values and exponents, and a later block's C (the last D); S (float64) and em (int32):
    one per lane. fmts: the formats of A, B, C and D (lanes.FormatCodes: a compile-time
    constant, one compilation per combination of formats).

    An instance with an Inf/NaN input is left to the scalar paths: its index goes to
    redo[n_redo]. hold: None for instructions of one block and no late C (every NVIDIA
    profile's f16/bf16/tf32 and fp8 wgmma form: numba then compiles none of the code below
    that chains blocks or adds a late C), else M * N int64 scratch. With hold None, a lane
    _lanes_mma leaves to _round_pack is left to _vround instead (that compiles only when a
    result first needs it): left[n_left] = (flat index into o2, S, Emax). With hold, the
    same for the last block's results without a late C (an instance that also holds an
    Inf/NaN block result goes to redo instead), while such a lane of an earlier block, or of
    any block with a late C, sends its whole instance to redo (a later block needs that D as
    its C; real profiles round RZ/RNE, so only a subnormal or overflowing block result does
    this), and with a late C an output whose C the float32 step below cannot add is left to
    _vlate: left[n_left, 0] = its flat index into o2, which holds the D before the late C (so
    left is for _vround without a late C, for _vlate with one). So _vcore
    never calls the general path's rounding (_round_pack, _late_add): that code compiles
    only when a result first needs it (it compiled with every first fp8 mma.sync call: 4.3 ->
    2.3 s of CPU without it, issue 26).
    Returns (n_redo, n_left)."""
    N = b2.shape[1] // K
    L = cfg[BLOCK]
    nblk = K // L
    F = cfg[ALIGN]
    late = cfg[LATE_C] != 0
    floor = max(cfg[FLOOR], E_LOW)
    ftz = cfg[IN_FTZ]
    c_eb, c_ftz = cfg[C_EB], cfg[OUT_FTZ]
    d_eb, d_mb = cfg[D_EB], cfg[D_MB]
    keep, rnd = cfg[KEEP], cfg[ROUND]
    # Emax's start from C: its exponent, or (C = 0) its format's emin when C counts, or the floor
    czero = cfg[CZERO_EMIN] != 0
    c0e = np.int64(max(2 - (1 << (c_eb - 1)), floor) if czero else floor)
    d0e = np.int64(max(2 - (1 << (d_eb - 1)), floor) if czero else floor)
    cv, cl = fs[0], fs[1]                               # C; C of a later block: the last D
    ce, cle = es[0], es[1]
    # a late C added to an f32 D from an f32 C (sm_90's fp8 mma.sync): IEEE overflow to Inf,
    # no flushed subnormal, so that the CPU's float32 rounding is _late_add's for normal results
    f32_late = (late and d_eb == 8 and d_mb == 23 and c_eb == 8 and cfg[C_MB] == 23
                and cfg[C_FN] == 0 and cfg[OVF_INF] != 0 and c_ftz == 0)
    for o in range(M * N):                              # a late C: the blocks see C = 0
        cv[o] = 0.0
        ce[o] = c0e
    LN = ROWS * V                                       # lanes of one _lanes_mma
    n_redo = 0
    n_left = 0
    for bi in range(lo, hi):
        anysp = _lanes_decode(a2, bi, M * K, fmts, 0, ftz, av, ae, 0)
        anysp |= _lanes_decode(b2, bi, K * N, fmts, 1, ftz, bv, be, 1)
        if not late:
            anysp |= _lanes_decode(c2, bi, M * N, fmts, 2, c_ftz, cv, ce, 0)
        if anysp:                       # an Inf/NaN input: the scalar paths take the instance
            redo[n_redo] = bi
            n_redo += 1
            continue
        pair_rows(ae, ap)
        bad = False                                 # redo: a block result _vround cannot take
        n_left0 = n_left
        for blk in range(nblk if hold is not None else 1):
            ccv, cce, clo = cv, ce, c0e             # block 0 starts from C
            if hold is not None and blk > 0:
                ccv, cce, clo = cl, cle, d0e        # a later block from the last D
            for i0 in range(0, M, ROWS):
                for j0 in range(0, N, V):
                    fb = _lanes_mma(av, ap, bv, be, i0, j0, blk * L, blk * L + L, F, ccv, cce,
                                    clo, S, em, o2, bi, fmts, keep, rnd)
                    if fb != 0:
                        if hold is not None and (late or blk + 1 < nblk):
                            bad = True
                            continue
                        for l in range(LN):
                            if fb & (1 << l):
                                left[n_left, 0] = bi * (M * N) + (i0 + l // V) * N + j0 + l % V
                                left[n_left, 1] = np.int64(S[l])
                                left[n_left, 2] = em[l]
                                n_left += 1
            if bad:
                break
            if hold is not None:
                if blk == 0:
                    for o in range(M * N):
                        hold[o] = -1                # >= 0: the first block D that was Inf/NaN
                if blk + 1 < nblk:
                    # the next block's C: this D, decoded as C is (an Inf/NaN: held)
                    if _lanes_decode(o2, bi, M * N, fmts, 3, 0, cl, cle, 0):
                        for o in range(M * N):
                            r = np.int64(o2[bi, o])
                            if hold[o] < 0 and _is_special(r, d_eb, d_mb):
                                hold[o] = r
        if hold is not None and n_left > n_left0:
            for o in range(M * N):              # _vround would overwrite an Inf/NaN result
                if hold[o] >= 0:
                    bad = True
        if bad:                             # the scalar paths take the instance
            n_left = n_left0
            redo[n_redo] = bi
            n_redo += 1
            continue
        if hold is not None:
            pf = o2.view(np.float32)
            cf = c2.view(np.float32)                    # C: uint32 bits (kernel_inputs)
            for o in range(M * N):
                if hold[o] >= 0:                    # a block's D was Inf/NaN: so is the result
                    # (kernel._special_c of it: an Inf stays that Inf, a NaN is NAN_BITS)
                    o2[bi, o] = cfg[NAN_BITS] if hold[o] & ((np.int64(1) << d_mb) - 1) else hold[o]
                elif late and f32_late:
                    # _late_add's double sum, rounded to f32 by the CPU (RNE) where the result
                    # is 0 or a normal number (anything else: _late_add)
                    x = np.float64(pf[bi, o]) + np.float64(cf[bi, o])
                    y = np.float32(x)
                    if x == 0.0:
                        o2[bi, o] = 0
                        continue
                    if abs(y) >= F32_TINY and abs(y) <= F32_MAX:
                        pf[bi, o] = y
                        continue
                if late:                            # _vlate adds C to this D
                    left[n_left, 0] = bi * (M * N) + o
                    n_left += 1
    return n_redo, n_left


@njit(cache=True, inline="always")
def pair_rows(ae, ap):
    """ap[p, k]: the exponents ae[2p, k] and ae[2p + 1, k] as its low and high int16 halves
    (what _lanes_mma's int16 lanes take for two rows at once)."""
    for p in range(ap.shape[0]):
        for k in range(ap.shape[1]):
            ap[p, k] = (ae[2 * p, k] & 0xFFFF) | (ae[2 * p + 1, k] << 16)


@njit(cache=True, nogil=True)
def _vround(o2, cfg, left, n):
    """The results _vcore left: _round_pack of their exact sums."""
    F = cfg[ALIGN]
    M_N = o2.shape[1]
    for k in range(n):
        o2[left[k, 0] // M_N, left[k, 0] % M_N] = _round_pack(left[k, 1], left[k, 2] - F, False,
                                                              cfg)


@njit(cache=True, nogil=True)
def _vlate(o2, c2, cfg, left, n):
    """The late C _vcore left: _late_add of each listed D and its C."""
    M_N = o2.shape[1]
    for k in range(n):
        bi, o = left[k, 0] // M_N, left[k, 0] % M_N
        o2[bi, o] = _late_add(np.int64(o2[bi, o]), np.int64(c2[bi, o]), cfg)


@njit(cache=True, inline="always")
def _is_special(bits, eb, mb):
    """Whether raw float bits (IEEE specials) are an Inf or a NaN."""
    return ((bits >> mb) & ((1 << eb) - 1)) == (1 << eb) - 1


_SCRATCH = threading.local()


def _scratch(M, N, K, vdt):
    """_vcore's scratch arrays for this shape and lane type, one set per thread."""
    sets = getattr(_SCRATCH, "sets", None)
    if sets is None:
        sets = _SCRATCH.sets = {}
    key = (M, N, K, vdt)
    s = sets.get(key)
    if s is None:
        LN = ROWS * V
        s = sets[key] = (np.empty((M, K), vdt), np.empty((M, K), np.int32),
                         np.empty((M // 2, K), np.int32), np.empty((K, N), vdt), np.empty((K, N), np.int32),
                         np.empty((2, M * N), np.float64), np.empty((2, M * N), np.int32),
                         np.empty(LN, np.float64), np.empty(LN, np.int32),
                         np.empty(M * N, np.int64))
    return s


def _vchunk(a, b, c, cfg, out, lo, hi, vdt):
    """Instances lo..hi-1 of the batch (a (nb, M, K), b (nb, K, N), c and out (nb, M, N), all
    C-contiguous), complete: _vcore, then the general path (kernel.general) on the instances
    with an Inf/NaN input (that code compiles only when such an instance first comes)."""
    Chunks(cfg, a.shape[1], b.shape[2], a.shape[2], vdt).chunk(a, b, c, out, lo, hi)


class Chunks:
    """The vector path for one cfg, shape (M, N, K) and lane type, with what _vchunk derives from
    them alone made once: called as (a, b, c, out), the whole batch (run's work); .chunk, the
    instances lo..hi-1 (_vchunk's). The executor calls one per mma instruction thousands of times."""

    def __init__(self, cfg, M, N, K, vdt):
        self.cfg, self.M, self.N, self.K, self.vdt = cfg, M, N, K, vdt
        self.late = cfg[LATE_C] != 0
        self.one_block = not self.late and K == cfg[BLOCK]     # no hold array (see _vcore)
        self.fm = formats(cfg)
        self.fixed = (cfg.dtype, cfg.flags.c_contiguous, int(self.fm), vdt, self.one_block)

    def __call__(self, a, b, c, out):
        nb = a.shape[0]
        if nb < SERIAL_BELOW:    # what in_chunks does for a small batch, without its closure
            self.chunk(a, b, c, out, 0, nb)
        else:
            in_chunks(nb, lambda lo, hi: self.chunk(a, b, c, out, lo, hi))

    def chunk(self, a, b, c, out, lo, hi):
        M, N, K, cfg = self.M, self.N, self.K, self.cfg
        nb = a.shape[0]
        redo = np.empty(hi - lo, np.int64)
        *scratch, hold = _scratch(M, N, K, self.vdt)
        if self.one_block:
            hold = None
        # the results _vround rounds (index, S, Emax), or with a late C the outputs _vlate finishes
        left = np.empty(((hi - lo) * M * N, 1 if self.late else 3), np.int64)
        o2 = out.reshape(nb, M * N)
        c2 = c.reshape(nb, M * N)
        args = (a.reshape(nb, M * K), b.reshape(nb, K * N), c2, o2, cfg, self.fm, M, K, lo, hi, self.vdt, *scratch,
                redo, left, hold)
        # every argument type but those of a, b, c and cfg is fixed by fm, vdt and hold (np.empty
        # arrays, Python ints); a, b, c come C-contiguous and writeable (api._kernel_array)
        n, n_left = _call_vcore(args, (a.dtype, b.dtype, c.dtype, a.flags.aligned, b.flags.aligned,
                                       c.flags.aligned) + self.fixed)
        if n_left and self.late:
            _vlate(o2, c2, cfg, left, n_left)
        elif n_left:
            _vround(o2, cfg, left, n_left)
        if n:
            for bi in redo[:n]:
                general(a, b, c, cfg, out, bi, bi + 1)


_ENTRIES = {}            # the argument types of a _vcore call, as _vchunk keys them -> its compiled code


def _call_vcore(args, key):
    """_vcore(*args) through the compiled code numba's dispatcher chose for the same argument
    types before: the dispatcher types every one of its 23 arguments on every call (14 of the
    25 us a small batch's call took, issue 26). The code is the dispatcher's own overload for
    exactly these types (found by its typeof of each argument); where there is none (a
    conversion), every call goes through the dispatcher."""
    entry = _ENTRIES.get(key)
    if entry is not None:
        return entry(*args)
    out = _vcore(*args)
    cres = _vcore.overloads.get(tuple(_vcore.typeof_pyval(x) for x in args))
    if cres is not None:
        _ENTRIES[key] = cres.entry_point
    return out


_FORMATS = {}            # cfg's bytes -> formats(cfg) (per call otherwise: the executor's thousands)


def formats(cfg):
    """The formats of A, B, C and D as _vcore takes them (lanes.FormatCodes)."""
    key = cfg.tobytes()
    got = _FORMATS.get(key)
    if got is None:
        if len(_FORMATS) >= 256:
            _FORMATS.clear()
        got = _FORMATS[key] = _formats(cfg)
    return got


def _formats(cfg):
    return formats_code(*((cfg[e], cfg[e + 1], cfg[e + 2]) for e in (A_EB, B_EB, C_EB)),
                        (cfg[D_EB], cfg[D_MB], 0))


def vector_ok(cfg, M, N, K):
    """Whether _vchunk takes this instruction: the fast path's conditions, N a multiple of V,
    M of ROWS, M*K of V, and sums that stay exact in float64. (Plain Python: decided once
    per call, so only the path that runs gets compiled.)"""
    L = int(cfg[BLOCK])
    F = int(cfg[ALIGN])
    return bool(plain_steps.py_func(cfg) and cfg[PROD_NORM] == 0 and F - cfg[A_MB] - cfg[B_MB] >= 0
                and F <= 40 and L > 0 and L <= 64 and K % L == 0 and N % V == 0 and N > 0
                and (M * K) % V == 0 and M % ROWS == 0 and cfg[A_MB] + cfg[B_MB] + 2 <= 53
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


def run(a, b, c, cfg, out, vdt):
    """The batch, in chunks of consecutive instructions over numba.get_num_threads() threads
    (kernel.in_chunks; the compiled code releases the GIL)."""
    Chunks(cfg, a.shape[1], b.shape[2], a.shape[2], vdt)(a, b, c, out)
