"""layoutsim.memory: the documented coalescing facts, the batch engine against an independent
set-based count, the op spellings and the one-line errors.

Where the expected numbers come from:
  BPG   CUDA C++ Best Practices Guide, "Coalesced Access to Global Memory" (cc 6.0+): a warp
        needs as many 32-byte transactions as 32-byte segments its threads touch; its figures:
        sequential aligned 4-byte words -> 4 segments, misaligned by one word -> 5, stride 2 ->
        half the loaded bytes used.
  NCU   Nsight Compute forum answers by NVIDIA (t/312884 "Understanding L1/TEX Cache Sectors/Req",
        t/49571/14): one request per warp instruction; 1 active thread -> 1 sector per request;
        32 threads on 32 distinct 128-byte lines -> 32; 128-byte lines of four 32-byte sectors,
        the tag stage looks up 4 tags per cycle.
  H200  the coalescing corpus measured on an H200 (tests/data/coalescing/coalesce_corpus.json,
        2026-12-01; pattern ids given): the rules of layoutsim/memory/nvidia.py, replayed whole
        by test_coalesce_corpus_replay.py; here a few of its counts as named examples.
  AMD   the RDNA documents cited in layoutsim/memory/amd.py (128-byte lines, 64- and 128-byte
        GL1 requests): not verified on hardware.
"""
from dataclasses import fields, replace

import numpy as np
import pytest
from hypothesis import given, strategies as st

from layoutsim import LayoutsimError, memory
from layoutsim.memory import nvidia

LANE = np.arange(32)
NV_OPS = memory.op_names("nvidia")


def counts(op, offsets, **kw):
    r = memory.coalesce(op, offsets, **kw)
    return r["requests"], r["sectors"], r["ideal_sectors"]


def test_bpg_sequential_misaligned_and_strided():
    assert counts("ld.global.b32", "lane * 4") == (1, 4, 4)             # BPG: 4 segments
    assert counts("ld.global.b32", "lane * 4 + 4")[1] == 5              # BPG: one word off -> 5
    r = memory.coalesce("ld.global.b32", "lane * 8")                     # BPG: stride 2
    assert r["sectors"] == 8 and r["bytes_requested"] * 2 == r["bytes_fetched"]
    assert counts("ld.global.b32", "lane * 128") == (1, 32, 4)          # NCU: 32 lines -> 32


