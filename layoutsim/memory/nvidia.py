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
tests/data/coalescing/); `MEASURED` says what has been confirmed.
"""
import itertools
from dataclasses import dataclass, fields

SECTOR = 32
LINE = 128

# Candidate settings (each one a sentence in `describe`):
REQUESTS = ("one", "per_128B")           # one per instruction | one per 128 B of lane data (64-bit: 2, 128-bit: 4)
SECTORS = ("distinct", "per_address", "per_lane")   # distinct 32-B sectors | distinct addresses | active lanes
WAVEFRONTS = ("lines4", "lines", "sectors16")       # ceil(lines/4) | one per line | ceil(sectors/16), per request
IDEAL = ("bytes", "unique")              # ceil(active lanes x width / 32) | ceil(distinct bytes / 32)


@dataclass(frozen=True)
class Rules:
    requests: str = "one"
    empty_request: int = 0                # requests counted when no lane is active
    sectors: str = "distinct"
    wavefronts: str = "lines4"
    ideal: str = "bytes"

    def __post_init__(self):
        for name, valid in (("requests", REQUESTS), ("sectors", SECTORS), ("wavefronts", WAVEFRONTS),
                            ("ideal", IDEAL), ("empty_request", (0, 1))):
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
        sec = {"distinct": "distinct 32-byte sectors", "per_address": "distinct lane addresses",
               "per_lane": "one sector access per active lane"}[self.sectors]
        wf = {"lines4": "ceil(lines / 4) wavefronts (4 tags per cycle)", "lines": "one wavefront per line",
              "sectors16": "ceil(sectors / 16) wavefronts"}[self.wavefronts]
        ideal = {"bytes": "ideal = ceil(active lanes x width / 32)",
                 "unique": "ideal = ceil(distinct bytes / 32)"}[self.ideal]
        return f"{req}; {sec}; {wf}; {ideal}"


def candidates():
    """Every candidate rule set the measurement discriminates between."""
    return [Rules(*c) for c in itertools.product(REQUESTS, (0, 1), SECTORS, WAVEFRONTS, IDEAL)]


# The rules the model uses per op family (GlobalOp.family: ld, ld.nc, ld.cg, st, atom, red,
# cp.async). Before the
# H200 corpus exists these are the documented reading above: one request per instruction,
# distinct sectors, 4 tags per wavefront, ideal from the bytes asked for. The fit in
# gpu_check/coalesce_probe/fit.py prints what to paste here when the measurement lands.
DEFAULT = Rules()
FAMILIES = ("ld", "ld.nc", "ld.cg", "st", "atom", "red", "cp.async")
RULES = {f: DEFAULT for f in FAMILIES}
MEASURED = ""


def rules_for(spec, override=None):
    return override or RULES[spec.family]


def status():
    if MEASURED:
        return f"counting rules confirmed on {MEASURED}"
    return ("counting rules not yet confirmed on a GPU: sectors per request are documented, the "
            "rest is the documented reading pending the H200 corpus (gpu_check/coalesce_probe)")


SOURCE = ("CUDA C++ Best Practices Guide, 'Coalesced Access to Global Memory' (cc 6.0+: 32-byte "
          "transactions); NVIDIA forums t/49571/14 and t/165293/4 (Volta+ L1TEX: one request per "
          "instruction, 128-B lines of 4 sectors, 4 tags per cycle)")


def parse_rules(text, base=None):
    """'requests=per_128B,ideal=unique' -> Rules (other fields from base, default DEFAULT)."""
    from ..access import parse_rule_text
    return parse_rule_text(text, base or DEFAULT)
