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
tests/data/coalescing/). Measured on the H200 (MEASURED; every count reproduced except
NOT_MODELLED, OPEN lists what the corpus cannot decide yet):
  * requests: one per warp instruction with an active lane, whatever the width (a v4 access is
    one request) and however often an atomic repeats an address; none when no lane is active.
  * sectors: the distinct 32-byte sectors the active lanes touch. Atomics and reductions replay
    a repeated address: round r holds the r-th use of each address, and each round counts its
    own sectors (32 lanes adding to one word: 32 sectors, 32 wavefronts). cp.async.cg
    (LDGSTS.BYPASS) counts per lane pair (2k, 2k+1) one sector per 128-byte line the pair touches.
  * wavefronts: the tag stage looks lines up in 4 tag banks, one line per bank per wavefront;
    the bank is an XOR hash of the line address (TAG_BANK_MASKS), so a request (or replay round)
    takes as many wavefronts as its fullest bank holds lines: ceil(lines / 4) when they spread
    evenly (contiguous and power-of-two strides), more for unlucky gathers. atom.cas carries two
    values per lane, and a line passes at most 128 bytes of them per wavefront: its lines with 3
    or 4 sectors take a second pass.
  * ld.global.nc, ld.global.cg and cp.async.ca count like ld.global; cp.async is counted by
    Nsight Compute's _op_ld counters.
