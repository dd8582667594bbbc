"""NVIDIA global memory through L1TEX (sm_70 and later): the counting rules and their sources.

Documented:
  * L1 and L2 cache lines are 128 bytes, made of four 32-byte sectors; on a miss only the
    sectors accessed are fetched (NVIDIA forums t/49571/14, Volta L1 description by NVIDIA;
    Jia et al. 2018, "Dissecting the NVIDIA Volta GPU Architecture via Microbenchmarking" 3.3).
  * From compute capability 6.0 on, "the concurrent accesses of the threads of a warp will
    coalesce into a number of transactions equal to the number of 32-byte transactions
    necessary to service all of the threads of the warp" (CUDA C++ Best Practices Guide,
    "Coalesced Access to Global Memory").
  * Volta and later send one request per warp instruction to L1TEX; "for local and global
    accesses the tag stage can compare all 32 threads at a time"; it "can look up 4 tags per
    cycle resolving a maximum of 16 sectors" (forums t/49571/14; t/165293/4 defines requests,
    sectors and wavefronts as Nsight Compute counts them: one request per instruction, 1:N).
  * Nsight Compute's "ideal" global sectors (memory_l2_theoretical_sectors_global_ideal) are
    what the instruction would need if perfectly coalesced.

What the documents leave open is written as candidate rules below; which ones the H200 follows
is decided by measurement (`python -m gpu_check.coalesce_probe.measure`, corpus in
tests/data/coalescing/, two runs; the exhaustive searches are gpu_check/coalesce_probe/fit.py).
Measured on the H200 (MEASURED; every count of the 1056 patterns reproduced except NOT_MODELLED;
OPEN lists what the corpus cannot reach):
  * requests: one per warp instruction with an active lane, whatever the width (a v4 access is
    one request) and however often an atomic repeats an address; none when no lane is active.
  * sectors: the distinct 32-byte sectors the active lanes touch. Atomics and reductions replay
    a repeated address: round r holds the r-th use of each address, and each round counts its
    own sectors (32 lanes adding to one word: 32 sectors). cp.async.cg (LDGSTS.BYPASS) counts per
    lane pair (2k, 2k+1) one sector per 128-byte line the pair touches.
  * wavefronts: the tag stage looks lines up in 4 tag banks, one line per bank per wavefront; the
    bank is an XOR hash of the line address (TAG_BANK_MASKS, line address bits 0-15), and a
    request takes as many wavefronts as its fullest bank has line passes. A line passes once
    per replay round it appears in (an atomic's r-th uses of its addresses), and atom.cas, which
    carries two values per lane, passes once per 64-byte half of the line it touches in a round.
    Without replays that is the lines of the fullest bank: ceil(lines / 4) when they spread
    evenly (contiguous and power-of-two strides), more for unlucky gathers.
  * ideal sectors: min(ceil(active lanes x width / 32), distinct 32-byte sectors touched): the
    bytes asked for, but never more sectors than the access touches (a broadcast: 1); atomics
    count each sector once, replays or not. cp.async.cg: ceil(active lanes x 16 / 32), however
    the lanes overlap.
  * ld.global.nc, ld.global.cg and cp.async.ca count like ld.global; cp.async is counted by
    Nsight Compute's _op_ld counters.
"""
import itertools
from dataclasses import dataclass, fields

from .. import archs
from ..cite import corpus

SECTOR = 32
LINE = 128

# Candidate settings (each one a sentence in `describe`):
REQUESTS = ("one", "per_128B")           # one per instruction | one per 128 B of lane data (64-bit: 2, 128-bit: 4)
SECTORS = ("distinct", "per_address", "per_lane", "pair_lines")
#   distinct 32-B sectors | distinct addresses | active lanes | per lane pair, the lines it touches
WAVEFRONTS = ("tag_banks", "lines4", "lines", "sectors16")
#   the fullest of 4 tag banks (TAG_BANK_MASKS) | ceil(lines/4) | one per line | ceil(sectors/16)
IDEAL = ("min_sectors", "bytes", "unique")
#   the smaller of ceil(active lanes x width / 32) and the distinct 32-B sectors touched |
#   ceil(active lanes x width / 32) | ceil(distinct bytes / 32)
REPLAY = ("none", "address")             # none | a repeated address is replayed: round r = r-th uses
LINE_PASS = ("halves", "sectors")        # a line's passes with 2 operands (atom.cas): one per 64-B half
#                                          it touches | its sectors 2 at a time
PASSES = ("banks", "rounds")             # wavefronts of replay rounds and line passes: the fullest
#   bank's line passes over all rounds | each round and pass its own fullest bank, summed
# (each tuple starts with the setting the H200 follows, DEFAULT's: fit.report adopts the first fit)