def test_ncu_sectors_per_request_by_width_and_active_lanes():
    # NCU: 32 active threads, coalesced: 4 (32-bit), 8 (64-bit), 16 (128-bit) sectors per request
    for op, w, s in (("ld.global.b32", 4, 4), ("ld.global.v2.b32", 8, 8), ("ld.global.v4.b32", 16, 16),
                     ("st.global.v4.b32", 16, 16), ("ld.global.b8", 1, 1), ("ld.global.b16", 2, 2)):
        assert counts(op, LANE * w) == (1, s, s), op
    assert counts("ld.global.b32", "lane * 4", active=0x1) == (1, 1, 1)      # NCU: one thread
    assert counts("ld.global.b32", "lane * 4", active=0x0) == (0, 0, 0)      # nothing active
    assert counts("ld.global.b32", "0") == (1, 1, 1)                 # broadcast: 1 sector, ideal 1 (H200 #1)
    assert counts("ld.global.v4.b32", (LANE // 2) * 16) == (1, 8, 8)  # pairs on one address (H200 #74)


def test_wavefronts_are_the_fullest_tag_bank():
    for k in (1, 2, 4, 5, 8, 16, 32):        # consecutive lines spread evenly: NCU's 4 tags per cycle
        r = memory.coalesce("ld.global.b32", (LANE % k) * 128)
        assert r["lines"] == k and r["sectors"] == k
        assert r["wavefronts"] == -(-k // 4)
    # H200 #76: ld.global.v4.b32, 32 random addresses in 64 KiB: 32 lines, 14 wavefronts (not 8)
    offs = [6480, 55232, 29968, 45472, 47632, 12144, 43680, 27040, 40336, 45184, 64240, 37200, 39776, 55872,
            59504, 39088, 17168, 9312, 33872, 35136, 5200, 56272, 33440, 62240, 48528, 17600, 9120, 5952, 35776,
            37696, 9568, 49776]
    r = memory.coalesce("ld.global.v4.b32", offs)
    assert (r["lines"], r["sectors"], r["wavefronts"]) == (32, 32, 14)
    # H200: 32 lanes adding to one word replay 32 times (#484): 32 sectors, 32 wavefronts
    r = memory.coalesce("atom.global.add.u32", "0")
    assert (r["requests"], r["sectors"], r["wavefronts"]) == (1, 32, 32)
    # H200 #753: atom.cas on one full line takes two passes
    assert memory.coalesce("atom.global.cas.b32", "lane * 4")["wavefronts"] == 2
    assert nvidia.MEASURED.startswith("NVIDIA H200") and "confirmed on NVIDIA H200" in \
        memory.coalesce("ld.global.b32", "lane*4")["status"]


def test_status_says_when_the_rules_are_the_callers():
    # a count under other rules than the measured ones must not be reported as confirmed
    model = nvidia.rules_for(memory.parse_op("ld.global.b32"))
    other = replace(model, ideal="unique" if model.ideal != "unique" else "min_sectors")
    theirs = memory.coalesce("ld.global.b32", "lane*4", rules=other)["status"]
    assert theirs.startswith("counting rules given by the caller") and other.label() in theirs
    assert model.label() in theirs and "confirmed on NVIDIA H200" in theirs
    # the model's own rules, passed explicitly, are the confirmed model
    ours = memory.coalesce("ld.global.b32", "lane*4", rules=model)["status"]
    assert ours == memory.coalesce("ld.global.b32", "lane*4")["status"]
    assert not ours.startswith("counting rules given by the caller")


def test_sector_lanes_picture_data():
    r = memory.coalesce("ld.global.b32", "lane * 8", active=0xFFFF)
    assert r["sector_lanes"] == [{"sector": 32 * k, "lanes": [4 * k, 4 * k + 1, 4 * k + 2, 4 * k + 3]}
                                 for k in range(4)]
    assert r["active_lanes"] == 16 and r["excess_sectors"] == 2 and r["bytes_fetched"] == 128


def _bank(line):
    """Tag bank of a line, from the masks with Python integers (not the model's numpy code)."""
    return sum((bin(line & m).count("1") & 1) << i for i, m in enumerate(nvidia.TAG_BANK_MASKS))


def _reference(op, offsets, active):
    """The stated rules (layoutsim/memory/nvidia.py docstring) counted with Python sets."""
    spec = memory.parse_op(op)
    lanes = [i for i in range(32) if (active >> i) & 1]
    rnd = {i: sum(offsets[j] == offsets[i] for j in lanes if j < i) if spec.kind in ("atom", "red") else 0
           for i in lanes}
    sectors = {(rnd[i], offsets[i] // 32) for i in lanes}
    # a line passes once per round it is in (atom.cas: once per 64-byte half it touches in the
    # round); the fullest bank's passes are the wavefronts
    per_bank = [0] * 4
    for r, line in {(r, s // 4) for r, s in sectors}:
        halves = {s % 4 // 2 for rr, s in sectors if rr == r and s // 4 == line}
        per_bank[_bank(line)] += len(halves) if spec.operands > 1 else 1
    distinct = len({offsets[i] // 32 for i in lanes})
    ideal = -(-len(lanes) * spec.width // 32)
    if spec.family == "cp.async.cg":
        sectors = {(i // 2, offsets[i] // 128) for i in lanes}
    else:
        ideal = min(ideal, distinct)
    return {"requests": 1 if lanes else 0, "sectors": len(sectors), "lines": len({offsets[i] // 128 for i in lanes}),
            "wavefronts": max(per_bank), "ideal_sectors": ideal}


@given(st.sampled_from(NV_OPS), st.integers(0, 3), st.integers(0, (1 << 32) - 1), st.data())
def test_batch_engine_matches_a_set_based_count(op, span_kind, active, data):
    w = memory.parse_op(op).width
    span = (256, 4096, 1 << 16, 1 << 24)[span_kind]
    offs = [w * data.draw(st.integers(0, span // w - 1)) for _ in range(32)]
    got = memory.coalesce_batch(op, np.array([offs]), np.array([active], np.uint64))
    ref = _reference(op, offs, active)
    assert {k: int(v[0]) for k, v in got.items()} == ref
    one = memory.coalesce(op, offs, active=active)
    assert {k: one[k] for k in ref} == ref


def test_batch_under_every_candidate_rule_matches_the_single_access():
    rng = np.random.default_rng(5)
    one_knob = [replace(nvidia.DEFAULT, **{f.name: v}) for f in fields(nvidia.Rules)
                for v in {getattr(r, f.name) for r in nvidia.candidates()}]
    mixed = [nvidia.Rules(requests="per_128B", replay="address", line_pass=lp, wavefronts=wf, sectors=sec, passes=ps)
             for lp in nvidia.LINE_PASS for wf in nvidia.WAVEFRONTS for sec in nvidia.SECTORS for ps in nvidia.PASSES]
    for op in ("ld.global.v4.b32", "st.global.v2.b32", "atom.global.add.u32", "ld.global.b8",
               "atom.global.cas.b32", "atom.global.add.u64", "cp.async.cg.shared.global.16"):
        w = memory.parse_op(op).width
        offs = rng.integers(0, 1024 // w, size=(16, 32)) * w          # small span: repeated addresses
        masks = rng.integers(0, 1 << 32, size=16).astype(np.uint64)
        masks[0] = 0
        for rules in one_knob + mixed:
            got = memory.coalesce_batch(op, offs, masks, rules=rules)
            for i in (0, 3, 15):
                one = memory.coalesce(op, offs[i], active=int(masks[i]), rules=rules)
                assert all(one[k] == got[k][i] for k in memory.FIELDS), (op, rules)


def test_candidate_rules_differ_where_they_say():
    v4 = "lane * 16"
    assert memory.coalesce("ld.global.v4.b32", v4, rules=nvidia.Rules(requests="per_128B"))["requests"] == 4
    assert memory.coalesce("ld.global.v2.b32", v4, rules=nvidia.Rules(requests="per_128B"))["requests"] == 2
    assert memory.coalesce("ld.global.b32", "0", active=0, rules=nvidia.Rules(empty_request=1))["requests"] == 1
    assert memory.coalesce("ld.global.b32", "lane*4", rules=nvidia.Rules(sectors="per_lane"))["sectors"] == 32
    assert memory.coalesce("ld.global.b32", "0", rules=nvidia.Rules(ideal="unique"))["ideal_sectors"] == 1
    assert memory.coalesce("ld.global.b32", "0", rules=nvidia.Rules(ideal="bytes"))["ideal_sectors"] == 4
    two_lines = "(lane % 2) * 128"                      # H200 #42: two addresses in two lines, ideal 2
    assert [memory.coalesce("ld.global.b32", two_lines, rules=nvidia.Rules(ideal=v))["ideal_sectors"]
            for v in nvidia.IDEAL] == [2, 4, 1]
    assert memory.coalesce("ld.global.b32", "lane*128", rules=nvidia.Rules(wavefronts="lines"))["wavefronts"] == 32
    assert memory.coalesce("ld.global.b32", "lane*128", rules=nvidia.Rules(wavefronts="lines4"))["wavefronts"] == 8
    assert memory.coalesce("ld.global.b32", "lane*128", rules=nvidia.Rules(wavefronts="sectors16"))["wavefronts"] == 2
    bank_a = [0, 5, 10, 15, 19, 22, 25, 28]            # one tag bank under TAG_BANK_MASKS
    assert memory.coalesce("ld.global.b32", [128 * bank_a[i % 8] for i in range(32)])["wavefronts"] == 8
    assert memory.coalesce("atom.global.add.u32", "0", rules=nvidia.Rules(replay="none"))["sectors"] == 1
    assert memory.coalesce("atom.global.add.u32", "0", rules=nvidia.Rules(replay="address"))["sectors"] == 32
    assert memory.coalesce("ld.global.b32", "0", rules=nvidia.Rules(replay="address"))["sectors"] == 1   # loads
    cas = "(lane % 8) * 4 + (lane // 8) * 64"           # sectors 0 and 2 of line 0, 8 lanes each (H200 #989)
    assert memory.coalesce("atom.global.cas.b32", cas, active=0xFFFF)["wavefronts"] == 2
    assert memory.coalesce("atom.global.cas.b32", cas, active=0xFFFF,
                           rules=nvidia.Rules(line_pass="sectors"))["wavefronts"] == 1
    # H200 #509: one address of 31 repeated, its second use in a line of a bank with room: 6, not 7
    gather = [3440, 2640, 2884, 3152, 1332, 2592, 448, 316, 1480, 508, 1680, 2084, 1752, 1852, 2548, 3760,
              2592, 2264, 2280, 60, 1600, 1696, 3168, 4012, 1592, 472, 3640, 104, 3824, 1552, 864, 304]
    assert memory.coalesce("atom.global.add.u32", gather)["wavefronts"] == 6
    assert memory.coalesce("atom.global.add.u32", gather,
                           rules=nvidia.Rules(replay="address", passes="rounds"))["wavefronts"] == 7
    assert memory.coalesce("cp.async.cg.shared.global.16", "lane * 64",
                           rules=nvidia.Rules(sectors="pair_lines"))["sectors"] == 16     # H200 #846
    assert len(nvidia.candidates()) == 2 * 2 * 4 * 4 * 3 * 2 * 2 * 2
    assert nvidia.parse_rules("requests=per_128B,empty_request=1") == nvidia.Rules(requests="per_128B", empty_request=1)
    for bad in ("requests=two", "nope=1", "requests"):
        with pytest.raises(LayoutsimError):
            nvidia.parse_rules(bad)


def test_amd_documented_lines_and_halves():
    r = memory.coalesce("global_load_b32", "lane * 4", arch="gfx1201")
    assert (r["requests"], r["sectors"], r["sector_bytes"], r["wavefronts"]) == (1, 2, 64, None)
    assert "unverified on hardware" in r["status"]
    for stride, lines in ((1, 1), (2, 2), (8, 8), (32, 32)):
        assert memory.coalesce("buffer_load_b32", LANE * 4 * stride, arch="gfx1100")["requests"] == lines


@pytest.mark.parametrize("text,name", [
    ("ld.global.u8", "ld.global.b8"), ("ld.global.f32", "ld.global.b32"), ("ld.global.v2.f32", "ld.global.v2.b32"),
    ("ld.global.v2.b64", "ld.global.v4.b32"), ("ld.global.b128", "ld.global.v4.b32"),
    ("ld.global.nc.v4.f32", "ld.global.nc.v4.b32"), ("ld.global.ca.b32", "ld.global.b32"),
    ("ld.relaxed.gpu.global.L1::no_allocate.b32", "ld.global.b32"), ("st.global.wb.u16", "st.global.b16"),
    ("atom.relaxed.gpu.global.add.u32", "atom.global.add.u32"), ("red.global.add.noftz.f16x2", "red.global.add.noftz.f16x2"),
    ("cp.async.ca.shared::cta.global.L2::128B.8", "cp.async.ca.shared.global.8"),
    ("global_load_dwordx4", "global_load_b128"), ("buffer_store_byte", "buffer_store_b8")])
def test_op_spellings(text, name):
    assert memory.parse_op(text).name == name
    assert memory.parse_op(name).name == name


def test_families_and_metric_ops():
    fam = {n: (memory.parse_op(n).family, memory.parse_op(n).metric_op) for n in
           ("ld.global.b32", "ld.global.nc.b32", "ld.global.cg.b32", "st.global.b8", "atom.global.cas.b32",
            "red.global.add.f32", "cp.async.cg.shared.global.16")}
    assert fam == {"ld.global.b32": ("ld", "ld"), "ld.global.nc.b32": ("ld.nc", "ld"),
                   "ld.global.cg.b32": ("ld.cg", "ld"), "st.global.b8": ("st", "st"),
                   "atom.global.cas.b32": ("atom", "atom"), "red.global.add.f32": ("red", "red"),
                   "cp.async.cg.shared.global.16": ("cp.async.cg", "ld")}
    assert set(nvidia.RULES) == {memory.parse_op(n).family for n in NV_OPS}


@pytest.mark.parametrize("call,message", [
    (lambda: memory.coalesce("ld.global.b33", "0"), "unknown global-memory op 'ld.global.b33' (did you mean"),
    (lambda: memory.coalesce("ld.shared.b32", "0"), "a shared-memory op: use `layoutsim banks`"),
    (lambda: memory.coalesce("ld.global.b32", "lane * 2"), "lane 1: address 2 (0x2) is not 4-byte aligned"),
    (lambda: memory.coalesce("ld.global.b32", "lane * 4 - 8"), "lane 0: offset -8 is negative"),
    (lambda: memory.coalesce("ld.global.b32", [0] * 31), "ld.global.b32 takes one offset per lane: 32 offsets, not 31"),
    (lambda: memory.coalesce("ld.global.b32", "0", active=1 << 32), "does not fit 32 lanes"),
    (lambda: memory.coalesce("cp.async.ca.shared.global.16", "lane*16", arch="sm_75"), "needs sm_80 or later"),
    (lambda: memory.coalesce("cp.async.cg.shared.global.8", "0"), "cp.async.cg copies 16 bytes only"),
    (lambda: memory.coalesce("cp.async.ca.shared.global", "0"), "give the copy size"),
    (lambda: memory.coalesce("atom.global.add.noftz.f16", "0"), "compare-and-swap loop"),
    (lambda: memory.coalesce("global_load_b32", "0"), "global_load_b32 is an AMD op, not available on sm_90; "
                                                     "give an AMD arch (gfx1100"),
    (lambda: memory.coalesce("global_load_b32", "0", arch=None), "is an AMD op: give arch"),
    (lambda: memory.coalesce("ld.global.b32", "0", arch="gfx1201"), "NVIDIA op, not available on gfx1201"),
    (lambda: memory.coalesce("ld.global.b32", [1 << 50] * 32), "out of range"),
    (lambda: memory.coalesce_batch("ld.global.b32", np.zeros((2, 31), np.int64)), "an [N, 32] array"),
    (lambda: memory.coalesce_batch("ld.global.b32", np.zeros((2, 32))), "must be integers"),
    (lambda: memory.coalesce_batch("ld.global.b32", np.full((2, 32), 1 << 41)), "access 0, lane 0"),
])
def test_errors_are_one_line(call, message):
    with pytest.raises(LayoutsimError) as e:
        call()
    assert message in str(e.value) and "\n" not in str(e.value)


def test_batch_mixing_replayed_and_plain_atomic_rows_matches_single_accesses():
    """Rows without a repeated address take a faster path than rows with one: same counts."""
    rng = np.random.default_rng(11)
    offs = np.stack([rng.permutation(1 << 12)[:32] * 4 for _ in range(12)])
    offs[3, 5] = offs[3, 9]                         # two rows repeat an address
    offs[7] = offs[7, 0]
    for op in ("atom.global.add.u32", "atom.global.cas.b32", "red.global.add.f32"):
        got = memory.coalesce_batch(op, offs)
        for i in range(12):
            one = memory.coalesce(op, offs[i])
            assert all(one[k] == got[k][i] for k in memory.FIELDS), (op, i)
    assert memory.coalesce_batch("atom.global.add.u32", offs)["sectors"][7] == 32
