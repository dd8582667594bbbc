"""Requests, sectors, lines, wavefronts and ideal sectors of many warp accesses at once (numpy).

This is the one implementation of the counting rules: `coalesce` (one access, with details)
runs it on a batch of one. Everything is a sort over the 32 lanes of each row, so a batch of
N accesses costs O(N * 32 log 32) with no Python loop over accesses (> 1e6 accesses/s; see
benchmarks/bench_coalesce.py). Inactive lanes and lanes without an address take no part.
"""
import numpy as np

from .. import archs as A
from ..access import LANES, lane_masks, mask_bits
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
    w = spec.width
    bad = part & ((off < 0) | ((off % w) != 0) | (off > MAX_OFFSET - w))
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


def _distinct(keys, valid):
    """int64[N]: distinct values of keys[N, K] among the valid entries of each row."""
    k = np.where(valid, keys, _SENTINEL)
    k.sort(axis=1)
    new = np.ones(k.shape, bool)
    new[:, 1:] = k[:, 1:] != k[:, :-1]
    return (new & (k != _SENTINEL)).sum(axis=1)


def _groups(spec, rules):
    """int64[32] request group of each lane (all 0 when an instruction is one request)."""
    lane = np.arange(LANES, dtype=np.int64)
    if spec.vendor == "nvidia" and rules.requests == "per_128B" and spec.width > 4:
        return lane // (nvidia.LINE // spec.width)
    return np.zeros(LANES, np.int64)


def count(spec, off, part, rules=None):
    """{field: int64[N]} for validated offsets [N, 32] and participating lanes bool[N, 32]."""
    n = off.shape[0]
    active = part.sum(axis=1)
    if spec.vendor == "amd":
        lines = _distinct(off // amd.LINE, part)
        halves = _distinct(off // amd.SECTOR, part)
        ideal = -(-(active * spec.width) // amd.SECTOR)
        return {"requests": lines, "sectors": halves, "ideal_sectors": ideal, "lines": lines,
                "wavefronts": np.zeros(n, np.int64)}
    rules = rules or nvidia.rules_for(spec)
    g = _groups(spec, rules)
    tag = g[None, :] << 44                       # request group in the high bits: offsets < 2**40
    sector = off // nvidia.SECTOR
    line = off // nvidia.LINE
    requests = _distinct(np.broadcast_to(g, off.shape), part)
    requests = np.where(active == 0, rules.empty_request, requests)
    lines = _distinct(tag + line, part)
    sectors = {"distinct": lambda: _distinct(tag + sector, part),
               "per_address": lambda: _distinct(tag + off, part),
               "per_lane": lambda: active.astype(np.int64)}[rules.sectors]()
    wavefronts = np.zeros(n, np.int64)
    for grp in np.unique(g):                     # wavefronts are counted per request
        sel = part & (g == grp)[None, :]
        if rules.wavefronts == "sectors16":
            wavefronts += -(-_distinct(sector, sel) // 16)
        else:
            lg = _distinct(line, sel)
            wavefronts += lg if rules.wavefronts == "lines" else -(-lg // 4)
    if rules.ideal == "bytes":
        ideal = -(-(active * spec.width) // nvidia.SECTOR)
    else:                                        # aligned accesses of one width coincide or are disjoint
        ideal = -(-(_distinct(off, part) * spec.width) // nvidia.SECTOR)
    return {"requests": requests.astype(np.int64), "sectors": sectors.astype(np.int64),
            "ideal_sectors": ideal.astype(np.int64), "lines": lines.astype(np.int64),
            "wavefronts": wavefronts}


def prepare_batch(op, offsets, active=None, arch="sm_90"):
    """(spec, arch, offsets int64[N, 32], participating bool[N, 32]) with every access checked."""
    spec = parse(op)
    arch = resolve_arch(spec, arch)
    off = np.asarray(offsets)
    if off.ndim != 2 or off.shape[1] != LANES:
        raise LayoutsimError(f"batch offsets: an [N, 32] array of byte offsets (one row per warp "
                             f"access), not shape {off.shape}")
    if off.dtype.kind not in "iu":
        raise LayoutsimError(f"batch offsets must be integers, not {off.dtype}")
    if off.dtype == np.uint64 and off.size and int(off.max()) > MAX_OFFSET:
        raise LayoutsimError(f"batch offsets beyond the model's {MAX_OFFSET:#x}-byte buffer")
    off = np.ascontiguousarray(off, dtype=np.int64)
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
