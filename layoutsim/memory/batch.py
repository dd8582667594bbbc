"""Requests, sectors, lines, wavefronts and ideal sectors of many warp accesses at once (numpy).

This is the one implementation of the counting rules: `coalesce` (one access, with details)
runs it on a batch of one. A load or store costs one sort over the 32 lanes of each row (the
sectors; lines are runs of the same sorted keys) and one bincount of the lines' tag banks;
atomics sort once more to find repeated addresses, and only the rows that repeat one take the
general path (keys grouped by request and replay round, per-round counts as differences of
running sums). No Python loop over accesses (benchmarks/bench_coalesce.py prints the rate).
Inactive lanes and lanes without an address take no part.
"""
import functools
from dataclasses import replace

import numpy as np

from .. import archs as A
from ..access import LANES, batch_offsets, lane_masks, mask_bits
from ..errors import LayoutsimError
from . import amd, nvidia
from .ops import parse

MAX_OFFSET = 1 << 40          # bytes from the buffer's start: far beyond any GPU's memory
_SENTINEL = np.int64(1) << 62
FIELDS = ("requests", "sectors", "ideal_sectors", "lines", "wavefronts")


def resolve_arch(spec, arch):
    """The arch the op runs on: sm_90 by default for NVIDIA ops; AMD ops need a gfx arch."""
    if arch is None:
        if spec.vendor == "amd":
            raise LayoutsimError(f"{spec.name} is an AMD op: give arch ({', '.join(A.AMD)})")
        return "sm_90"
    a = A.of_op(spec.name, spec.vendor, arch, {"amd": "AMD op", "nvidia": "NVIDIA op"},
                "AMD global ops are global_load_b32, buffer_load_b128, ... (see --list-ops)")
    if spec.vendor == "nvidia" and not A.nvidia_at_least(a, spec.min_arch):
        raise LayoutsimError(f"{spec.name} needs {spec.min_arch} or later, not {a}")
    return a


def check_offsets(spec, off, part, first=0):
    """One-line error for the first participating lane with a bad offset (row index + first)."""
    w = spec.width                               # a power of two: & (w - 1) is the remainder
    # as unsigned, a negative offset is huge: one comparison catches both ends
    bad = part & ((off.view(np.uint64) > np.uint64(MAX_OFFSET - w)) | ((off & (w - 1)) != 0))
    if not bad.any():
        return
    i, lane = (int(v) for v in np.argwhere(bad)[0])
    o = int(off[i, lane])
    head = f"lane {lane}: " if off.shape[0] == 1 and first == 0 else f"access {i + first}, lane {lane}: "
    if o < 0:
        raise LayoutsimError(head + f"offset {o} is negative (offsets count from the buffer's start)")
    if o % w:
        raise LayoutsimError(head + f"address {o} ({o:#x}) is not {w}-byte aligned, as {spec.name} "
                             f"needs: the hardware faults on it (misaligned address)")
    raise LayoutsimError(head + f"offset {o:#x} + {w} bytes is beyond the model's {MAX_OFFSET:#x}-byte buffer")


def _sorted_runs(keys, valid):
    """(sorted keys [N, K], bool [N, K] first of a run of equal valid keys): one sort serves
    every count whose key is a monotone function of `keys` (lines from sectors, ...)."""
    k = np.where(valid, keys, _SENTINEL)
    k.sort(axis=1)
    new = k != _SENTINEL
    new[:, 1:] &= k[:, 1:] != k[:, :-1]
    return k, new


def _runs_of(k, first, shift):
    """First-of-run marks of `k >> shift` for keys (and their runs `first`) from _sorted_runs:
    a run of k >> shift starts where a run of k does and the coarser key changes."""
    c = k >> shift
    new = first.copy()
    new[:, 1:] &= c[:, 1:] != c[:, :-1]
    return new


def _groups(spec, rules):
    """int64[32] request group of each lane (all 0 when an instruction is one request)."""
    lane = np.arange(LANES, dtype=np.int64)
    if spec.vendor == "nvidia" and rules.requests == "per_128B" and spec.width > 4:
        return lane // (nvidia.LINE // spec.width)
    return np.zeros(LANES, np.int64)


