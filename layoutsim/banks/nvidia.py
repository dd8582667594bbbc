"""NVIDIA shared memory: 32 banks of 4 bytes, and how a warp's access is split into phases.

Documented (CUDA C++ Programming Guide, "Shared Memory" for compute capability 5.x and later,
unchanged through 9.0; and the Hopper/Blackwell tuning guides):
  * 32 banks, 4 bytes wide: bank = (byte address / 4) mod 32.
  * Lanes reading the same 32-bit word do not conflict (the word is broadcast); lanes writing
    the same word: one of them wins, no conflict.
  * A wavefront serves distinct 32-bit words, at most one per bank. A phase needs as many
    wavefronts as the largest number of distinct words it asks of one bank.

Phases (the lanes that can share one wavefront), before any merging:
  * 8-, 16-, 32-bit accesses: one phase of 32 lanes.
  * 64-bit: two phases, lanes 0-15 and 16-31 (128 bytes each).
  * 128-bit: four phases of 8 lanes (quarter warps) (GTC 2019 S9593 slides; CUTLASS).
  * ldmatrix / stmatrix: one phase per 8x8 matrix: the 8 row addresses (16 bytes each) that
    lanes 8j..8j+7 give for matrix j (PTX ISA 9.7.14.5.15/16).

Merging: phases can be served together when lanes share addresses. NVIDIA documents none of
it for these GPUs. The forum answer for CC 7.x (forums.developer.nvidia.com/t/77228, "Unexpected
shared memory bank conflict") says a 128-bit load needs 2 instead of 4 requests when, for all
active lanes, T(n) == T(n^1) or T(n) == T(n^2) ("packing the return registers"); public blog
measurements (code.hitori.moe, "CUDA shared memory access mechanism with vectorized
instructions") describe the same condition merging the two half-warps of a 64-bit access and
the two quarter-warps inside each half of a 128-bit access, never the halves.

Which of the candidate rules below the H200 follows is decided by measurement:
`python -m gpu_check.bank_probe.measure` runs the corpus under ncu and prints which candidate
rule sets match every pattern; `tests/data/banks/bank_corpus.json` holds the result and
`tests/banks/test_banks_corpus_replay.py` replays it. `MEASURED` says what has been confirmed.
"""
import itertools
from dataclasses import dataclass, replace

from .. import archs

# How the phases of one wide (64/128-bit) access may merge.
#   none        never: 64-bit = 2 phases, 128-bit = 4 phases
#   pairs       if, over the whole warp, every active lane n has T(n^1) inactive or at the same
#               address, or every active lane has T(n^2) inactive or at the same address, then
#               consecutive phase pairs (0,1), (2,3) merge: 64-bit -> 1 phase, 128-bit -> 2
#   pairs-half  as pairs, but each pair of phases tests the condition on its own lanes
#   identical   phases whose active lanes ask for exactly the same set of words merge
#   greedy      in order, a phase joins the previous group while the group still asks at most
#               one word of every bank (it would take one wavefront); empty phases join freely
#   one-phase   the whole warp is one phase (a pure crossbar: only bank conflicts cost)
WIDE_MERGES = ("none", "pairs", "pairs-half", "identical", "greedy", "one-phase")
# ldmatrix/stmatrix: none (one phase per matrix), as-v4 (the matrices' row lanes merge like a
# 128-bit access under the wide rule of the same direction), identical (as above).
MATRIX_MERGES = ("none", "as-v4", "identical")
# Sub-word stores to different bytes of one word: "word" = no conflict; "address" = they conflict.
SUBWORD_STORES = ("word", "address")


@dataclass(frozen=True)
class Rules:
    """One candidate set of NVIDIA merge rules (see the module docstring)."""
    wide_ld: str = "pairs"
    wide_st: str = "none"
    matrix: str = "none"
    subword_st: str = "word"
    empty_phase: int = 0          # wavefronts charged for a phase none of whose lanes is active
    empty_warp: int = 0           # wavefronts charged when no lane of the warp is active

    def __post_init__(self):
        for field, value, valid in (("wide_ld", self.wide_ld, WIDE_MERGES),
                                    ("wide_st", self.wide_st, WIDE_MERGES),
                                    ("matrix", self.matrix, MATRIX_MERGES),
                                    ("subword_st", self.subword_st, SUBWORD_STORES),
                                    ("empty_phase", self.empty_phase, (0, 1)),
                                    ("empty_warp", self.empty_warp, (0, 1))):
            if value not in valid:
                raise ValueError(f"Rules.{field} = {value!r}; valid: {valid}")

    def wide(self, direction):
        return self.wide_ld if direction == "ld" else self.wide_st

    def merge(self, spec):
        """The WIDE_MERGES mode the phases of one access of `spec` (an ops.OpSpec) merge under."""
        if spec.is_matrix:
            return self.wide(spec.direction) if self.matrix == "as-v4" else self.matrix
        return self.wide(spec.direction) if spec.width >= 8 else "none"

    def by_address(self, spec):
        """Whether lanes conflict on different bytes of one word (sub-word stores, subword_st)."""
        return spec.width < 4 and spec.direction == "st" and self.subword_st == "address"

    def label(self):
        return (f"wide_ld={self.wide_ld} wide_st={self.wide_st} matrix={self.matrix} "
                f"subword_st={self.subword_st} empty_phase={self.empty_phase} empty_warp={self.empty_warp}")

    def python(self):
        """The constructor call that makes these rules (what to paste into DEFAULT)."""
        return (f"Rules(wide_ld={self.wide_ld!r}, wide_st={self.wide_st!r}, matrix={self.matrix!r}, "
                f"subword_st={self.subword_st!r}, empty_phase={self.empty_phase}, empty_warp={self.empty_warp})")

    def with_(self, **kw):
        return replace(self, **kw)