# The tag bank of a 128-byte line: bit 0 = parity(line & m0), bit 1 = parity(line & m1), line = the
# address >> 7. Under the rules below these masks are the only 2-bit XOR hash of line bits 0-15
# (address bits 7-22: the probe's 8 MiB buffer) that reproduces every measured wavefront count
# of the H200 corpus (both runs: 999 values, replayed atomics and atom.cas included; relabelings
# of the banks are one hash): the exhaustive search is gpu_check/coalesce_probe/fit.py
# `tag_bank_hashes`. Bits 0-8 are the first run's; the second run's `tagbank` patterns placed
# bits 9-15. Line bits 16 and up (addresses from 8 MiB) were never exercised: OPEN.
TAG_BANK_MASKS = (0b0111101010110101, 0b1101010111011010)
TAG_BANK_BITS = 16
TAG_BANKS = 4


@dataclass(frozen=True)
class Rules:
    requests: str = "one"
    empty_request: int = 0                # requests counted when no lane is active
    sectors: str = "distinct"
    wavefronts: str = "tag_banks"
    ideal: str = "min_sectors"
    replay: str = "none"
    line_pass: str = "halves"
    passes: str = "banks"

    def __post_init__(self):
        for name, valid in (("requests", REQUESTS), ("sectors", SECTORS), ("wavefronts", WAVEFRONTS),
                            ("ideal", IDEAL), ("empty_request", (0, 1)), ("replay", REPLAY),
                            ("line_pass", LINE_PASS), ("passes", PASSES)):
            if getattr(self, name) not in valid:
                raise ValueError(f"rule {name}={getattr(self, name)!r}; valid: {', '.join(map(str, valid))}")

    def label(self):
        return " ".join(f"{f.name}={getattr(self, f.name)}" for f in fields(self))

    def python(self):
        return "Rules(" + ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in fields(self)) + ")"

    def describe(self, spec=None):
        """One line saying how this rule set counts (for `spec`, a GlobalOp, only what applies to it)."""
        atomic = spec is None or spec.kind in ("atom", "red")
        two = spec is None or spec.operands > 1
        req = {"one": "one request per instruction",
               "per_128B": "one request per 128 B of lane data (groups of 128/width lanes)"}[self.requests]
        if self.empty_request:
            req += " (also when no lane is active)"
        if self.replay == "address" and atomic:
            req += "; lanes repeating an address are replayed in rounds (round r: the r-th use of each address)"
        sec = {"distinct": "distinct 32-byte sectors", "per_address": "distinct lane addresses",
               "per_lane": "one sector access per active lane",
               "pair_lines": "per lane pair (2k, 2k+1), one sector per 128-B line the pair touches"}[self.sectors]
        wf = {"lines4": "ceil(lines / 4) wavefronts (4 tags per cycle)", "lines": "one wavefront per line",
              "sectors16": "ceil(sectors / 16) wavefronts",
              "tag_banks": "wavefronts = lines in the fullest of 4 tag banks (XOR hash of the line address)"}[self.wavefronts]
        passes = []
        if self.replay == "address" and atomic:
            passes.append("a line passes once per replay round it is in")
        if two:
            passes.append("atom.cas passes " + ("once per 64-B half of a line it touches" if self.line_pass == "halves"
                                                else "a line's sectors 2 at a time"))
        if passes:
            wf += "; " + ", ".join(passes) + (": the fullest bank's passes count" if self.passes == "banks"
                                              else ": each round and pass counts its own fullest bank")
        if spec is not None and (spec.family, "wavefronts") in NOT_MODELLED:
            wf = f"wavefronts not modelled for {spec.family} (the number shown: {wf})"
        ideal = {"bytes": "ideal = ceil(active lanes x width / 32)",
                 "unique": "ideal = ceil(distinct bytes / 32)",
                 "min_sectors": "ideal = min(ceil(active lanes x width / 32), distinct sectors)"}[self.ideal]
        return f"{req}; {sec}; {wf}; {ideal}"


def candidates():
    """Every candidate rule set the measurement discriminates between."""
    return [Rules(*c) for c in itertools.product(REQUESTS, (0, 1), SECTORS, WAVEFRONTS, IDEAL, REPLAY, LINE_PASS,
                                                 PASSES)]


def parity(x):
    """1 where an int (or int64 array) has an odd number of set bits."""
    for shift in (32, 16, 8, 4, 2, 1):
        x = x ^ (x >> shift)
    return x & 1


