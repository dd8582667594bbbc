"""The bank-probe corpus: >= 400 deterministic warp access patterns over every NVIDIA op of the
bank model, chosen to tell the candidate merge rules (layoutsim/banks/nvidia.py) apart.

Each pattern: {"id", "op", "tag", "offsets": 32 byte offsets, "active": 32-bit lane mask}.
Lanes outside the mask still carry a valid offset (the kernel computes it, the predicated-off
instruction does not use it); ldmatrix/stmatrix run with every lane (they are .sync.aligned),
and the lanes whose addresses .x1/.x2 ignore carry valid addresses elsewhere on purpose.

Families: strides (conflict degree 1..32), paddings (row pitches 64..272 B), CuTe swizzles,
random addresses, duplicates and broadcasts, lane-pair equalities T(n) == T(n^m) for m = 1, 2, 4,
8, 16 (the published merge condition and its neighbours), identical quarter/half warps,
predicated-off lanes (including whole phases and whole warps), sub-word stores to one word, and
a few addresses above 192 KiB. `discrimination()` checks that the corpus separates every pair
of candidate rule sets that can differ at all.
"""
import numpy as np

from layoutsim.banks import nvidia
from layoutsim.banks.model import prepare

from .common import per_op_lines

FULL = 0xFFFFFFFF
SEED = 20261130
HIGH = 0x30000            # 192 KiB: a base above the 48 KiB default (needs the opt-in carve-out)
LANE = np.arange(32)


def _p(out, op, tag, offsets, active=FULL):
    offs = [int(o) for o in np.asarray(offsets, dtype=np.int64).reshape(-1)]
    assert len(offs) == 32, (op, tag)
    prepare(op, offs, "sm_90", active)           # every pattern is valid for the model (raises otherwise)
    out.append({"op": op, "tag": tag, "offsets": offs, "active": int(active)})


