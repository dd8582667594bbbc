"""numba kernels behind batch.wavefronts_batch's numba engine. Importing this module imports
numba; batch.py imports it only when the numba engine runs.

Same semantics as model.analyze (see model.py / nvidia.py). To keep the first compile short,
the kernels hold only what the default rules need: the address checks, the "pairs" merges of
wide accesses and the counting. The rarer merge modes ("identical", "greedy": candidate rule
sets of the bank probe) are merged by batch._final_phase in numpy and counted here with
`wavefronts_merged`, which compiles only when first used.
Modes as in batch.MODES: 0 none, 1 pairs, 2 pairs-half, 3 identical, 4 one-phase, 5 greedy.
"""
import numpy as np
from numba import get_num_threads, njit

from .. import chunks


@njit(cache=True)
def _pairs_ok(offs, i, part, lane_phase, g):
    """Every participating lane n (of pair group g, or all when g < 0) has lane n^m absent,
    inactive or at the same address, for m = 1 or for m = 2."""
    for m in (1, 2):
        ok = True
        for lane in range(32):
            if lane_phase[lane] < 0 or not part[lane]:
                continue
            if g >= 0 and lane_phase[lane] // 2 != g:
                continue
            q = lane ^ m
            if lane_phase[q] >= 0 and part[q] and offs[i, q] != offs[i, lane]:
                ok = False
                break
        if ok:
            return True
    return False


@njit(cache=True)
def _merge_pairs(offs, i, part, lane_phase, n_phases, half, ph, exists):
    """Modes 1 (pairs: all of the access or nothing) and 2 (pairs-half: per pair of phases):
    merged phase 2g+1 joins 2g; rewrites ph[lane] and clears exists[2g+1]."""
    whole = False if half else _pairs_ok(offs, i, part, lane_phase, np.int64(-1))  # one compile
    for g in range((n_phases + 1) // 2):
        ok = _pairs_ok(offs, i, part, lane_phase, g) if half else whole
        if ok:
            for lane in range(32):
                if lane_phase[lane] >= 0 and lane_phase[lane] // 2 == g:
                    ph[lane] = 2 * g
            if 2 * g + 1 < n_phases:
                exists[2 * g + 1] = False


@njit(cache=True)
def _count(offs, i, part, ph, exists, n_phases, W, by_addr, empty_cost, keys, counts, has):
    """Wavefronts of access i with merged phases ph[lane] / exists[p]: a phase costs its fullest
    bank (distinct words, or distinct addresses for sub-word stores under by_addr)."""
    has[:] = False
    counts[:, :] = 0
    for lane in range(32):
        if not part[lane]:
            continue
        p = ph[lane]
        has[p] = True
        o = offs[i, lane]
        for k in range(W):
            w = (o >> 2) + k
            key = o if by_addr else w
            b = w & 31
            c = counts[p, b]
            found = False
            for t in range(c):
                if keys[p, b, t] == key:
                    found = True
                    break
            if not found:
                keys[p, b, c] = key
                counts[p, b] = c + 1
    total = 0
    for p in range(n_phases):
        if exists[p]:
            if has[p]:
                most = 0                       # a loop, not counts[p].max(): numba's reduction
                for b in range(32):            # compiles for about 1 s
                    most = max(most, counts[p, b])
                total += most
            else:
                total += empty_cost
    return total


@njit(cache=True, nogil=True)
def wavefronts(offs, masks, lane_phase, n_phases, mode, W, by_addr, empty_cost, empty_warp, width, limit,
               out, lo, hi):
    """out[i] for lo <= i < hi: wavefronts of access i (modes 0, 1, 2, 4), or -1 when a
    participating lane's address is negative, misaligned for `width` or beyond `limit` (the
    caller then raises). Called directly: a wrapper would be one more module to optimize."""
    np1 = max(n_phases, 1)
    part = np.empty(32, np.bool_)
    ph = np.empty(32, np.int32)
    exists = np.empty(np1, np.bool_)
    keys = np.empty((np1, 32, 32), np.int64)
    counts = np.empty((np1, 32), np.int32)
    has = np.empty(np1, np.bool_)
    for i in range(lo, hi):
        m = masks[i]
        bad = False
        n_part = 0
        for lane in range(32):
            ph[lane] = lane_phase[lane]
            on = lane_phase[lane] >= 0 and ((m >> lane) & 1) == 1
            part[lane] = on
            if on:
                n_part += 1
                o = offs[i, lane]
                if o < 0 or (o & (width - 1)) != 0 or o > limit - width:
                    bad = True
        if bad:
            out[i] = -1
            continue
        if n_part == 0:
            out[i] = empty_warp
            continue
        exists[:] = True
        if mode == 1 or mode == 2:
            _merge_pairs(offs, i, part, lane_phase, n_phases, mode == 2, ph, exists)
        elif mode == 4:                                    # one phase for the whole access
            for lane in range(32):
                if ph[lane] >= 0:
                    ph[lane] = 0
            exists[1:] = False
        out[i] = _count(offs, i, part, ph, exists, n_phases, W, by_addr, empty_cost, keys, counts, has)


def wavefronts_parallel(offs, masks, lane_phase, n_phases, mode, W, by_addr, empty_cost, empty_warp,
                        width, limit, out):
    """wavefronts() over numba.get_num_threads() threads (layoutsim.chunks): the compiled
    wavefronts releases the GIL, so nothing more compiles than for a small batch."""
    args = (offs, masks, lane_phase, n_phases, mode, W, by_addr, empty_cost, empty_warp, width, limit,
            out)
    chunks.in_chunks(offs.shape[0], lambda lo, hi: wavefronts(*args, lo, hi), get_num_threads(),
                     "layoutsim-banks")


@njit(cache=True)
def wavefronts_merged(offs, part, ph, exists, W, by_addr, empty_cost, empty_warp, out):
    """out[i] for phases merged beforehand (ph [N, 32], exists [N, P]; addresses checked)."""
    n_phases = exists.shape[1]
    keys = np.empty((n_phases, 32, 32), np.int64)
    counts = np.empty((n_phases, 32), np.int32)
    has = np.empty(n_phases, np.bool_)
    for i in range(offs.shape[0]):
        if part[i].any():
            out[i] = _count(offs, i, part[i], ph[i], exists[i], n_phases, W, by_addr, empty_cost,
                            keys, counts, has)
        else:
            out[i] = empty_warp