"""
import itertools
from dataclasses import dataclass, fields

SECTOR = 32
LINE = 128

# Candidate settings (each one a sentence in `describe`):
REQUESTS = ("one", "per_128B")           # one per instruction | one per 128 B of lane data (64-bit: 2, 128-bit: 4)
SECTORS = ("distinct", "per_address", "per_lane", "pair_lines")
#   distinct 32-B sectors | distinct addresses | active lanes | per lane pair, the lines it touches
WAVEFRONTS = ("lines4", "lines", "sectors16", "tag_banks")
#   ceil(lines/4) | one per line | ceil(sectors/16) | the fullest of 4 tag banks (TAG_BANK_MASKS)
IDEAL = ("bytes", "unique")              # ceil(active lanes x width / 32) | ceil(distinct bytes / 32)
REPLAY = ("none", "address")             # none | a repeated address is replayed: round r = r-th uses
LINE_PASS = ("sectors", "halves")        # a line's sectors per wavefront with 2 operands (atom.cas):
#                                          2 at a time | one 64-B half at a time

# The tag bank of a 128-byte line: bit 0 = parity(line & m0), bit 1 = parity(line & m1), line = the
# address >> 7. The masks are the only 2-bit XOR hash of line bits 0-8 under which the fullest
# bank reproduces every wavefront count of the first H200 run (425 single-round patterns; the
# exhaustive search is gpu_check/coalesce_probe/fit.py `tag_bank_hashes`); bits 9 and up are
# not in the masks because that run could not place them (it only had lines < 2^10, and bit 9
# fits in either mask or in none); the second run's `tagbank` patterns decide them.
TAG_BANK_MASKS = (0b010110101, 0b111011010)
TAG_BANKS = 4


@dataclass(frozen=True)
class Rules:
    requests: str = "one"
    empty_request: int = 0                # requests counted when no lane is active
    sectors: str = "distinct"
    wavefronts: str = "tag_banks"
    ideal: str = "bytes"
    replay: str = "none"
    line_pass: str = "sectors"

    def __post_init__(self):
        for name, valid in (("requests", REQUESTS), ("sectors", SECTORS), ("wavefronts", WAVEFRONTS),
                            ("ideal", IDEAL), ("empty_request", (0, 1)), ("replay", REPLAY),
                            ("line_pass", LINE_PASS)):
            if getattr(self, name) not in valid:
                raise ValueError(f"rule {name}={getattr(self, name)!r}; valid: {', '.join(map(str, valid))}")

    def label(self):
        return " ".join(f"{f.name}={getattr(self, f.name)}" for f in fields(self))

    def python(self):
        return "Rules(" + ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in fields(self)) + ")"

    def describe(self):
        """One line saying how this rule set counts."""
        req = {"one": "one request per instruction",
               "per_128B": "one request per 128 B of lane data (groups of 128/width lanes)"}[self.requests]
        if self.empty_request:
            req += " (also when no lane is active)"
        if self.replay == "address":
            req += "; lanes repeating an address are replayed in rounds (round r: the r-th use of each address)"
        sec = {"distinct": "distinct 32-byte sectors", "per_address": "distinct lane addresses",
               "per_lane": "one sector access per active lane",
               "pair_lines": "per lane pair (2k, 2k+1), one sector per 128-B line the pair touches"}[self.sectors]
        wf = {"lines4": "ceil(lines / 4) wavefronts (4 tags per cycle)", "lines": "one wavefront per line",
              "sectors16": "ceil(sectors / 16) wavefronts",
              "tag_banks": "wavefronts = lines in the fullest of 4 tag banks (XOR hash of the line address)"}[self.wavefronts]
        if self.line_pass == "halves":
            wf += "; atom.cas passes one 64-B half of a line per wavefront"
        ideal = {"bytes": "ideal = ceil(active lanes x width / 32)",
                 "unique": "ideal = ceil(distinct bytes / 32)"}[self.ideal]
        return f"{req}; {sec}; {wf}; {ideal}"


def candidates():
    """Every candidate rule set the measurement discriminates between."""
    return [Rules(*c) for c in itertools.product(REQUESTS, (0, 1), SECTORS, WAVEFRONTS, IDEAL, REPLAY, LINE_PASS)]


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
# every measured count). Where the corpus allows two settings the default is kept: OPEN says so.
DEFAULT = Rules()
FAMILIES = ("ld", "ld.nc", "ld.cg", "st", "atom", "red", "cp.async", "cp.async.cg")
ATOMIC = Rules(replay="address")
RULES = {f: DEFAULT for f in FAMILIES}
RULES["atom"] = RULES["red"] = ATOMIC
RULES["cp.async.cg"] = Rules(sectors="pair_lines")
MEASURED = ("NVIDIA H200 (driver 580.159.04, CUDA 13.0, ncu 2025.3.1), 2026-12-01: "
            "tests/data/coalescing/coalesce_corpus.json")
# Measured quantities no stated rule reproduces: (family, quantity) -> what was seen. The model's
# number for them is the cached path's and is not a claim (the replay test checks this list is
# still true, the gpu-check group reports them as not modelled).
NOT_MODELLED = {
    ("cp.async.cg", "wavefronts"): "LDGSTS.BYPASS wavefronts follow none of the candidate rules "
                                   "(element stride 1, 2, 4, 8 x 16 B: 1, 4, 16, 32 wavefronts)",
}
# What the corpus leaves open (the second run's patterns decide; docs/coalescing.md):
OPEN = {
    "ideal_sectors": "ideal = bytes asked for and ideal = distinct bytes both fit the patterns measured "
                     "with the ideal-sector metric (none with a repeated address)",
    "tag bank bits": "the tag-bank hash is known for line-address bits 0-8 (address bits 7-15); bit 9 "
                     "fits either mask, higher bits were not exercised",
}


def rules_for(spec, override=None):
    return override or RULES[spec.family]


def status():
    return (f"requests, sectors, wavefronts confirmed on {MEASURED}; open: {', '.join(OPEN)}; not modelled: "
            + ", ".join(f"{f} {q}" for f, q in NOT_MODELLED))


SOURCE = ("CUDA C++ Best Practices Guide, 'Coalesced Access to Global Memory' (cc 6.0+: 32-byte "
          "transactions); NVIDIA forums t/49571/14 and t/165293/4 (Volta+ L1TEX: one request per "
          "instruction, 128-B lines of 4 sectors, 4 tags per cycle)")


def parse_rules(text, base=None):
    """'requests=per_128B,ideal=unique' -> Rules (other fields from base, default DEFAULT)."""
    from ..access import parse_rule_text
    return parse_rule_text(text, base or DEFAULT)