def _rand_aligned(rng, n, width, span):
    return rng.integers(0, span // width, size=n) * width


def _b32(out, rng):
    for d in ("ld", "st"):
        op = f"{d}.shared.b32"
        for s in (0, 1, 2, 3, 4, 5, 8, 16, 17, 31, 32, 33, 64, 65, 128):
            _p(out, op, f"stride {s} words", LANE * 4 * s)
        _p(out, op, "all lanes word 7", np.full(32, 28))
        for k in (2, 4, 8):
            _p(out, op, f"{k} words in bank 0, lanes i%{k}", (LANE % k) * 128)
        _p(out, op, "4 lanes per word, stride 1 word", (LANE // 4) * 4)
        _p(out, op, "lanes i and i+16 same word, 16 banks", (LANE % 16) * 4)
        for m in (0x1, 0x3, 0xFF, 0xFFFF, 0xFFFF0000, 0x55555555, 0x80000001, 0x0):
            _p(out, op, f"stride 32 words, active {m:#010x}", LANE * 128, m)
        for k in range(6):
            _p(out, op, f"random {k}", _rand_aligned(rng, 32, 4, 4096))
        for k in range(2):
            base = _rand_aligned(rng, 8, 4, 2048)
            _p(out, op, f"random with duplicates {k}", base[rng.integers(0, 8, size=32)])
        _p(out, op, "random, random mask", _rand_aligned(rng, 32, 4, 1024), int(rng.integers(1, 1 << 32)))
        _p(out, op, "stride 1 word at 192 KiB", HIGH + LANE * 4)


def _subword(out, rng):
    for d in ("ld", "st"):
        for w, name in ((1, "b8"), (2, "b16")):
            op = f"{d}.shared.{name}"
            per = 4 // w
            _p(out, op, "consecutive elements", LANE * w)
            _p(out, op, "one element per word", LANE * 4)
            _p(out, op, "stride 128 B (one bank)", LANE * 128)
            _p(out, op, "all lanes in word 0", (LANE % per) * w)
            _p(out, op, f"{per} lanes per word, words 128 B apart", (LANE % per) * w + (LANE // per) * 128)
            _p(out, op, "2 words of bank 0, bytes spread", (LANE % 2) * 128 + ((LANE // 2) % per) * w)
            _p(out, op, "same address everywhere", np.full(32, 6 if w == 2 else 5))
            for k in range(2):
                _p(out, op, f"random {k}", _rand_aligned(rng, 32, w, 512))
            _p(out, op, "one bank, active lanes 0-7", (LANE % per) * w + (LANE // per) * 128, 0xFF)
            _p(out, op, "consecutive, odd lanes active", LANE * w, 0xAAAAAAAA)
            _p(out, op, "no lane active", LANE * w, 0)


def _pair_patterns(w):
    """Lane-pair / group equalities for a width-w access (the candidate merge conditions)."""
    return [("T(n)==T(n^1)", (LANE // 2) * w),
            ("T(n)==T(n^2)", ((LANE % 2) + (LANE // 4) * 2) * w),
            ("T(n)==T(n^1)==T(n^2)", (LANE // 4) * w),
            ("T(n)==T(n^4) only", (LANE & ~4) * w),
            ("T(n)==T(n^8) only", (LANE & ~8) * w),
            ("halves identical", (LANE % 16) * w),
            ("quarters identical", (LANE % 8) * w),
            ("all lanes one address", np.zeros(32, np.int64)),
            ("all lanes one address (not 0)", np.full(32, 5 * w)),
            ("T(n)==T(n^1), rows 128 B apart", (LANE // 2) * 128),
            ("T(n)==T(n^1), halves in the same banks", (LANE // 2) % 8 * w + (LANE // 16) * 128)]


def _wide(out, rng):
    for d in ("ld", "st"):
        for w, name in ((8, "v2.b32"), (16, "v4.b32")):
            op = f"{d}.shared.{name}"
            strides = (1, 2, 3, 4, 8, 16, 17, 32) if w == 8 else (1, 2, 3, 4, 8, 9, 16, 17, 32)
            for s in strides:
                _p(out, op, f"stride {s * w} B", LANE * w * s)
            for tag, offs in _pair_patterns(w):
                _p(out, op, tag, offs)
            if w == 16:
                # published examples: half 0 pairs by n^1, half 1 by n^2 (merges only per half)
                mixed = np.where(LANE < 16, (LANE // 2) * 16, 256 + ((LANE % 2) + ((LANE - 16) // 4) * 2) * 16)
                _p(out, op, "half 0 T(n)==T(n^1), half 1 T(n)==T(n^2)", mixed)
                _p(out, op, "quads on uint4 0,8,1,9,2,10,3,11", ((LANE // 8) + ((LANE // 4) % 2) * 8) * 16)
                _p(out, op, "128B rows, column of 16B chunks", (LANE % 8) * 128 + (LANE // 8) * 16)
                _p(out, op, "128B rows, Swizzle<3,4,3> column", (LANE % 8) * 128 + (((LANE // 8) ^ (LANE % 8)) * 16))
                _p(out, op, "144B rows (padded), column", (LANE % 8) * 144 + (LANE // 8) * 16)
            masks = (0xFF, 0xFFFF, 0xFFFF0000, 0x1, 0x0F0F0F0F, 0x01010101, 0x55555555, 0xAAAAAAAA,
                     0x33333333, 0x00010001, 0x0)
            for m in masks:
                _p(out, op, f"stride {w} B, active {m:#010x}", LANE * w, m)
            _p(out, op, "one bank rows, odd lanes active", LANE * 128, 0xAAAAAAAA)
            first = 0xFFFFFF00 if w == 16 else 0xFFFF0000
            _p(out, op, "one bank rows, first phase inactive", LANE * 128, first)
            if w == 16:                              # quarters on disjoint bank halves, rows repeat every 4 lanes
                offs = (LANE // 16) * 256 + ((LANE // 8) % 2) * 64 + (LANE % 4) * 16
            else:
                offs = (LANE // 16) * 64 + (LANE % 8) * 8
            _p(out, op, "phases on disjoint bank halves", offs)
            for k in range(4):                       # random pairs: merges under n^1 if any rule does
                pairs = _rand_aligned(rng, 16, w, 2048)
                _p(out, op, f"random, T(n)==T(n^1) {k}", pairs[LANE // 2])
            for k in range(2):
                pairs2 = _rand_aligned(rng, 16, w, 2048)
                _p(out, op, f"random, T(n)==T(n^2) {k}", pairs2[(LANE % 2) + (LANE // 4) * 2])
            for k in range(4):
                _p(out, op, f"random {k}", _rand_aligned(rng, 32, w, 4096))
            for k in range(2):
                q = _rand_aligned(rng, 8 if w == 16 else 16, w, 1024)
                _p(out, op, f"random, phases repeated {k}", q[LANE % (8 if w == 16 else 16)])
            _p(out, op, "random, random mask", _rand_aligned(rng, 32, w, 1024), int(rng.integers(1, 1 << 32)))
            _p(out, op, "random pairs, random mask", _rand_aligned(rng, 16, w, 1024)[LANE // 2],
               int(rng.integers(1, 1 << 32)))
            _p(out, op, f"stride {w} B at 192 KiB", HIGH + LANE * w)


def _matrix(out, rng):
    for d, op0 in (("ld", "ldmatrix"), ("st", "stmatrix")):
        for n in (1, 2, 4):
            for trans in (False, True):
                op = f"{op0}.x{n}{'.trans' if trans else ''}"
                j, r = LANE // 8, LANE % 8                 # lane 8j+r gives row r of matrix j
                pats = [("rows contiguous, matrices 128 B apart", j * 128 + r * 16)]
                for pitch in ((128, 144, 80, 64, 256, 272, 96) if not trans else (128, 144, 80)):
                    pats.append((f"rows {pitch} B apart, matrices side by side", r * pitch + j * 16))
                pats.append(("rows 128 B apart, Swizzle<3,4,3>", r * 128 + ((j ^ r) % 8) * 16))
                pats.append(("every row one address", np.full(32, 64)))
                if n > 1:
                    pats.append(("matrices identical", r * 16))
                    pats.append(("matrices identical, rows 128 B apart", r * 128))
                    pats.append(("matrix 2k+1 == matrix 2k", (j // 2) * 128 + r * 16))
                    pats.append(("matrices on disjoint bank halves, rows repeat every 4",
                                 (j % 2) * 64 + (r % 4) * 16 + (j // 2) * 256))
                if n == 4:
                    pats.append(("half 0 T(n)==T(n^1), half 1 T(n)==T(n^2)",
                                 np.where(LANE < 16, (LANE // 2) * 16, 256 + ((LANE % 2) + ((LANE - 16) // 4) * 2) * 16)))
                pats.append(("rows pairwise equal", j * 128 + (r // 2) * 16))
                if not trans:
                    pats.append(("rows 144 B apart, matrices stacked", (j * 8 + r) * 144))
                    pats.append(("rows 80 B apart, mma A order", ((j % 2) * 8 + r) * 80 + (j // 2) * 16))
                    for k in range(2):
                        pats.append((f"random rows {k}", _rand_aligned(rng, 32, 16, 4096)))
                    pats.append(("random rows, pairs equal", _rand_aligned(rng, 16, 16, 2048)[LANE // 2]))
                else:
                    pats.append(("random rows", _rand_aligned(rng, 32, 16, 4096)))
                used = 8 * n
                for tag, offs in pats:
                    offs = np.array(offs, dtype=np.int64)
                    if used < 32:                          # ignored lanes: valid, elsewhere, distinct
                        offs[used:] = 8192 + _rand_aligned(rng, 32 - used, 16, 4096)
                    _p(out, op, tag, offs)


def generate():
    """The corpus, ids 0..N-1, identical on every run."""
    rng = np.random.default_rng(SEED)
    out = []
    _b32(out, rng)
    _subword(out, rng)
    _wide(out, rng)
    _matrix(out, rng)
    for i, p in enumerate(out):
        p["id"] = i
    return out


def kernel_name(op):
    """The probe kernel that executes `op` (extern "C" names in probe.cu)."""
    return "bank_probe_" + op.replace(".", "_")


def write_patterns(path, patterns):
    """The text file probe.cu reads: a header, then NAME ACTIVE_HEX 32 offsets per line."""
    from layoutsim.files import write_atomic
    write_atomic(path, f"bank_probe v1\n{len(patterns)}\n" + "".join(
        f"{kernel_name(p['op'])} {p['active']:08x} {' '.join(str(o) for o in p['offsets'])}\n" for p in patterns))


# ---- telling the candidate rules apart ----------------------------------------------------
# Each knob of nvidia.Rules changes the answers of one family of ops only (the empty-lane knobs
# those of the per-lane ops), so candidates are compared family by family: a family's answers
# depend only on the candidate's projection onto the knobs that family reads.
def _empty(rules, wide):
    # one phase never leaves a phase empty on its own: empty_phase cannot matter then
    return None if wide == "one-phase" else rules.empty_phase


def _mat(rules, direction):
    if rules.matrix != "as-v4":
        return rules.matrix
    wide = rules.wide(direction)
    return wide if wide in ("none", "identical") else f"as-v4:{wide}"


FAMILIES = (
    ("ld/st.shared b32, ld.shared b8/b16",
     lambda op: op in ("ld.shared.b32", "st.shared.b32", "ld.shared.b8", "ld.shared.b16"),
     lambda r: (("empty_warp", r.empty_warp),)),          # one phase: an empty phase is an empty warp
    ("st.shared b8/b16", lambda op: op in ("st.shared.b8", "st.shared.b16"),
     lambda r: (("subword_st", r.subword_st), ("empty_warp", r.empty_warp))),
    ("ld.shared 64/128-bit", lambda op: op in ("ld.shared.v2.b32", "ld.shared.v4.b32"),
     lambda r: (("wide_ld", r.wide_ld), ("empty_phase", _empty(r, r.wide_ld)), ("empty_warp", r.empty_warp))),
    ("st.shared 64/128-bit", lambda op: op in ("st.shared.v2.b32", "st.shared.v4.b32"),
     lambda r: (("wide_st", r.wide_st), ("empty_phase", _empty(r, r.wide_st)), ("empty_warp", r.empty_warp))),
    ("ldmatrix", lambda op: op.startswith("ldmatrix"), lambda r: (("matrix", _mat(r, "ld")),)),
    ("stmatrix", lambda op: op.startswith("stmatrix"), lambda r: (("matrix", _mat(r, "st")),)),
)


def effective(rules):
    """Everything about a rule set that can change an answer: its projection on every family."""
    return tuple(proj(rules) for _, _, proj in FAMILIES)


def predictions(patterns, rules, arch="sm_90"):
    """Model wavefronts of every pattern under `rules` (numpy batch engine, grouped by op)."""
    from layoutsim.banks.batch import wavefronts_batch
    out = [0] * len(patterns)
    groups = {}
    for i, p in enumerate(patterns):
        groups.setdefault(p["op"], []).append(i)
    for op, idx in groups.items():
        offs = np.array([patterns[i]["offsets"] for i in idx], np.int64)
        masks = np.array([patterns[i]["active"] for i in idx], np.uint64)
        wf = wavefronts_batch(op, offs, arch, masks, rules, engine="numpy")
        for i, v in zip(idx, wf):
            out[i] = int(v)
    return out


def family_predictions(patterns, candidates=None):
    """{family name: (pattern indices, {projection: predictions})} over the candidate rule sets."""
    candidates = candidates or nvidia.candidates()
    out = {}
    for name, sel, proj in FAMILIES:
        idx = [i for i, p in enumerate(patterns) if sel(p["op"])]
        sub = [patterns[i] for i in idx]
        preds = {}
        for r in candidates:
            key = proj(r)
            if key not in preds and sub:
                preds[key] = predictions(sub, r)
        out[name] = (idx, preds)
    return out


def fit(patterns, measured, candidates=None):
    """Match candidates against measurements ({pattern id: wavefronts}).

    Returns (per_family, matching): per_family[name] = {projection: [mismatching ids]} and
    matching = the candidates (nvidia.Rules) with no mismatch in any family."""
    candidates = candidates or nvidia.candidates()
    fams = family_predictions(patterns, candidates)
    per_family = {}
    for name, (idx, preds) in fams.items():
        per_family[name] = {key: [patterns[i]["id"] for i, v in zip(idx, pred)
                                  if patterns[i]["id"] in measured and measured[patterns[i]["id"]] != v]
                            for key, pred in preds.items()}
    matching = [r for r in candidates
                if all(not per_family[name].get(proj(r), [None]) for name, _, proj in FAMILIES
                       if name in per_family and per_family[name])]
    return per_family, matching


def discrimination(patterns=None):
    """Per family, the groups of distinct projections the corpus cannot tell apart (should be none)."""
    patterns = patterns or generate()
    same = []
    for name, (idx, preds) in family_predictions(patterns).items():
        by_vec = {}
        for key, vec in preds.items():
            by_vec.setdefault(tuple(vec), []).append(key)
        same += [(name, group) for group in by_vec.values() if len(group) > 1]
    return same


if __name__ == "__main__":
    pats = generate()
    print(f"{len(pats)} patterns")
    print("\n".join(per_op_lines(pats, 22)))
    same = discrimination(pats)
    print(f"indistinguishable groups of candidate settings: {len(same)}")
    for name, g in same[:20]:
        print("  ", name, g)
