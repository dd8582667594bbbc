"""numba kernel behind batch.wavefronts_batch(engine="numba"). Importing this module imports
numba; batch.py imports it only when the numba engine is asked for.

Same semantics as model.analyze (see model.py / nvidia.py); modes as in batch.MODES:
0 none, 1 pairs, 2 pairs-half, 3 identical, 4 one-phase, 5 greedy.
"""
import numpy as np
from numba import njit, prange


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
def _merge(offs, i, part, lane_phase, n_phases, mode, W, ph, exists, sig, cnt, cur, mine):
    """Merge phases under `mode` (1..5): rewrites ph[lane] and clears exists[p] of absorbed phases."""
    if mode == 4:
        for lane in range(32):
            if ph[lane] >= 0:
                ph[lane] = 0
        for p in range(1, n_phases):
            exists[p] = False
    elif mode == 1 or mode == 2:
        n_groups = (n_phases + 1) // 2
        whole = _pairs_ok(offs, i, part, lane_phase, -1) if mode == 1 else False
        for g in range(n_groups):
            ok = whole if mode == 1 else _pairs_ok(offs, i, part, lane_phase, g)
            if ok:
                for lane in range(32):
                    if lane_phase[lane] >= 0 and lane_phase[lane] // 2 == g:
                        ph[lane] = 2 * g
                if 2 * g + 1 < n_phases:
                    exists[2 * g + 1] = False
    elif mode == 5:
        start = -1
        cur_ok = False
        for p in range(n_phases):
            for b in range(32):
                mine[b] = -1
            ok = True
            empty = True
            for lane in range(32):
                if lane_phase[lane] == p and part[lane]:
                    empty = False
                    for k in range(W):
                        w = offs[i, lane] // 4 + k
                        b = w & 31
                        if mine[b] == -1:
                            mine[b] = w
                        elif mine[b] != w:
                            ok = False
            if empty and start >= 0:
                _join(p, start, lane_phase, ph, exists)
                continue
            join = start >= 0 and cur_ok and ok
            if join:
                for b in range(32):
                    if mine[b] != -1 and cur[b] != -1 and cur[b] != mine[b]:
                        join = False
                        break
            if join:
                _join(p, start, lane_phase, ph, exists)
                for b in range(32):
                    if mine[b] != -1:
                        cur[b] = mine[b]
            else:
                start = p
                cur_ok = ok
                for b in range(32):
                    cur[b] = mine[b]
    elif mode == 3:
        for p in range(n_phases):
            cnt[p] = 0
            for lane in range(32):
                if lane_phase[lane] == p and part[lane]:
                    for k in range(W):
                        w = offs[i, lane] // 4 + k
                        found = False
                        for t in range(cnt[p]):
                            if sig[p, t] == w:
                                found = True
                                break
                        if not found:
                            sig[p, cnt[p]] = w
                            cnt[p] += 1
            sig[p, :cnt[p]] = np.sort(sig[p, :cnt[p]])
            if cnt[p] == 0:
                continue
            for q in range(p):
                if exists[q] and cnt[q] == cnt[p]:
                    same = True
                    for t in range(cnt[p]):
                        if sig[q, t] != sig[p, t]:
                            same = False
                            break
                    if same:
                        _join(p, q, lane_phase, ph, exists)
                        break


@njit(cache=True, inline="always")
def _join(p, into, lane_phase, ph, exists):
    """Phase p merges into phase `into`: its lanes take that phase, p no longer exists."""
    exists[p] = False
    for lane in range(32):
        if lane_phase[lane] == p:
            ph[lane] = into


@njit(cache=True)
def _range(offs, masks, lane_phase, n_phases, mode, W, by_addr, empty_cost, empty_warp, width, limit,
           out, lo, hi):
    np1 = max(n_phases, 1)
    part = np.empty(32, np.bool_)
    ph = np.empty(32, np.int32)
    exists = np.empty(np1, np.bool_)
    keys = np.empty((np1, 32, 32), np.int64)
    counts = np.empty((np1, 32), np.int32)
    has = np.empty(np1, np.bool_)
    sig = np.empty((np1, 128), np.int64)
    cnt = np.empty(np1, np.int32)
    cur = np.empty(32, np.int64)
    mine = np.empty(32, np.int64)
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
        if mode != 0:
            _merge(offs, i, part, lane_phase, n_phases, mode, W, ph, exists, sig, cnt, cur, mine)
        # one pass over the lanes: distinct keys per (phase, bank); a phase costs its fullest bank
        has[:] = False
        counts[:, :] = 0
        for lane in range(32):
            if not part[lane]:
                continue
            p = ph[lane]
            has[p] = True
            o = offs[i, lane]
            w0 = o >> 2
            for k in range(W):
                w = w0 + k
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
            if not exists[p]:
                continue
            if has[p]:
                mx = 0
                for b in range(32):
                    if counts[p, b] > mx:
                        mx = counts[p, b]
                total += mx
            else:
                total += empty_cost
        out[i] = total


@njit(cache=True)
def wavefronts(offs, masks, lane_phase, n_phases, mode, W, by_addr, empty_cost, empty_warp, width, limit, out):
    """out[i] = wavefronts of access i, or -1 when a participating lane's address is negative,
    misaligned for `width` or beyond `limit` (the caller then raises the error)."""
    _range(offs, masks, lane_phase, n_phases, mode, W, by_addr, empty_cost, empty_warp, width, limit,
           out, 0, offs.shape[0])


@njit(cache=True, parallel=True)
def wavefronts_parallel(offs, masks, lane_phase, n_phases, mode, W, by_addr, empty_cost, empty_warp,
                        width, limit, out):
    """wavefronts() over all cores, in chunks (compiled on first use: only big batches take it)."""
    n = offs.shape[0]
    chunks = 256
    step = (n + chunks - 1) // chunks
    for c in prange(chunks):
        lo = c * step
        hi = min(n, lo + step)
        if lo < hi:
            _range(offs, masks, lane_phase, n_phases, mode, W, by_addr, empty_cost, empty_warp, width,
                   limit, out, lo, hi)
