"""The bank model for one warp access: phases -> wavefronts, with the words each one serves.

This is the reference implementation (plain Python, easy to read and to check by hand). The
batch engines in batch.py compute the same numbers for many accesses at once and are tested
against it.
"""
from dataclasses import dataclass, field

import numpy as np

from .. import archs as A
from ..access import lane_mask, lane_values
from ..errors import LayoutsimError
from . import amd, nvidia
from .ops import parse

BANKS = 32       # NVIDIA and RDNA (and the default); CDNA: amd.banks(arch)
LANES = 32       # a warp / wave32; CDNA LDS accesses come from wave64 (lanes_of)


def lanes_of(arch):
    """Lanes of one access on `arch`: 64 for CDNA (wave64), else 32."""
    return 64 if arch in A.CDNA else LANES


def banks_of(arch):
    """LDS/shared-memory banks of 4 bytes on `arch`."""
    return amd.banks(arch) if arch in A.CDNA else BANKS


@dataclass(frozen=True)
class Phase:
    lanes: tuple              # active lanes served in this phase
    wavefronts: int
    banks: tuple = ()         # distinct words asked of each bank (32 counts)
    words: tuple = ()         # distinct 32-bit words (byte address of the word), sorted
    serves: tuple = ()        # per wavefront: (lanes, words) it serves

    def to_json(self, source=None):
        out = {"lanes": list(self.lanes), "wavefronts": self.wavefronts,
               "banks": list(self.banks), "words": list(self.words),
               "serves": [{"lanes": list(ls), "words": list(ws)} for ls, ws in self.serves]}
        if source:
            out["source"] = source
        return out