def parse_rules(text, base=None):
    """'wide_ld=none,matrix=as-v4' -> Rules (the other fields from base, default DEFAULT)."""
    from ..access import parse_rule_text
    return parse_rule_text(text, base or DEFAULT)


def candidates():
    """Every candidate rule set the measurement discriminates between."""
    return [Rules(*c) for c in itertools.product(WIDE_MERGES, WIDE_MERGES, MATRIX_MERGES,
                                                 SUBWORD_STORES, (0, 1), (0, 1))]


# The rules the model uses. Before the H200 corpus exists this is the best published guess
# (the CC 7.x forum answer and the blog above: loads merge by pairs, stores never; matrices
# one phase each). The measurement driver prints the candidates that match every measured
# pattern; when tests/data/banks/bank_corpus.json lands, DEFAULT must be one of them.
DEFAULT = Rules(wide_ld="pairs", wide_st="none", matrix="none", subword_st="word", empty_phase=0,
                empty_warp=0)
# What the output says about the measurement: what a user can check (the GPU, the run, the
# figures, the command that repeats it), not a path in the source tree (the corpus itself is
# tests/data/banks/bank_corpus.json there, replayed in CI).
MEASURED = ("NVIDIA H200, driver 580.159.04, CUDA 13.0, 2026-11-30: 510 access patterns measured "
            "with ncu, all matched (repeat: gpu-check run --group banks)")


def extrapolated(arch):
    """The note line for an NVIDIA arch other than the measured one (archs.extrapolated), or None."""
    return archs.extrapolated(arch, "the merge rules (which phases of a 64/128-bit or ldmatrix/stmatrix "
                                    "access share a wavefront, sub-word stores, empty phases)",
                              "32 banks of 4 B and the same-word broadcast are documented for cc 5.x and later")


def status(rules=None):
    """The model line for an access counted under `rules` (None: DEFAULT)."""
    if rules is not None and rules != DEFAULT:
        return (f"merge rules given by the caller ({rules.label()}), not the model's; the model's "
                f"({DEFAULT.label()}) are confirmed on {MEASURED}")
    if MEASURED:
        return f"merge rules confirmed on {MEASURED}"
    return ("merge rules not yet confirmed on a GPU (bank counting per phase is documented; "
            "which phases merge is the published CC 7.x rule, pending the H200 corpus)")


SOURCE = ("CUDA C++ Programming Guide, 'Shared Memory' (cc 5.x+: 32 banks x 4 B, same-word "
          "broadcast); phases: GTC 2019 S9593, PTX ISA 9.7.14.5.15-16 (ldmatrix/stmatrix); merging: "
          "forums.developer.nvidia.com/t/77228 (cc 7.x)")

# Shared memory, from the CUDA C++ Programming Guide, "Technical Specifications per Compute
# Capability" (and the Hopper / Blackwell tuning guides): (KiB per SM, KiB usable per block).
SMEM_KIB = {"sm_70": (96, 96), "sm_75": (64, 64), "sm_80": (164, 163), "sm_86": (100, 99),
            "sm_87": (164, 163), "sm_89": (100, 99), "sm_90": (228, 227), "sm_100": (228, 227),
            "sm_120": (128, 99)}


def smem_limit(arch):
    """(usable bytes per block, one-line description) for an NVIDIA arch."""
    per_sm, per_block = SMEM_KIB[arch]
    return per_block * 1024, f"{arch}'s shared memory: {per_block} KiB usable per block ({per_sm} KiB per SM)"


def base_phases(spec):
    """Lists of lanes, one per phase before merging."""
    if spec.is_matrix:
        lanes = spec.address_lanes()
        return [[int(x) for x in lanes[j]] for j in range(spec.matrices)]
    if spec.width <= 4:
        return [list(range(32))]
    if spec.width == 8:
        return [list(range(16)), list(range(16, 32))]
    return [list(range(8 * q, 8 * q + 8)) for q in range(4)]


def phase_rule_text(spec, rules):
    """One line saying how this op's phases are formed under `rules`."""
    if spec.is_matrix:
        base = f"one phase per 8x8 matrix ({spec.matrices}: lanes 8j..8j+7 give matrix j's 8 rows of 16 B)"
        mode = rules.matrix
        if mode == "as-v4":
            return base + f"; matrices merge like a 128-bit {spec.direction} ({rules.wide(spec.direction)})"
        if mode == "identical":
            return base + "; matrices asking for the same words merge"
        return base
    if spec.width <= 4:
        text = "one phase of 32 lanes"
        if rules.by_address(spec):
            text += "; different bytes of one word conflict"
        return text
    base = "two half-warp phases (0-15, 16-31)" if spec.width == 8 else \
        "four quarter-warp phases (0-7, 8-15, 16-23, 24-31)"
    mode = rules.wide(spec.direction)
    extra = {"none": "",
             "pairs": "; merged by pairs when every active lane n matches lane n^1 (or every one n^2)",
             "pairs-half": "; merged by pairs per half warp when its lanes n match n^1 (or n^2)",
             "identical": "; phases asking for the same words merge",
             "greedy": "; consecutive phases merge while one wavefront still serves them",
             "one-phase": "; all lanes served as one phase"}[mode]
    return base + extra
