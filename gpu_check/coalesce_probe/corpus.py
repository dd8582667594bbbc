"""The coalescing corpus: ~600 deterministic warp access patterns over the global-memory ops of
the coalescing model, chosen to tell the candidate counting rules (layoutsim/memory/nvidia.py)
apart and to leave raw counters from which new rules can be fitted if none of them holds.

Each pattern: {"id", "op", "tag", "family", "offsets": 32 byte offsets, "active": 32-bit mask}.
Offsets count from a 2 MiB aligned buffer (so they are also the low address bits), and every
lane carries a valid, aligned offset even when it is masked off.

Pattern families (all ops get the first ones; the ops most kernels use get all):
  stride      lane L at L*s*width for element strides 0 (broadcast) .. 64, and byte strides 32 .. 4096
  offset      contiguous from a base that is not 128-byte aligned (straddles lines and sectors)
  duplicate   pairs, quads, repeated halves/eighths, reversed and swapped lanes, one address
  gather      random permutations and random addresses within 128 B .. 8 MiB, with duplicates
  mask        partial warps: one lane, halves, odd/even lanes, the last lane, none, random masks
  lines       the warp spread over exactly k lines (k = 2 .. 32): the wavefront count's argument
  sets        32 lanes in 32 lines 2^j * 128 bytes apart: L1 set conflicts, if the tag stage has any

Appended after those (ids 858 on, designed from the first H200 run, 2026-12-01, to decide what
it left open; see docs/coalescing.md):
  tagbank     the warp on lines {0, 2^k}, {0, 1, 2^k}, {0, 2, 2^k} (k = 0 .. 15): which address
              bits choose the tag bank; lines sharing a bank in lane orders that tell "the fullest
              bank" from a greedy pass in lane order; 32 random lines anywhere in the 8 MiB buffer
  rounds      atomics whose lanes repeat addresses unevenly (replay rounds)
  cas         atom.cas on chosen sectors of a line (how many sectors of a line one pass takes)
  bypass      cp.async.cg (LDGSTS.BYPASS): lane pairs, quads and eighths placed on chosen lines
  ideal       patterns with repeated addresses or partial warps, measured with the SASS-patched
              ideal-sector metrics (ideal = bytes asked for, or distinct bytes?)
"""
import numpy as np

from gpu_check.bank_probe.common import per_op, per_op_lines
from layoutsim.memory import parse_op
from layoutsim.memory.batch import count, prepare_batch

FULL = 0xFFFFFFFF
SEED = 20261201
BUFFER = 8 << 20                 # bytes the probe allocates (probe.cu BUFFER_BYTES)
LANE = np.arange(32, dtype=np.int64)

# op -> how many families it gets (3: all, 2: most, 1: the core)
OPS = {
    "ld.global.b32": 3, "ld.global.v4.b32": 3, "st.global.b32": 3, "st.global.v4.b32": 3,
    "ld.global.v2.b32": 3, "ld.global.b8": 2, "st.global.b8": 2, "ld.global.nc.b32": 2,
    "ld.global.nc.v4.b32": 2, "atom.global.add.u32": 2, "cp.async.ca.shared.global.16": 2,
    "ld.global.b16": 1, "st.global.b16": 1, "st.global.v2.b32": 1, "red.global.add.u32": 1,
    "ld.global.nc.b8": 1, "ld.global.nc.b16": 1, "ld.global.nc.v2.b32": 1,
    "ld.global.cg.b32": 1, "ld.global.cg.v4.b32": 1,
    "atom.global.add.u64": 1, "atom.global.add.f32": 1, "atom.global.add.noftz.f16x2": 1,
    "atom.global.exch.b32": 1, "atom.global.cas.b32": 1,
    "red.global.add.u64": 1, "red.global.add.f32": 1, "red.global.add.noftz.f16x2": 1,
    "cp.async.ca.shared.global.4": 1, "cp.async.ca.shared.global.8": 1, "cp.async.cg.shared.global.16": 1,
}


def kernel_name(op):
    """The probe kernel that executes `op` (extern "C" names in probe.cu)."""
    return "coalesce_probe_" + op.replace(".", "_")