def tag_bank(line, masks=TAG_BANK_MASKS):
    """Tag bank (0..3) of 128-byte line indices (int or int64 array)."""
    return parity(line & masks[0]) | (parity(line & masks[1]) << 1)


# The rules the model uses per op family (GlobalOp.family), each setting the one the H200 corpus
# allows (gpu_check/coalesce_probe/fit.py; tests/memory/test_coalesce_corpus_replay.py replays
# every measured count). Where the corpus allows several settings (line_pass for families without
# atom.cas, replay for loads) the default is kept.
DEFAULT = Rules()
FAMILIES = ("ld", "ld.nc", "ld.cg", "st", "atom", "red", "cp.async", "cp.async.cg")
ATOMIC = Rules(replay="address")
RULES = {f: DEFAULT for f in FAMILIES}
RULES["atom"] = RULES["red"] = ATOMIC
RULES["cp.async.cg"] = Rules(sectors="pair_lines", ideal="bytes")
MEASURED = ("NVIDIA H200 (driver 580.159.04, CUDA 13.0, ncu 2025.3.1), 2026-12-01, two runs ("
            + corpus("coalesce_corpus.json", "Global memory") + ")")
# Measured quantities no stated rule reproduces: (family, quantity) -> what was seen. The model's
# number for them is the cached path's and is not a claim (the replay test checks this list is
# still true, the gpu-check group reports them as not modelled).
NOT_MODELLED = {
    ("cp.async.cg", "wavefronts"):
        "LDGSTS.BYPASS wavefronts (45 patterns measured, ids 843-857, 999-1025, 1047-1049) follow no "
        "rule searched (gpu_check/coalesce_probe/fit.py SCHEDULES: 384 ways of cutting the warp into "
        "lane groups and filling wavefronts under tag-bank, per-group and line limits): element strides "
        "1, 2, 3, 4, 5, 6, 7, 8 x 16 B take 1, 4, 8, 16, 16, 20, 24, 32 wavefronts, a random permutation "
        "of 512 contiguous bytes 4; the 17 warps whose 8-lane quarters each stay in one line take the "
        "fullest tag bank's lines, as cached loads do, and 27 of the 28 others take more",
}
# What the corpus cannot reach (docs/coalescing.md):
OPEN = {
    "tag bank bits": "the tag-bank hash is measured for line bits 0-15 of offsets from the probe's 2 MiB "
                     "aligned 8 MiB buffer; line bits 16 and up (addresses 8 MiB apart) were not exercised "
                     "and are taken as 0",
    "red replay passes": "reductions repeating addresses fit both ways of adding up replay rounds (each "
                         "round its own fullest bank, or the fullest bank over all rounds: the red patterns "
                         "repeat addresses evenly); the model takes the atomics' measured rule, the latter",
    "ld.cg ideal": "ld.global.cg's 10 ideal-sector values fit min(bytes, distinct sectors) and distinct bytes "
                   "alike; the model takes ld.global's measured rule, the former",
}


def rules_for(spec, override=None):
    return override or RULES[spec.family]


def extrapolated(arch):
    """The note line for an NVIDIA arch other than the measured one (archs.extrapolated), or None."""
    return archs.extrapolated(arch, "the request, sector, wavefront and ideal-sector rules and the tag-bank hash",
                              "32-byte sectors of 128-byte lines are documented for cc 6.0 and later")


def status(rules=None, spec=None):
    """The model line for an access of `spec` counted under `rules` (None: the model's)."""
    if rules is not None and rules != rules_for(spec):
        return (f"counting rules given by the caller ({rules.label()}), not the model's; the "
                f"model's ({rules_for(spec).label()}) are confirmed on {MEASURED}")
    return (f"requests, sectors, wavefronts, ideal sectors confirmed on {MEASURED}; open: {', '.join(OPEN)}; "
            f"not modelled: "
            + ", ".join(f"{f} {q}" for f, q in NOT_MODELLED))


SOURCE = ("CUDA C++ Best Practices Guide, 'Coalesced Access to Global Memory' (cc 6.0+: 32-byte "
          "transactions); NVIDIA forums t/49571/14 and t/165293/4 (Volta+ L1TEX: one request per "
          "instruction, 128-B lines of 4 sectors, 4 tags per cycle)")


def parse_rules(text, base=None):
    """'requests=per_128B,ideal=unique' -> Rules (other fields from base, default DEFAULT)."""
    from ..access import parse_rule_text
    return parse_rule_text(text, base or DEFAULT)