@dataclass(frozen=True)
class Report:
    op: str
    arch: str
    vendor: str
    wavefronts: int
    ideal: int
    conflicts: int
    phases: tuple
    rule: str                 # how the phases are formed, one line
    source: str               # where the rules come from
    status: str               # confirmed on hardware, or not
    notes: tuple = field(default=())
    banks: int = BANKS
    extrapolated: bool = False  # NVIDIA rules carried over from the measured GPU (notes say which)

    def to_json(self):
        """{"op","arch","wavefronts","ideal","conflicts","phases":[...]}, the stable schema; each
        phase's "source" is the phase rule, where the rules come from and their status."""
        rule = self.source if self.source.startswith(self.rule) else f"{self.rule}; {self.source}"
        src = f"{rule}; {self.status}"
        return {"op": self.op, "arch": self.arch, "wavefronts": self.wavefronts, "ideal": self.ideal,
                "conflicts": self.conflicts, "phases": [p.to_json(src) for p in self.phases],
                "extrapolated": self.extrapolated, "notes": list(self.notes)}

    def format(self, verbose=False):
        head = (f"{self.op} on {self.arch}: {self.wavefronts} wavefront{'s' if self.wavefronts != 1 else ''} "
                f"(ideal {self.ideal}, {self.conflicts} from bank conflicts)")
        lines = [head, f"phases: {self.rule}"]
        lines.append(f"  {'phase':>5}  {'lanes':<22} {'wavefronts':>10}  {'words':>5}  worst bank")
        for i, p in enumerate(self.phases):
            worst = ""
            if p.wavefronts > 1 and p.banks:
                b = int(np.argmax(p.banks))
                ws = [w for w in p.words if (w // 4) % self.banks == b]
                shown = ", ".join(hex(w) for w in ws[:6]) + (", ..." if len(ws) > 6 else "")
                worst = f"bank {b}: {p.banks[b]} words ({shown})"
            lines.append(f"  {i:>5}  {lane_ranges(p.lanes):<22} {p.wavefronts:>10}  {len(p.words):>5}  {worst}")
            if verbose:
                for k, (ls, ws) in enumerate(p.serves):
                    lines.append(f"         wavefront {k}: lanes {lane_ranges(ls)}; words "
                                 + ", ".join(hex(w) for w in ws))
        lines.append(f"model: {self.status}")
        lines.append(f"source: {self.source}")
        lines.extend(f"note: {n}" for n in self.notes)
        return "\n".join(lines)


def lane_ranges(lanes):
    lanes = list(lanes)
    if not lanes:
        return "-"
    runs, start = [], lanes[0]
    for a, b in zip(lanes, lanes[1:] + [None]):
        if b != a + 1:
            runs.append(f"{start}-{a}" if a != start else f"{a}")
            start = b
    return ",".join(runs)


# ---- inputs -----------------------------------------------------------------------------
def resolve_arch(spec, arch):
    if arch is None:
        if spec.vendor == "amd":
            raise LayoutsimError(f"{spec.name} is an AMD LDS op: give arch (gfx1100..gfx1153 for "
                                 f"gfx11, gfx1200/gfx1201 for gfx12, gfx942 or gfx950 for CDNA): "
                                 f"their phases differ")
        return "sm_90"
    a = A.normalize(arch)
    if a in A.CDNA and a not in amd.CDNA_RULES:
        raise LayoutsimError(f"no LDS model for {a}; CDNA LDS models exist for "
                             f"{', '.join(amd.CDNA_RULES)}")
    a = A.of_op(spec.name, spec.vendor, a, {"amd": "AMD LDS op", "nvidia": "NVIDIA shared-memory op"},
                "AMD LDS ops are ds_read_b32/b64/b128, ds_write_b32/b64/b128")
    if spec.is_matrix:
        from ..isa.registry import get
        get(spec.catalog).check_arch(a)
    return a


def memory_limit(arch):
    """(bytes of shared memory (LDS) one block can address on `arch`, one-line description)."""
    if A.vendor(arch) == "amd":
        size = amd.lds_bytes(arch)
        return size, f"{arch}'s LDS: {size // 1024} KiB per workgroup"
    return nvidia.smem_limit(arch)


def check_tile(tile, op, arch=None):
    """The arch `op` runs on, after refusing a tile that does not fit its shared memory (LDS):
    checked before any address of the tile is made, so a huge tile costs nothing."""
    spec = parse(op)
    arch = resolve_arch(spec, arch)
    limit, where = memory_limit(arch)
    if tile.extent > limit:
        raise LayoutsimError(f"the tile ({tile.describe()}) spans {tile.extent} bytes, beyond {where}")
    return arch


def lanes_used(spec, lanes=LANES):
    """Lanes whose addresses the op uses (all of them, or the row-address lanes of a matrix op)."""
    if spec.is_matrix:
        return sorted(int(x) for x in np.asarray(spec.address_lanes()).reshape(-1))
    return list(range(lanes))


def parse_offsets(offsets, spec, variables=None, lanes=LANES):
    """(int64[lanes] offsets, bool[lanes] given) from a list (None = no address), array or
    expression (lanes: 32, or 64 for a CDNA wave64 access); ldmatrix/stmatrix also take just
    their row addresses."""
    return lane_values(offsets, spec.name, variables, lanes_used(spec) if spec.is_matrix else None, lanes)


def prepare(op, offsets, arch=None, active=None, variables=None):
    """(spec, arch, offsets int64[lanes], participating bool[lanes]) with every input checked."""
    spec = parse(op)
    arch = resolve_arch(spec, arch)
    lanes = lanes_of(arch)
    off, given = parse_offsets(offsets, spec, variables, lanes)
    act = lane_mask(active, lanes) & given
    if spec.is_matrix:
        used = lanes_used(spec)
        missing = [lane for lane in used if not act[lane]]
        if missing:
            why = "has no address" if not given[missing[0]] else "is inactive"
            raise LayoutsimError(f"{spec.name} is .sync.aligned: every lane executes it, and lane "
                                 f"{missing[0]} (a row address of matrix {used.index(missing[0]) // 8}) {why}")
        part = np.zeros(LANES, bool)
        part[used] = True
    else:
        part = act
    check_addresses(spec, arch, off, part)
    return spec, arch, off, part


def check_addresses(spec, arch, off, part):
    lanes = np.flatnonzero(part)
    if lanes.size == 0:
        return
    o = off[lanes]
    neg = lanes[o < 0]
    if neg.size:
        raise LayoutsimError(f"lane {neg[0]}: offset {off[neg[0]]} is negative")
    w = spec.width
    bad = lanes[o % w != 0]
    if bad.size:
        lane = int(bad[0])
        what = "row address" if spec.is_matrix else "address"
        if spec.vendor == "nvidia":
            raise LayoutsimError(f"lane {lane}: {what} {off[lane]:#x} is not {w}-byte aligned, as "
                                 f"{spec.name} needs: the hardware faults on it (misaligned address)")
        raise LayoutsimError(f"lane {lane}: address {off[lane]:#x} is not {w}-byte aligned, as "
                             f"{spec.name} needs (the model does not cover AMD's unaligned LDS modes)")
    limit, where = memory_limit(arch)
    over = lanes[o > limit - w]               # not o + w: it wraps near 2**63
    if over.size:
        lane = int(over[0])
        raise LayoutsimError(f"lane {lane}: offset {off[lane]:#x} + {w} bytes is beyond {where}")


# ---- phases -----------------------------------------------------------------------------
def generation(arch):
    return A.generation(arch)


def amd_generation(arch):
    """The key of arch's LDS rules: gfx11, gfx12, or the CDNA target itself."""
    return arch if arch in A.CDNA else A.generation(arch)


def _words(spec, off, lane):
    first = int(off[lane]) // 4
    return [4 * (first + k) for k in range(spec.words)]


def _pair_ok(lanes, off, part, masks=(1, 2)):
    lane_set = set(lanes)
    for m in masks:
        if all((not part[i]) or (i ^ m) not in lane_set or not part[i ^ m] or off[i] == off[i ^ m]
               for i in lanes):
            return True
    return False


def merge_phases(base, mode, off, part, spec):
    """Phases (lists of lanes, inactive ones included) after merging under `mode`."""
    if mode == "none" or len(base) == 1:
        return base
    if mode == "one-phase":
        return [[lane for p in base for lane in p]]
    if mode in ("pairs", "pairs-half"):
        groups = [base[i:i + 2] for i in range(0, len(base), 2)]
        if mode == "pairs":
            ok = _pair_ok([lane for p in base for lane in p], off, part)
            oks = [ok] * len(groups)
        else:
            oks = [_pair_ok([lane for p in g for lane in p], off, part) for g in groups]
        out = []
        for g, ok in zip(groups, oks):
            out.extend([[lane for p in g for lane in p]] if ok else g)
        return out
    if mode == "greedy":
        out, cur = [], None           # cur: bank -> the one word the current group asks of it
        for p in base:
            ws = {w for lane in p if part[lane] for w in _words(spec, off, lane)}
            if not ws and out:
                out[-1].extend(p)          # an empty phase adds nothing to the group it joins
                continue
            banks = {}
            ok = True
            for w in ws:
                b = (w // 4) % BANKS
                if banks.setdefault(b, w) != w:
                    ok = False
            if out and cur is not None and ok and all(cur.get(b, w) == w for b, w in banks.items()):
                out[-1].extend(p)
                cur.update(banks)
            else:
                out.append(list(p))
                cur = banks if ok else None
        return out
    if mode == "identical":
        out, keys = [], []
        for p in base:
            ws = frozenset(w for lane in p if part[lane] for w in _words(spec, off, lane))
            if ws and ws in keys:
                out[keys.index(ws)].extend(p)
            else:
                out.append(list(p))
                keys.append(ws if ws else None)
        return out
    raise AssertionError(mode)


def phases_of(spec, arch, off, part, rules):
    """Phases (lists of participating lanes, possibly empty) and the merge mode used."""
    if spec.vendor == "amd":
        base = amd.base_phases(spec, amd_generation(arch))
        return [[lane for lane in p if part[lane]] for p in base]
    base = nvidia.base_phases(spec)
    merged = merge_phases(base, rules.merge(spec), off, part, spec)
    return [[lane for lane in sorted(p) if part[lane]] for p in merged]


def count_phase(spec, lanes, off, by_address=False, banks=BANKS):
    """Phase served with the fewest wavefronts: one word per bank per wavefront, same words shared."""
    per_bank = [[] for _ in range(banks)]      # distinct keys in order of first request
    lanes_of = {}
    for lane in lanes:
        for w in _words(spec, off, lane):
            key = (w, int(off[lane])) if by_address else (w, None)
            b = (w // 4) % banks
            if key not in per_bank[b]:
                per_bank[b].append(key)
            lanes_of.setdefault(key, []).append(lane)
    counts = tuple(len(k) for k in per_bank)
    n = max(counts) if lanes else 0
    serves = []
    for k in range(n):
        ls, ws = set(), set()
        for b in range(banks):
            if k < len(per_bank[b]):
                key = per_bank[b][k]
                ws.add(key[0])
                ls.update(lanes_of[key])
        serves.append((tuple(sorted(ls)), tuple(sorted(ws))))
    words = tuple(sorted({key[0] for keys in per_bank for key in keys}))
    return n, counts, words, tuple(serves)


def analyze(op, offsets, arch=None, active=None, rules=None, variables=None):
    """Wavefronts of one warp's shared-memory (LDS) access.

    op        'ld.shared.v4.b32', 'st.shared.b32', 'ldmatrix.x4.trans', 'stmatrix.x2',
              'ds_read_b128' (AMD: give arch), SASS 'LDS.128', ...
    offsets   32 byte offsets (CDNA: 64), one per lane (None = no address), or an expression in
              `lane` such as "(lane % 8) * 144 + (lane // 8) * 16" (variables= names others);
              ldmatrix/stmatrix also take just the 8/16/32 row addresses
    arch      'sm_90' (default for NVIDIA ops), 'sm_80', 'gfx1201', 'gfx1100', 'gfx942', ...
    active    lanes taking part: a 32-bit mask or 32 booleans (predicated-off lanes take no part)
    rules     NVIDIA merge rules (nvidia.Rules); default nvidia.DEFAULT
    """
    spec, arch, off, part = prepare(op, offsets, arch, active, variables)
    if rules is not None and spec.vendor == "amd":
        # AMD LDS phases come from amd.RULES; NVIDIA's merge rules would be silently ignored
        raise LayoutsimError(f"NVIDIA merge rules (rules=, --rules) do not apply to {spec.name} on {arch}: "
                             f"AMD LDS phases follow the AMD rules; drop them")
    rules = rules or nvidia.DEFAULT
    phases = phases_of(spec, arch, off, part, rules)
    by_address = spec.vendor == "nvidia" and rules.by_address(spec)
    empty_cost = rules.empty_phase if spec.vendor == "nvidia" else 0
    out, total, ideal = [], 0, 0
    if not part.any():
        phases = []
        if spec.vendor == "nvidia" and rules.empty_warp:
            out.append(Phase((), rules.empty_warp))
            total = ideal = rules.empty_warp
    for lanes in phases:
        if not lanes:
            if empty_cost:
                out.append(Phase((), empty_cost))
                total += empty_cost
                ideal += empty_cost
            continue
        n, counts, words, serves = count_phase(spec, lanes, off, by_address, banks_of(arch))
        out.append(Phase(tuple(lanes), n, counts, words, serves))
        total += n
        ideal += 1
    if spec.vendor == "amd":
        gen = amd_generation(arch)
        rule, source, status = amd.phase_rule_text(spec, gen), amd.source(spec, gen), amd.UNVERIFIED
    else:
        rule, source, status = nvidia.phase_rule_text(spec, rules), nvidia.SOURCE, nvidia.status(rules)
    notes = ()
    if spec.is_matrix and len(lanes_used(spec)) < LANES:
        notes = (f"row addresses from lanes {lane_ranges(lanes_used(spec))}; the other lanes' "
                 f"addresses are ignored",)
    carried = nvidia.extrapolated(arch) if spec.vendor == "nvidia" else None
    notes += (carried,) if carried else ()
    return Report(spec.name, arch, spec.vendor, total, ideal, total - ideal, tuple(out), rule,
                  source, status, notes, banks_of(arch), carried is not None)


def wavefronts(op, offsets, arch=None, active=None, rules=None, variables=None):
    """Just the number of wavefronts (see analyze)."""
    return analyze(op, offsets, arch, active, rules, variables).wavefronts
