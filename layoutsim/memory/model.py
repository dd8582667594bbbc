"""One warp's global access: the counts (batch.count on one row) and which lanes share which
sector, as the stable dict `coalesce` returns and `layoutsim coalesce --json` prints."""
import numpy as np

from ..access import LANES, lane_mask, lane_values
from . import amd, nvidia
from .batch import check_offsets, count, resolve_arch
from .ops import parse


def prepare(op, offsets, active=None, arch="sm_90", variables=None):
    """(spec, arch, offsets int64[32], participating bool[32]) with every input checked."""
    spec = parse(op)
    arch = resolve_arch(spec, arch)
    off, given = lane_values(offsets, spec.name, variables)
    part = lane_mask(active) & given
    check_offsets(spec, off[None, :], part[None, :])
    return spec, arch, off, part


def about(spec, rules=None):
    """(sector bytes, rule line, source line, status line) for an op under `rules`."""
    if spec.vendor == "amd":
        return amd.SECTOR, amd.RULE, amd.SOURCE, amd.UNVERIFIED
    r = rules or nvidia.rules_for(spec)
    return nvidia.SECTOR, r.describe(spec), nvidia.SOURCE, nvidia.status(rules, spec)


def carried(spec, arch):
    """{"extrapolated", "notes"}: whether the NVIDIA rules on `arch` are extrapolated from the
    measured GPU, and the note line saying which (memory.nvidia.extrapolated)."""
    note = nvidia.extrapolated(arch) if spec.vendor == "nvidia" else None
    return {"extrapolated": note is not None, "notes": [note] if note else []}


def lane_ranges(lanes):
    """'0-7,16' for [0, 1, ..., 7, 16]."""
    from ..access import lane_ranges as ranges
    return ranges(list(lanes))


def coalesce(op, offsets, active=None, arch="sm_90", rules=None, variables=None):
    """Requests, sectors and ideal sectors of one warp's global-memory access, as Nsight Compute
    counts them (l1tex__t_requests/sectors_pipe_lsu_mem_global_op_ld/st/atom/red (cp.async: _op_ld) and
    memory_l2_theoretical_sectors_global_ideal) for that one instruction.

    op        PTX spelling: 'ld.global.u8', 'ld.global.v4.b32', 'ld.global.nc.v4.b32',
              'st.global.b32', 'atom.global.add.u32', 'red.global.add.f32',
              'cp.async.ca.shared.global.16'; AMD 'global_load_b128' (arch gfx1100/gfx1201)
    offsets   32 byte offsets from a 256-byte aligned buffer (None = the lane gives none), a
              1-D array, or an expression in `lane` such as "lane * 16" (variables= names others)
    active    lanes taking part: None (all), a 32-bit mask or 32 booleans
    arch      'sm_90' (default), 'sm_80', ...; AMD ops need 'gfx1100'..'gfx1201'
    rules     NVIDIA counting rules (nvidia.Rules) instead of the model's own

    Returns a dict: op, arch, vendor, active_lanes, requests, sectors, ideal_sectors,
    excess_sectors, lines, wavefronts, sector_bytes, bytes_requested, bytes_fetched,
    sector_lanes ([{"sector": byte address, "lanes": [...]}]), rule, source, status.
    """
    spec, arch, off, part = prepare(op, offsets, active, arch, variables)
    c = {k: int(v[0]) for k, v in count(spec, off[None, :], part[None, :], rules).items()}
    unit, rule, source, status = about(spec, rules)
    lanes = np.flatnonzero(part)
    by_sector = {}
    for lane in lanes:
        by_sector.setdefault(int(off[lane]) // unit * unit, []).append(int(lane))
    out = {"op": spec.name, "arch": arch, "vendor": spec.vendor, "active_lanes": int(lanes.size)}
    out.update(c)
    out["excess_sectors"] = max(0, c["sectors"] - c["ideal_sectors"])
    out.update({"sector_bytes": unit, "bytes_requested": int(lanes.size) * spec.width,
                "bytes_fetched": c["sectors"] * unit,
                "sector_lanes": [{"sector": s, "lanes": ls} for s, ls in sorted(by_sector.items())],
                "rule": rule, "source": source, "status": status, **carried(spec, arch)})
    if spec.vendor == "amd":
        out["wavefronts"] = None             # AMD documents no such count
    return out


def sector_map(result):
    """int[32] index (in address order) of the sector each lane touches; -1 = no part."""
    out = np.full(LANES, -1, np.int64)
    for k, s in enumerate(result["sector_lanes"]):
        out[s["lanes"]] = k
    return out


def headline(r):
    """The first line of `layoutsim coalesce` for one access (also the picture's title):
    'OP on ARCH: 1 request, 4 sectors of 32 B (ideal 4), 1 line of 128 B, 1 wavefront'."""
    def n(v, word):
        return f"{v} {word}{'' if v == 1 else 's'}"
    head = (f"{r['op']} on {r['arch']}: {n(r['requests'], 'request')}, {n(r['sectors'], 'sector')} "
            f"of {r['sector_bytes']} B (ideal {r['ideal_sectors']}), {n(r['lines'], 'line')} of 128 B")
    if r["wavefronts"] is not None:
        head += f", {n(r['wavefronts'], 'wavefront')}"
    return head


def format_report(r, verbose=False):
    """The text `layoutsim coalesce` prints for one access."""
    lines = [headline(r)]
    used = r["bytes_requested"]
    if r["bytes_fetched"]:
        lines.append(f"{r['active_lanes']} active lanes ask for {used} B; {r['bytes_fetched']} B of "
                     f"sectors move ({100.0 * used / r['bytes_fetched']:.0f}% used)")
    else:
        lines.append("no active lane: nothing moves")
    lines.append("lane -> sector (sectors numbered in address order; . = no part):")
    smap = sector_map(r)
    for half in (range(0, 16), range(16, 32)):
        lines.append("  lanes " + f"{half[0]:>2}-{half[-1]:<2}  " +
                     " ".join("." if smap[i] < 0 else _code(smap[i]) for i in half))
    shown = r["sector_lanes"] if verbose else r["sector_lanes"][:8]
    for k, s in enumerate(shown):
        lines.append(f"  sector {_code(k):>2} at {s['sector']:#07x} (line {s['sector'] // 128 * 128:#07x}): "
                     f"lanes {lane_ranges(s['lanes'])}")
    if len(shown) < len(r["sector_lanes"]):
        lines.append(f"  ... {len(r['sector_lanes']) - len(shown)} more sectors (-v lists all)")
    lines.append(f"rule: {r['rule']}")
    lines.append(f"model: {r['status']}")
    lines.append(f"source: {r['source']}")
    lines += [f"note: {n}" for n in r["notes"]]
    return "\n".join(lines)


def _code(k):
    """Short label of sector k: 0-9, then a-z, then A-Z, then #."""
    digits = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    return digits[k] if k < len(digits) else "#"
