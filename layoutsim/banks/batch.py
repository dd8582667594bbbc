"""Wavefronts of many warp accesses at once: a numba kernel and a numpy-vectorized engine.

Both compute exactly what model.analyze computes (tests/banks/test_banks_batch.py checks it on
random patterns) and share the address checks and the phase merging (`_final_phase`); they
differ in how they count, in speed and in start-up:
  engine="numba"  compiled (cache=True), > 1e6 warp accesses/s; the first call in a fresh
                  environment compiles for a few seconds. numba is imported here, lazily.
  engine="numpy"  no compilation, ~1e5 accesses/s: what the swizzle search uses.
  engine="auto"   (the default) numpy for fewer than AUTO_NUMBA_FROM accesses, numba above:
                  a small batch never waits for a compile.
"""
from dataclasses import dataclass

import numpy as np

from ..access import batch_offsets, lane_masks, mask_bits
from ..errors import LayoutsimError
from . import amd, nvidia
from ..archs import CDNA
from .model import LANES, generation, memory_limit, resolve_arch
from .ops import parse

MODES = {"none": 0, "pairs": 1, "pairs-half": 2, "identical": 3, "one-phase": 4, "greedy": 5}


@dataclass(frozen=True)
class PhaseTable:
    """What the engines need to know about one op under one rule set: each lane's phase and how
    phases merge."""
    lane_phase: np.ndarray     # int32[32]: base phase of each lane, -1 = address not used
    n_phases: int
    mode: int                  # MODES
    words: int                 # 32-bit words per lane access
    by_address: bool           # sub-word stores: different bytes of a word conflict
    empty_cost: int
    empty_warp: int
    matrix: bool
    width: int


def phase_table(spec, arch, rules):
    if spec.vendor == "amd":
        base = amd.base_phases(spec, generation(arch))
        mode, empty, by_addr, empty_warp = "none", 0, False, 0
    else:
        base = nvidia.base_phases(spec)
        mode = rules.merge(spec)
        empty = rules.empty_phase
        empty_warp = rules.empty_warp
        by_addr = rules.by_address(spec)
    lane_phase = np.full(LANES, -1, np.int32)
    for p, lanes in enumerate(base):
        lane_phase[lanes] = p
    if len(base) == 1:
        mode = "none"
    return PhaseTable(lane_phase, len(base), MODES[mode], spec.words, by_addr, empty, empty_warp,
                spec.is_matrix, spec.width)


def _parts(masks, pl):
    return mask_bits(masks) & (pl.lane_phase >= 0)[None, :]


def prepare_common(op, offsets, arch=None, active=None, rules=None):
    """(spec, arch, phase table, offsets int64[N,32], masks uint64[N]) -- addresses not yet checked."""
    spec = parse(op)
    arch = resolve_arch(spec, arch)
    if arch in CDNA:
        raise LayoutsimError(f"the batch engines cost 32-lane accesses; {arch} LDS accesses are wave64: "
                             f"use layoutsim.banks.analyze (or `layoutsim banks`) for them")
    rules = rules or nvidia.DEFAULT
    off = batch_offsets(offsets)
    n = off.shape[0]
    pl = phase_table(spec, arch, rules)
    masks = lane_masks(active, n)
    if spec.is_matrix:
        need = np.uint64(sum(1 << int(lane) for lane in np.flatnonzero(pl.lane_phase >= 0)))
        miss = (masks & need) != need
        if miss.any():
            i = int(np.flatnonzero(miss)[0])
            lane = next(lane for lane in range(LANES) if (int(need) >> lane) & 1 and not (int(masks[i]) >> lane) & 1)
            raise LayoutsimError(f"access {i}: {spec.name} is .sync.aligned: every lane executes it, "
                                 f"and lane {lane} (a row address) is inactive")
    return spec, arch, pl, off, masks


def check_batch(spec, arch, off, part, first=0):
    """Raise a one-line error for the first access (index + first) with a bad address."""
    w = spec.width
    limit, where = memory_limit(arch)
    used = np.where(part, off, 0)          # three reductions decide the common case: all good
    if used.size == 0 or (used.min() >= 0 and used.max() <= limit - w and not (used & (w - 1)).any()):
        return
    bad = part & ((off < 0) | ((off & (w - 1)) != 0) | (off > limit - w))
    i, lane = (int(v) for v in np.argwhere(bad)[0])
    o = int(off[i, lane])
    head = f"access {i + first}, lane {lane}: "
    if o < 0:
        raise LayoutsimError(head + f"offset {o} is negative")
    if o % w:
        tail = ": the hardware faults on it (misaligned address)" if spec.vendor == "nvidia" else ""
        raise LayoutsimError(head + f"address {o} ({o:#x}) is not {w}-byte aligned, as {spec.name} needs{tail}")
    raise LayoutsimError(head + f"offset {o} ({o:#x}) + {w} bytes is beyond {where}")