CONTROL = "coalesce_probe_control"


class _Builder:
    def __init__(self, op, rng):
        self.op, self.rng = op, rng
        self.w = parse_op(op).width
        self.out = []

    def add(self, family, tag, offsets, active=FULL):
        offs = np.asarray(offsets, dtype=np.int64).reshape(-1)
        assert offs.shape == (32,), (self.op, tag)
        offs = offs % BUFFER                      # keep inside the buffer, then re-align
        offs -= offs % self.w
        self.out.append({"op": self.op, "family": family, "tag": tag,
                         "offsets": [int(o) for o in offs], "active": int(active)})

    def rand(self, n, span, unit=None):
        unit = unit or self.w
        return self.rng.integers(0, span // unit, size=n) * unit


def _core(b):
    w = b.w
    for s in (1, 0, 2, 4, 8, 32):
        b.add("stride", f"element stride {s}", LANE * s * w)
    for base in (w, 64, 96):
        if base % w == 0 and base % 128:
            b.add("offset", f"contiguous from byte {base}", base + LANE * w)
    b.add("duplicate", "pairs of lanes on one address", (LANE // 2) * w)
    b.add("gather", "random permutation of a contiguous block", b.rng.permutation(32) * w)
    b.add("gather", "random addresses within 64 KiB", b.rand(32, 1 << 16))
    for m in (0x0000FFFF, 0x00000001, 0x0):
        b.add("mask", f"contiguous, active {m:#010x}", LANE * w, m)


def _most(b):
    w = b.w
    for s in (3, 16, 33, 64):
        b.add("stride", f"element stride {s}", LANE * s * w)
    for s in (32, 128, 256, 4096):
        if s > w and s // w not in (1, 2, 4, 8, 16, 32, 64):
            b.add("stride", f"byte stride {s}", LANE * s)
    for base in (32, 4 if w <= 4 else 2 * w, 120 if w <= 8 else 112):
        if base % w == 0 and base % 128 and base not in (w, 64, 96):
            b.add("offset", f"contiguous from byte {base}", base + LANE * w)
    b.add("duplicate", "quads of lanes on one address", (LANE // 4) * w)
    b.add("duplicate", "halves identical", (LANE % 16) * w)
    b.add("duplicate", "every lane one address (not 0)", np.full(32, 40 * w))
    b.add("duplicate", "reversed lanes", (31 - LANE) * w)
    b.add("gather", "random addresses within one 4 KiB page", b.rand(32, 4096))
    b.add("gather", "random addresses within 8 MiB", b.rand(32, BUFFER))
    b.add("gather", "8 random addresses, each used by 4 lanes", b.rand(8, 1 << 16)[b.rng.integers(0, 8, 32)])
    for m in (0xFFFF0000, 0x55555555, int(b.rng.integers(1, 1 << 32))):
        b.add("mask", f"contiguous, active {m:#010x}", LANE * w, m)
    b.add("mask", "one line per lane, active 0x000000ff", LANE * 128, 0xFF)
    for k in (2, 4, 5, 8):
        b.add("lines", f"{k} lines, lanes round-robin", (LANE % k) * 128 + ((LANE // k) * w) % 128)


def _all(b):
    w = b.w
    b.add("stride", "element stride 31", LANE * 31 * w)
    b.add("stride", "element stride 17", LANE * 17 * w)
    b.add("offset", "contiguous from byte 4096 - 64", 4096 - 64 + LANE * w)
    b.add("duplicate", "lanes n and n^1 swapped", (LANE ^ 1) * w)
    b.add("duplicate", "eighths identical", (LANE % 8) * w)
    b.add("duplicate", "two addresses in two lines", (LANE % 2) * 128)
    b.add("duplicate", "two addresses in one sector", (LANE % 2) * w)
    b.add("gather", "random addresses within 512 B", b.rand(32, 512))
    b.add("gather", "random lines, first bytes", b.rand(32, 1 << 20, 128))
    b.add("gather", "random permutation of 32 lines", b.rng.permutation(32) * 128)
    b.add("mask", "one line per lane, active 0xaaaaaaaa", LANE * 128, 0xAAAAAAAA)
    b.add("mask", "random, random mask", b.rand(32, 1 << 14), int(b.rng.integers(1, 1 << 32)))
    for k in (3, 12, 16, 17, 32):
        b.add("lines", f"{k} lines, lanes round-robin", (LANE % k) * 128 + ((LANE // k) * w) % 128)
    b.add("lines", "8 lines, lanes in blocks", (LANE // 4) * 256 + (LANE % 4) * w % 128)
    for j in (1, 2, 3, 4, 5, 6, 8, 10):
        b.add("sets", f"32 lines {128 << j} B apart", LANE * (128 << j))
    for j in (5, 8):
        b.add("sets", f"8 lines {128 << j} B apart, 4 lanes each", (LANE // 4) * (128 << j) + (LANE % 4) * w)


def _on_lines(lines, w, per=None):
    """Offsets putting the 32 lanes on `lines` (line indices) in blocks of consecutive lanes,
    each lane on its own `w`-byte element of its line (per: lanes of each line, default even)."""
    per = per or [32 // len(lines) + (i < 32 % len(lines)) for i in range(len(lines))]
    out = []
    for line, n in zip(lines, per):
        out += [line * 128 + (j * w) % 128 for j in range(n)]
    return np.array(out, np.int64)


# Lines that share a tag bank under the bank hash fitted to the first run (layoutsim/memory/nvidia.py
# TAG_BANK_BITS): 0, 5, 10, 15, 19, 22, 25, 28 are in one bank, 1, 4, 11, 14 in another.
_BANK_A = (0, 5, 10, 15, 19, 22, 25, 28)
_BANK_B = (1, 4, 11, 14)


def _tagbank(rng):
    out = []
    for op in ("ld.global.b32", "st.global.b32", "atom.global.add.u32"):
        b = _Builder(op, rng)
        for k in range(16):
            if op != "atom.global.add.u32" or k >= 9:
                b.add("tagbank", f"lines 0 and {1 << k}", _on_lines([0, 1 << k], 4))
            if op == "ld.global.b32":
                for ref in (1, 2):
                    if (1 << k) != ref:
                        b.add("tagbank", f"lines 0, {ref} and {1 << k}", _on_lines([0, ref, 1 << k], 4))
        if op != "atom.global.add.u32":
            a, c = _BANK_A, _BANK_B
            b.add("tagbank", "8 lines of one bank", _on_lines(a, 4))
            b.add("tagbank", "4 lines of one bank", _on_lines(a[:4], 4))
            b.add("tagbank", "2+2 lines of two banks, bank by bank", _on_lines([a[0], a[1], c[0], c[1]], 4))
            b.add("tagbank", "2+2 lines of two banks, interleaved", _on_lines([a[0], c[0], a[1], c[1]], 4))
            b.add("tagbank", "lines of one bank alternating lane by lane", (LANE % 2) * a[1] * 128 + (LANE // 2) * 4)
            b.add("tagbank", "4+4 lines of two banks, bank by bank", _on_lines(list(a[:4]) + list(c), 4))
        out += b.out
    n_random = {"ld.global.b32": 12, "st.global.b32": 4, "ld.global.v4.b32": 4, "atom.global.add.u32": 4,
                "ld.global.nc.b32": 2, "ld.global.cg.b32": 2, "cp.async.ca.shared.global.16": 2,
                "red.global.add.f32": 2}
    for op, n in n_random.items():
        b = _Builder(op, rng)
        for i in range(n):
            lines = rng.choice(BUFFER // 128, size=32, replace=False)
            b.add("tagbank", f"32 random lines within 8 MiB ({i})", lines * 128 + b.rand(32, 128))
        out += b.out
    return out


def _rounds(rng):
    out = []
    for op in ("atom.global.add.u32", "red.global.add.u32", "atom.global.add.u64"):
        b = _Builder(op, rng)
        w = b.w
        b.add("rounds", "lanes 0-15 on one address, 16-31 distinct", np.where(LANE < 16, 0, LANE * w))
        b.add("rounds", "4 lines of 4 banks, one address of line 0 used by 4 lanes",
              np.where(LANE < 4, 0, (LANE % 4) * 128 + (LANE // 4) * w))
        b.add("rounds", "one address, active 0x00000101", np.zeros(32), 0x101)
        b.add("rounds", "halves identical, in 2 lines", (LANE % 16) * 16)
        b.add("rounds", "multiplicities 1..7 (lane groups of growing size)",
              np.repeat(np.arange(8), [1, 2, 3, 4, 5, 6, 7, 4])[:32] * 40 * w)
        b.add("rounds", "8 addresses each used by 4 lanes, in 8 lines of one bank",
              np.array(_BANK_A)[LANE % 8] * 128)
        out += b.out
    b = _Builder("atom.global.cas.b32", rng)
    for first, second in ((0, 2), (1, 2), (0, 3), (0, 1), (1, 3), (2, 3)):
        b.add("cas", f"8 lanes in sector {first}, 8 in sector {second} of one line",
              np.where(LANE < 8, first * 32, second * 32) + (LANE % 8) * 4, 0x0000FFFF)
    b.add("cas", "one lane in each sector of a line", LANE * 32 % 128, 0x0000000F)
    b.add("cas", "8 lines, lanes in sectors 0 and 2", (LANE // 4) * 128 + (LANE % 4 // 2) * 64 + (LANE % 2) * 4)
    b.add("cas", "8 lines, lanes in sectors 0 and 1", (LANE // 4) * 128 + (LANE % 4) * 16)
    b.add("cas", "sectors 0-2 of line 0 and of line 1", (LANE // 16) * 128 + (LANE % 16 % 3) * 32 + (LANE % 16 // 3) * 4)
    out += b.out
    return out


def _bypass(rng):
    b = _Builder("cp.async.cg.shared.global.16", rng)
    for s in (3, 5, 6, 7, 12, 16):
        b.add("bypass", f"element stride {s}", LANE * s * 16)
    pair = LANE % 2 * 16
    b.add("bypass", "lane pairs on one sector each, random lines", rng.choice(4096, 16, replace=False)[LANE // 2] * 128 + pair)
    b.add("bypass", "lane pairs on sector k % 4 of random lines",
          rng.choice(4096, 16, replace=False)[LANE // 2] * 128 + (LANE // 2 % 4) * 32 + pair)
    b.add("bypass", "lane quads on 64 B of random lines", rng.choice(4096, 8, replace=False)[LANE // 4] * 128 + (LANE % 4) * 16)
    b.add("bypass", "lane eighths on 128 B of random lines", rng.choice(4096, 4, replace=False)[LANE // 8] * 128 + (LANE % 8) * 16)
    b.add("bypass", "reversed lanes", (31 - LANE) * 16)
    b.add("bypass", "lanes n and n^1 swapped", (LANE ^ 1) * 16)
    b.add("bypass", "lanes n and n+16 on one address", (LANE % 16) * 16)
    b.add("bypass", "pair members 64 B apart in one line", (LANE // 2) * 128 + (LANE % 2) * 64)
    b.add("bypass", "pair members in one sector, pairs 64 B apart", (LANE // 2) * 64 + pair)
    b.add("bypass", "pair members 32 B apart, pairs 128 B apart", (LANE // 2) * 128 + (LANE % 2) * 32)
    b.add("bypass", "contiguous from byte 16, active 0x55555555", 16 + LANE * 16, 0x55555555)
    b.add("bypass", "element stride 4, active 0x55555555", LANE * 64, 0x55555555)
    b.add("bypass", "element stride 4, active 0x00000003", LANE * 64, 0x3)
    b.add("bypass", "element stride 8, active 0x00000003", LANE * 128, 0x3)
    b.add("bypass", "element stride 2, active 0x0f0f0f0f", LANE * 32, 0x0F0F0F0F)
    b.add("bypass", "element stride 2, active 0x000000ff", LANE * 32, 0xFF)
    b.add("bypass", "element stride 4, active 0x000000ff", LANE * 64, 0xFF)
    b.add("bypass", "one line per lane, active 0x00000001", LANE * 128, 0x1)
    b.add("bypass", "contiguous from byte 32", 32 + LANE * 16)
    b.add("bypass", "contiguous from byte 48", 48 + LANE * 16)
    b.add("bypass", "8 lines of one bank, 4 lanes each", np.array(_BANK_A)[LANE // 4] * 128 + (LANE % 4) * 16)
    return b.out


# ideal sectors: patterns where "bytes asked for" and "distinct bytes" differ, or masks
_IDEAL = ("ld.global.b32", "st.global.b32", "ld.global.v4.b32", "ld.global.b8", "atom.global.add.u32",
          "cp.async.cg.shared.global.16", "cp.async.ca.shared.global.4", "ld.global.nc.b32")


def _ideal(rng):
    out = []
    for op in _IDEAL:
        b = _Builder(op, rng)
        w = b.w
        b.add("ideal", "element stride 0", LANE * 0)
        b.add("ideal", "pairs of lanes on one address", (LANE // 2) * w)
        b.add("ideal", "contiguous, active 0x00000007", LANE * w, 0x7)
        if op in ("ld.global.b32", "st.global.b32", "ld.global.b8"):
            b.add("ideal", "halves identical", (LANE % 16) * w)
            b.add("ideal", "contiguous from byte 64", 64 + LANE * w)
        out += b.out
    return out


SECOND_RUN = ("tagbank", "rounds", "cas", "bypass", "ideal")


def generate():
    """The corpus, ids 0..N-1, identical on every run: the first run's 858 patterns, then the
    second run's (SECOND_RUN families)."""
    rng = np.random.default_rng(SEED)
    out = []
    for op, depth in OPS.items():
        b = _Builder(op, rng)
        _core(b)
        if depth >= 2:
            _most(b)
        if depth >= 3:
            _all(b)
        out += b.out
    rng2 = np.random.default_rng(SEED + 1)
    out += _tagbank(rng2) + _rounds(rng2) + _bypass(rng2) + _ideal(rng2)
    for i, p in enumerate(out):
        p["id"] = i
    return out


def write_patterns(path, patterns, control=True):
    """The text file probe.cu reads; the control launch first when `control`."""
    rows = ([(CONTROL, FULL, [0] * 32)] if control else []) + \
        [(kernel_name(p["op"]), p["active"], p["offsets"]) for p in patterns]
    with open(path, "w") as f:
        f.write(f"coalesce_probe v1\n{len(rows)}\n")
        for name, active, offs in rows:
            f.write(f"{name} {active:08x} {' '.join(str(o) for o in offs)}\n")


def predictions(patterns, rules=None, arch="sm_90", tag_masks=None):
    """{field: [model value per pattern]} under `rules` (a Rules, or {family: Rules}; None = the
    model's own) and `tag_masks` (None: the model's tag-bank hash), through the counting of
    layoutsim.memory.coalesce_batch (memory.batch.count) grouped by op."""
    fields = ("requests", "sectors", "ideal_sectors", "lines", "wavefronts")
    out = {k: [0] * len(patterns) for k in fields}
    groups = {}
    for i, p in enumerate(patterns):
        groups.setdefault(p["op"], []).append(i)
    for op, idx in groups.items():
        r = rules.get(parse_op(op).family) if isinstance(rules, dict) else rules
        offs = np.array([patterns[i]["offsets"] for i in idx], np.int64)
        masks = np.array([patterns[i]["active"] for i in idx], np.uint64)
        spec, _, off, part = prepare_batch(op, offs, masks, arch)
        got = count(spec, off, part, r, tag_masks)
        for k in fields:
            for i, v in zip(idx, got[k]):
                out[k][i] = int(v)
    return out


if __name__ == "__main__":
    pats = generate()
    print(f"{len(pats)} patterns over {len(per_op(pats))} ops")
    print("\n".join(per_op_lines(pats, 34)))
