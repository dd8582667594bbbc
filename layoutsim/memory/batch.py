"""Requests, sectors, lines, wavefronts and ideal sectors of many warp accesses at once (numpy).

This is the one implementation of the counting rules: `coalesce` (one access, with details)
runs it on a batch of one. The default rules cost one sort over the 32 lanes of each row (the
sectors, grouped by request; lines and requests are runs of the same sorted keys), with no
Python loop over accesses (benchmarks/bench_coalesce.py prints the rate). Inactive lanes and
lanes without an address take no part.
"""
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
    a = A.normalize(arch)
    if A.vendor(a) != spec.vendor:
        if spec.vendor == "amd":
            raise LayoutsimError(f"{spec.name} is an AMD op, not available on {a}; give an AMD arch "
                                 f"({', '.join(A.AMD)})")
        raise LayoutsimError(f"{spec.name} is an NVIDIA op, not available on {a}; AMD global ops are "
                             f"global_load_b32, buffer_load_b128, ... (see --list-ops)")
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


def count(spec, off, part, rules=None):
    """{field: int64[N]} for validated offsets [N, 32] and participating lanes bool[N, 32]."""
    n = off.shape[0]
    active = part.sum(axis=1)
    if spec.vendor == "amd":
        k, halves = _sorted_runs(off >> _log2(amd.SECTOR), part)
        lines = _runs_of(k, halves, _log2(amd.LINE // amd.SECTOR)).sum(axis=1)
        return {"requests": lines, "sectors": halves.sum(axis=1),
                "ideal_sectors": _ceil(active * spec.width, amd.SECTOR), "lines": lines,
                "wavefronts": np.zeros(n, np.int64)}
    rules = rules or nvidia.rules_for(spec)
    g = _groups(spec, rules)
    # request group in the high bits (offsets < 2**40): sorted keys run group by group
    sector = off >> _log2(nvidia.SECTOR)
    k, first_sector = _sorted_runs((g[None, :] << 44) | sector if g.any() else sector, part)
    first_line = _runs_of(k, first_sector, _log2(nvidia.LINE // nvidia.SECTOR))
    lines = first_line.sum(axis=1)
    if g.any():
        first_group = _runs_of(k, first_sector, 44)
        requests = first_group.sum(axis=1)
        # wavefronts per request: lines of each group, counted from the sorted keys
        gid = np.where(k != _SENTINEL, k >> 44, -1)
        per_group = np.stack([(first_line & (gid == q)).sum(axis=1) for q in range(int(g.max()) + 1)], axis=1)
        sec_group = np.stack([(first_sector & (gid == q)).sum(axis=1) for q in range(int(g.max()) + 1)], axis=1)
    else:
        requests = (active > 0).astype(np.int64)
        per_group, sec_group = lines[:, None], first_sector.sum(axis=1)[:, None]
    requests = np.where(active == 0, rules.empty_request, requests)
    if rules.sectors == "distinct":
        sectors = sec_group.sum(axis=1)
    elif rules.sectors == "per_lane":
        sectors = active
    else:
        sectors = _sorted_runs((g[None, :] << 44) | off, part)[1].sum(axis=1)
    wavefronts = {"lines4": lambda: _ceil(per_group, 4), "lines": lambda: per_group,
                  "sectors16": lambda: _ceil(sec_group, 16)}[rules.wavefronts]().sum(axis=1)
    if rules.ideal == "bytes":
        ideal = _ceil(active * spec.width, nvidia.SECTOR)
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