def prepare_batch(op, offsets, arch=None, active=None, rules=None):
    """(spec, arch, phase table, offsets int64[N,32], participating bool[N,32]) with every access checked."""
    spec, arch, pl, off, masks = prepare_common(op, offsets, arch, active, rules)
    part = _parts(masks, pl)
    check_batch(spec, arch, off, part)
    return spec, arch, pl, off, part


AUTO_NUMBA_FROM = 2000     # below this many accesses the numpy engine is done before numba loads


def wavefronts_batch(op, offsets, arch=None, active=None, rules=None, engine="auto"):
    """int64[N] wavefronts of N warp accesses of one op: offsets is [N, 32] byte offsets,
    active None (all lanes), N 32-bit lane masks, or [N, 32] booleans. engine: "auto" (numpy
    for small batches, numba for large ones), "numba" or "numpy"."""
    if engine not in ("auto", "numba", "numpy"):
        raise LayoutsimError(f"unknown engine {engine!r}; valid: auto, numba, numpy")
    spec, arch, pl, off, masks = prepare_common(op, offsets, arch, active, rules)
    if off.shape[0] == 0:
        return np.zeros(0, np.int64)
    if engine == "numpy" or (engine == "auto" and off.shape[0] < AUTO_NUMBA_FROM):
        part = _parts(masks, pl)
        check_batch(spec, arch, off, part)
        return _numpy_engine(pl, off, part)
    if pl.mode in (MODES["identical"], MODES["greedy"]):     # merged in numpy, counted by numba
        part = _parts(masks, pl)
        check_batch(spec, arch, off, part)
        return _numba_merged(pl, off, part)
    out = _numba_engine(pl, off, masks, memory_limit(arch)[0])
    if out.min() < 0:                       # the kernel flags bad addresses with -1
        i = int(np.flatnonzero(out < 0)[0])
        check_batch(spec, arch, off[i:i + 1], _parts(masks[i:i + 1], pl), first=i)
    return out


def ideal_batch(op, offsets, arch=None, active=None, rules=None):
    """Ideal wavefronts (one per non-empty phase) of N accesses, via the numpy engine."""
    spec, arch, pl, off, part = prepare_batch(op, offsets, arch, active, rules)
    return _numpy_engine(pl, off, part, ideal=True)