def _ceil(a, b):
    return -(-a // b)


def _log2(n):
    return int(n).bit_length() - 1


def _occurrence(off, part):
    """int64[N, 32]: for each participating lane, how many lower participating lanes of its row
    hold the same address (0 for the first use): its replay round."""
    lane = np.arange(LANES, dtype=np.int64)
    k, first = _sorted_runs((off << 5) | lane, part)        # address-major, lane-minor
    first = _runs_of(k, first, 5)                            # a new address starts a run
    pos = np.broadcast_to(np.arange(LANES), k.shape)
    start = np.maximum.accumulate(np.where(first, pos, 0), axis=1)
    occ = np.zeros(off.shape, np.int64)
    rows, cols = np.nonzero(k != _SENTINEL)
    occ[rows, k[rows, cols] & 31] = cols - start[rows, cols]
    return occ


_UNIT = 38          # key bits: unit (request group x 32 + replay round) << 38 | 32-byte sector


def _last_of_runs(first, valid):
    """bool [N, K]: the last position of each run of sorted valid keys, from its first-of-run
    marks (a run ends where the next one starts or the valid keys end)."""
    ends = np.ones_like(first)
    ends[:, :-1] = first[:, 1:] | ~valid[:, 1:]
    return valid & ends


def _run_totals(marks, last):
    """int [N, K]: at each run's last position, how many `marks` the run holds (elsewhere junk).
    Runs are given by their last positions; counts are differences of a running sum."""
    c = np.cumsum(marks, axis=1)
    before = np.where(last, c, 0)
    prev = np.zeros_like(c)
    prev[:, 1:] = np.maximum.accumulate(before, axis=1)[:, :-1]
    return c - prev


@functools.lru_cache(maxsize=256)
def _bank_table(masks):
    """int8 tag bank of every line index below 2^(the masks' highest bit) (the hash reads no other bits)."""
    bits = max(1, max(m.bit_length() for m in masks))
    return nvidia.tag_bank(np.arange(1 << bits, dtype=np.int64), masks).astype(np.int8)


def _bank_of(lines, masks=None):
    """Tag bank of line indices: one table lookup (the hash uses the low bits only)."""
    table = _bank_table(tuple(masks or nvidia.TAG_BANK_MASKS))
    return table[lines & (table.size - 1)]


def _wavefronts(spec, rules, k, first_sector, first_line, plain, masks=None):
    """Wavefronts of each row from its sorted (unit, sector) keys ([N, 32] array work only)."""
    n = k.shape[0]
    if plain and spec.operands == 1:          # the common case: one unit, one pass, no running sums
        if rules.wavefronts != "tag_banks":
            per = (first_sector if rules.wavefronts == "sectors16" else first_line).sum(axis=1)
            return {"lines4": lambda: _ceil(per, 4), "lines": lambda: per, "sectors16": lambda: _ceil(per, 16)}[
                rules.wavefronts]()
        code = np.where(first_line, _bank_of(k >> 2, masks), nvidia.TAG_BANKS).astype(np.int64)   # 4: no line
        code += (np.arange(n, dtype=np.int64) * (nvidia.TAG_BANKS + 1))[:, None]
        per_bank = np.bincount(code.ravel(), minlength=n * (nvidia.TAG_BANKS + 1)).reshape(n, -1)
        return per_bank[:, :nvidia.TAG_BANKS].max(axis=1)
    valid = k != _SENTINEL
    if plain:                                                   # one unit: it ends with the keys
        unit_last = _last_of_runs(np.zeros_like(first_line), valid)
    else:
        unit_last = _last_of_runs(_runs_of(k, first_sector, _UNIT), valid)
    line_last = _last_of_runs(first_line, valid)
    if rules.wavefronts != "tag_banks":
        per = _run_totals(first_sector if rules.wavefronts == "sectors16" else first_line, unit_last)
        per = {"lines4": lambda: _ceil(per, 4), "lines": lambda: per, "sectors16": lambda: _ceil(per, 16)}[
            rules.wavefronts]()
        return np.where(unit_last, per, 0).sum(axis=1)
    # tag banks: a line is marked at its last sector, where its sector (or 64-B half) count, its
    # passes, is known; either each pass over the lines of a unit costs the lines of its fullest
    # bank (passes="rounds"), or a bank takes the passes of its lines in every round of a request
    # and the fullest bank counts (passes="banks")
    bank = _bank_of((k >> 2) & ((np.int64(1) << (_UNIT - 2)) - 1), masks)
    passes = line_last.astype(np.int64)
    if spec.operands > 1:
        if rules.line_pass == "halves":
            passes = np.where(line_last, _run_totals(_runs_of(k, first_sector, 1), line_last), 0)
        else:
            sectors = _run_totals(first_sector, line_last)
            passes = np.where(line_last, _ceil(sectors * spec.operands * nvidia.SECTOR, nvidia.LINE), 0)
    if rules.passes == "banks":
        group_last = unit_last if plain else _last_of_runs(_runs_of(k, first_sector, _UNIT + 5), valid)
        fullest = np.zeros(k.shape, np.int64)
        for b in range(nvidia.TAG_BANKS):
            fullest = np.maximum(fullest, _run_totals(np.where(bank == b, passes, 0), group_last))
        return np.where(group_last, fullest, 0).sum(axis=1)
    total = np.zeros(n, np.int64)
    for p in range(int(passes.max(initial=0))):
        take = passes > p
        fullest = np.zeros(k.shape, np.int64)
        for b in range(nvidia.TAG_BANKS):
            fullest = np.maximum(fullest, _run_totals(take & (bank == b), unit_last))
        total += np.where(unit_last, fullest, 0).sum(axis=1)
    return total


def count(spec, off, part, rules=None, tag_masks=None):
    """{field: int64[N]} for validated offsets [N, 32] and participating lanes bool[N, 32];
    tag_masks: another tag-bank hash than nvidia.TAG_BANK_MASKS (for the exhaustive search)."""
    n = off.shape[0]
    active = part.sum(axis=1)
    if spec.vendor == "amd":
        if rules is not None:             # they would be ignored: AMD counts follow memory/amd.py
            raise LayoutsimError(f"NVIDIA counting rules (rules=, --rules) do not apply to {spec.name}: AMD "
                                 f"requests and sectors follow the AMD documents; drop them")
        k, halves = _sorted_runs(off >> _log2(amd.SECTOR), part)
        lines = _runs_of(k, halves, _log2(amd.LINE // amd.SECTOR)).sum(axis=1)
        return {"requests": lines, "sectors": halves.sum(axis=1),
                "ideal_sectors": _ceil(active * spec.width, amd.SECTOR), "lines": lines,
                "wavefronts": np.zeros(n, np.int64)}
    rules = rules or nvidia.rules_for(spec)
    g = _groups(spec, rules)
    unit = np.broadcast_to(g * LANES, off.shape)
    if rules.replay == "address" and spec.kind in ("atom", "red"):
        occ = _occurrence(off, part)
        replayed = occ.any(axis=1)
        if not g.any() and replayed.any() and not replayed.all():
            # the rows without a repeated address take the fast path, the others the general one
            plain_rows, out = ~replayed, {}
            a = count(spec, off[plain_rows], part[plain_rows], replace(rules, replay="none"), tag_masks)
            b = _count_units(spec, rules, off[replayed], part[replayed], occ[replayed], g, tag_masks)
            for field in FIELDS:
                out[field] = np.empty(n, np.int64)
                out[field][plain_rows], out[field][replayed] = a[field], b[field]
            return out
        unit = unit + occ
    return _count_units(spec, rules, off, part, unit, g, tag_masks)


def _count_units(spec, rules, off, part, unit, g, masks=None):
    """count() for NVIDIA ops, with each lane's unit (request group x 32 + replay round) known."""
    active = part.sum(axis=1)
    sector = off >> _log2(nvidia.SECTOR)
    plain = not g.any() and not (unit.any() if unit.size else False)
    k, first_sector = _sorted_runs(sector if plain else (unit << _UNIT) | sector, part)
    first_line = _runs_of(k, first_sector, _log2(nvidia.LINE // nvidia.SECTOR))
    # lines of the whole access (not per request or round)
    lines = first_line.sum(axis=1) if plain else _sorted_runs(off >> _log2(nvidia.LINE), part)[1].sum(axis=1)
    if g.any():
        requests = sum(((g == q)[None, :] & part).any(axis=1).astype(np.int64) for q in range(int(g.max()) + 1))
    else:
        requests = (active > 0).astype(np.int64)
    requests = np.where(active == 0, rules.empty_request, requests)
    if rules.sectors == "distinct":
        sectors = first_sector.sum(axis=1)
    elif rules.sectors == "per_lane":
        sectors = active
    elif rules.sectors == "pair_lines":
        pair = np.arange(LANES, dtype=np.int64) // 2
        sectors = _sorted_runs((pair[None, :] << 36) | (off >> _log2(nvidia.LINE)), part)[1].sum(axis=1)
    else:
        sectors = _sorted_runs((unit << 40) | off, part)[1].sum(axis=1)
    wavefronts = _wavefronts(spec, rules, k, first_sector, first_line, plain, masks)
    if rules.ideal == "bytes":
        ideal = _ceil(active * spec.width, nvidia.SECTOR)
    elif rules.ideal == "min_sectors":          # a lane's element lies in one sector (width <= 16, aligned)
        distinct = first_sector.sum(axis=1) if plain else _sorted_runs(sector, part)[1].sum(axis=1)
        ideal = np.minimum(_ceil(active * spec.width, nvidia.SECTOR), distinct)
    else:                                        # aligned accesses of one width coincide or are disjoint
        ideal = _ceil(_sorted_runs(off, part)[1].sum(axis=1) * spec.width, nvidia.SECTOR)
    return {"requests": requests.astype(np.int64), "sectors": sectors.astype(np.int64),
            "ideal_sectors": ideal.astype(np.int64), "lines": lines.astype(np.int64),
            "wavefronts": wavefronts.astype(np.int64)}


def prepare_batch(op, offsets, active=None, arch="sm_90"):
    """(spec, arch, offsets int64[N, 32], participating bool[N, 32]) with every access checked."""
    spec = parse(op)
    arch = resolve_arch(spec, arch)
    off = batch_offsets(offsets)
    part = mask_bits(lane_masks(active, off.shape[0]))
    check_offsets(spec, off, part)
    return spec, arch, off, part


def coalesce_batch(op, offsets, active=None, arch="sm_90", rules=None):
    """Counts of N warp accesses of one op: offsets is [N, 32] byte offsets from a 256-byte
    aligned buffer, active None (all lanes), N 32-bit lane masks or [N, 32] booleans.

    Returns {"requests", "sectors", "ideal_sectors", "lines", "wavefronts"}: int64[N] each.
    rules: NVIDIA counting rules (nvidia.Rules) instead of the model's own, for fitting."""
    spec, arch, off, part = prepare_batch(op, offsets, active, arch)
    return count(spec, off, part, rules)