# ---- numpy engine -----------------------------------------------------------------------
def _final_phase(pl, off, part):
    """int8[N, 32] phase id of each lane after merging (-1: address not used), and
    bool[N, n_phases] phases that exist; the one implementation of the merge rules for batches."""
    n = off.shape[0]
    lp = np.broadcast_to(pl.lane_phase.astype(np.int8), (n, LANES))
    exists = np.ones((n, pl.n_phases), bool)
    if pl.mode == 0:
        return lp.copy(), exists
    if pl.mode == 4:
        ph = np.where(lp >= 0, 0, -1).astype(np.int8)
        exists[:, 1:] = False
        return ph, exists
    if pl.mode in (1, 2):
        group = pl.lane_phase // 2                                    # pair group of each lane
        n_groups = (pl.n_phases + 1) // 2
        used = pl.lane_phase >= 0
        oks = []
        for m in (1, 2):
            # ok[lane]: lane or its partner lane ^ m takes no part, or both give the same address.
            # Viewed as [N, 32 / 2m, 2, m], a lane's partner is the other index of axis 2.
            shape = (n, LANES // (2 * m), 2, m)
            o, p = off.reshape(shape), part.reshape(shape) & used.reshape(shape[1:])
            pair = ~p[:, :, 0] | ~p[:, :, 1] | (o[:, :, 0] == o[:, :, 1])          # [N, 32 / 2m, m]
            if pl.mode == 1:
                oks.append(np.repeat(pair.all(axis=(1, 2))[:, None], n_groups, axis=1))
            else:
                ok = np.broadcast_to(pair[:, :, None, :], shape).reshape(n, LANES)
                g_ok = np.ones((n, n_groups), bool)
                for g in range(n_groups):
                    g_ok[:, g] = ok[:, group == g].all(axis=1)
                oks.append(g_ok)
        merged = oks[0] | oks[1]                                      # [N, groups]
        lane_merged = np.where(lp >= 0, merged[:, np.maximum(group, 0)], False)
        ph = np.where(lane_merged, lp & ~1, lp)
        phase_group = np.arange(pl.n_phases) // 2
        odd = (np.arange(pl.n_phases) % 2 == 1)
        exists = ~(merged[:, phase_group] & odd[None, :])
        return ph, exists
    ph = lp.copy()
    if pl.mode == 5:
        # greedy: per access, reference semantics (not vectorized)
        for i in range(n):
            cur, start = None, -1
            for p in range(pl.n_phases):
                lanes = np.flatnonzero((pl.lane_phase == p) & part[i])
                ws = {int(o) // 4 + k for o in off[i, lanes] for k in range(pl.words)}
                if not ws and start >= 0:
                    ph[i, pl.lane_phase == p] = start
                    exists[i, p] = False
                    continue
                banks, ok = {}, True
                for w in ws:
                    if banks.setdefault(w & 31, w) != w:
                        ok = False
                if start >= 0 and cur is not None and ok and all(cur.get(b, w) == w for b, w in banks.items()):
                    ph[i, pl.lane_phase == p] = start
                    exists[i, p] = False
                    cur.update(banks)
                else:
                    start, cur = p, (banks if ok else None)
        return ph, exists
    # identical: per access, reference semantics (rare; not vectorized)
    for i in range(n):
        keys = []
        for p in range(pl.n_phases):
            lanes = np.flatnonzero((pl.lane_phase == p) & part[i])
            ws = frozenset(int(o) // 4 + k for o in off[i, lanes] for k in range(pl.words))
            if ws and ws in keys:
                q = keys.index(ws)
                ph[i, pl.lane_phase == p] = q
                exists[i, p] = False
            keys.append(ws if ws else None)
    return ph, exists


def _numpy_engine(pl, off, part, ideal=False, both=False):
    n = off.shape[0]
    ph, exists = _final_phase(pl, off, part)
    k = np.arange(pl.words)
    word = (off // 4)[:, :, None] + k                                # [N, 32, W]
    key = off[:, :, None] + 0 * k if pl.by_address else word
    valid = np.broadcast_to(part[:, :, None], word.shape)
    pid = np.broadcast_to(np.maximum(ph, 0)[:, :, None], word.shape)
    acc = np.broadcast_to(np.arange(n)[:, None, None], word.shape)
    P = pl.n_phases
    bank = word & 31
    # a distinct (access, phase, key) asks its bank once; key < 2**20 (4-byte words of 256 KiB x 4)
    code = ((acc[valid] * P + pid[valid]) * 32 + bank[valid]) * (1 << 22) + key[valid]
    code.sort()
    uniq = code[np.concatenate(([True], code[1:] != code[:-1]))] if code.size else code
    per_bank = np.bincount(uniq >> 22, minlength=n * P * 32).reshape(n, P, 32)
    wf = per_bank.max(axis=2)                                         # [N, P]
    has = np.zeros((n, P), bool)
    sel = part
    np.logical_or.at(has, (np.broadcast_to(np.arange(n)[:, None], ph.shape)[sel], ph[sel]), True)
    empty = pl.empty_cost * (exists & ~has).sum(axis=1)
    none = ~part.any(axis=1)
    empty = np.where(none, pl.empty_warp, empty)
    total = (wf * has).sum(axis=1) + empty
    best = has.sum(axis=1) + empty
    if both:
        return total, best
    return best if ideal else total


# ---- numba engine -----------------------------------------------------------------------
PARALLEL_FROM = 50_000       # batches this large use every core (that kernel compiles on first use)


def _numba_engine(pl, off, masks, limit):
    from . import _jit                      # imports numba: only here, never at package import
    out = np.zeros(off.shape[0], np.int64)
    args = (off, masks.astype(np.int64), pl.lane_phase.astype(np.int32), pl.n_phases, pl.mode, pl.words,
            pl.by_address, pl.empty_cost, pl.empty_warp, pl.width, limit, out)
    if off.shape[0] >= PARALLEL_FROM:
        _jit.wavefronts_parallel(*args)
    else:
        _jit.wavefronts(*args, 0, off.shape[0])
    return out


def _numba_merged(pl, off, part):
    from . import _jit
    ph, exists = _final_phase(pl, off, part)
    out = np.zeros(off.shape[0], np.int64)
    _jit.wavefronts_merged(off, part, ph, exists, pl.words, pl.by_address, pl.empty_cost, pl.empty_warp, out)
    return out
