"""Bank model answers, each with where its expected value comes from.

[guide]  CUDA C++ Programming Guide, 'Shared Memory' (cc 5.x+): 32 banks of 4 bytes, lanes on the
         same 32-bit word do not conflict.
[phases] 64-bit accesses in half warps, 128-bit in quarter warps (GTC 2019 S9593), ldmatrix one
         phase per 8x8 matrix (PTX ISA 9.7.14.5.15): issue #3.
[forum]  forums.developer.nvidia.com/t/77228 (cc 7.x): a 128-bit load whose lanes pair up
         (T(n)==T(n^1) or T(n)==T(n^2)) takes 2 requests instead of 4.
[blog]   code.hitori.moe measurements of the same rule (the cases quoted below).
[issue]  issue #3 (AMD phases; the gfx1201 stride experiment).
[H200]   not yet: tests/banks/test_banks_corpus_replay.py replays the measured corpus once it exists.
"""
import json

import numpy as np
import pytest

from layoutsim import banks
from layoutsim.banks import nvidia
from layoutsim.errors import LayoutsimError

LANE = np.arange(32)


def wf(op, offsets, **kw):
    return banks.wavefronts(op, offsets, **kw)


# ---- 32-bit: one phase [guide] --------------------------------------------------------------
@pytest.mark.parametrize("stride,expected", [(0, 1), (1, 1), (2, 2), (3, 1), (4, 4), (8, 8), (16, 16),
                                             (17, 1), (31, 1), (32, 32), (33, 1), (64, 32)])
def test_b32_word_strides(stride, expected):
    assert wf("ld.shared.b32", f"lane * 4 * {stride}") == expected
    assert wf("st.shared.b32", LANE * 4 * stride) == expected


def test_b32_broadcast_and_multicast():
    assert wf("ld.shared.b32", [12] * 32) == 1                       # one word, every lane
    assert wf("ld.shared.b32", (LANE % 4) * 128) == 4                # 4 words in bank 0, 8 lanes each
    assert wf("ld.shared.b32", (LANE // 4) * 4) == 1                 # 4 lanes per word, 8 banks


def test_inactive_lanes_take_no_part():
    assert wf("ld.shared.b32", LANE * 128) == 32
    assert wf("ld.shared.b32", LANE * 128, active=0x1) == 1
    assert wf("ld.shared.b32", LANE * 128, active=0xFF) == 8
    assert wf("ld.shared.b32", LANE * 128, active=[lane % 2 == 0 for lane in range(32)]) == 16
    assert wf("ld.shared.b32", LANE * 128, active=0) == 0
    offs = [None] * 32
    offs[5] = 640
    r = banks.analyze("ld.shared.b32", offs)                        # None: that lane gives no address
    assert (r.wavefronts, r.phases[0].lanes) == (1, (5,))


def test_subword_one_phase_word_granularity():
    assert wf("ld.shared.b8", LANE) == 1                             # 32 bytes, 8 words
    assert wf("ld.shared.b16", LANE * 2) == 1
    assert wf("st.shared.b8", (LANE % 4) + (LANE // 4) * 128) == 8  # 8 words of bank 0
    assert wf("ld.shared.u16", LANE * 128) == 32                     # spellings: .u16 = .b16


# ---- wider accesses [phases] -------------------------------------------------------------------
def test_conflict_free_wide_accesses_take_their_ideal():
    for op, w, ideal in (("ld.shared.v2.b32", 8, 2), ("ld.shared.v4.b32", 16, 4),
                         ("st.shared.v2.b32", 8, 2), ("st.shared.v4.b32", 16, 4)):
        r = banks.analyze(op, LANE * w)
        assert (r.wavefronts, r.ideal, r.conflicts) == (ideal, ideal, 0)
        assert [list(p.lanes) for p in r.phases] == [list(range(k, k + 32 // ideal)) for k in range(0, 32, 32 // ideal)]


def test_128bit_quarter_warps_conflict_only_within_a_quarter():
    # rows of 128 B, each quarter reads one 16-byte column of 8 rows: 8-way in every quarter
    assert wf("ld.shared.v4.b32", (LANE % 8) * 128 + (LANE // 8) * 16) == 32
    # padded to 144 B: conflict-free
    assert wf("ld.shared.v4.b32", (LANE % 8) * 144 + (LANE // 8) * 16) == 4
    # lanes 0-7 and 8-15 in the same banks, different phases: no conflict
    assert wf("st.shared.v4.b32", (LANE % 8) * 16 + (LANE // 8) * 128) == 4


def test_pair_merge_rule_for_loads_forum_and_blog():
    # [forum] every lane on the same 16 bytes: 2 requests, not 4 (default rule: wide_ld=pairs)
    assert wf("ld.shared.v4.b32", [0] * 32) == 2
    # [blog] case 5: lanes 0-3 -> uint4 0, 4-7 -> 8, 8-11 -> 1, 12-15 -> 9, ...: pairs merge the
    # quarters of each half, which then conflict 2-way: 4 wavefronts (2 conflicts)
    r = banks.analyze("ld.shared.v4.b32", ((LANE // 8) + ((LANE // 4) % 2) * 8) * 16)
    assert (r.wavefronts, r.ideal, r.conflicts) == (4, 2, 2)
    # [blog] case 4: half 0 pairs by n^1, half 1 by n^2: the condition must hold warp-wide
    mixed = np.where(LANE < 16, (LANE // 2) * 16, 256 + ((LANE % 2) + ((LANE - 16) // 4) * 2) * 16)
    assert wf("ld.shared.v4.b32", mixed) == 4
    # [blog] 64-bit: T(n)==T(n^1) merges the two half warps into one phase
    assert wf("ld.shared.v2.b32", (LANE // 2) * 8) == 1
    # stores do not merge under the default rules (no source says they do)
    assert wf("st.shared.v4.b32", [0] * 32) == 4


def test_status_says_when_the_rules_are_the_callers():
    # wavefronts counted under candidate rules are not the confirmed model's
    theirs = banks.analyze("ld.shared.v4.b32", LANE * 16, rules=nvidia.Rules(wide_ld="none")).status
    assert theirs.startswith("merge rules given by the caller (wide_ld=none ")
    assert f"the model's ({nvidia.DEFAULT.label()}) are confirmed on NVIDIA H200" in theirs
    # DEFAULT passed explicitly is the model itself
    ours = banks.analyze("ld.shared.v4.b32", LANE * 16, rules=nvidia.DEFAULT).status
    assert ours == banks.analyze("ld.shared.v4.b32", LANE * 16).status
    assert ours.startswith("merge rules confirmed on NVIDIA H200")


def test_candidate_rules_change_only_what_they_name():
    same = [0] * 32
    assert wf("ld.shared.v4.b32", same, rules=nvidia.Rules(wide_ld="none")) == 4
    assert wf("ld.shared.v4.b32", same, rules=nvidia.Rules(wide_ld="one-phase")) == 1
    assert wf("ld.shared.v4.b32", same, rules=nvidia.Rules(wide_ld="identical")) == 1
    assert wf("ld.shared.v4.b32", same, rules=nvidia.Rules(wide_ld="greedy")) == 1
    assert wf("st.shared.v4.b32", same, rules=nvidia.Rules(wide_st="pairs")) == 2
    assert wf("ld.shared.v4.b32", LANE * 16, active=0xFF, rules=nvidia.Rules(empty_phase=1)) == 4
    assert wf("ld.shared.b32", LANE * 4, active=0, rules=nvidia.Rules(empty_warp=1)) == 1
    assert wf("st.shared.b8", LANE % 4, rules=nvidia.Rules(subword_st="address")) == 4
    assert wf("st.shared.b8", LANE % 4) == 1


# ---- ldmatrix / stmatrix [phases]; the 128 B vs 144 B rows of issue #3 ----------------------------
def test_ldmatrix_rows_128_vs_144_bytes_apart():
    rows128 = "(lane % 8) * 128 + (lane // 8) * 16"
    rows144 = "(lane % 8) * 144 + (lane // 8) * 16"
    r = banks.analyze("ldmatrix.x4", rows128)
    assert (r.wavefronts, r.ideal, r.conflicts) == (32, 4, 28)
    assert [p.wavefronts for p in r.phases] == [8, 8, 8, 8]
    assert r.phases[0].banks[0] == 8 and r.phases[0].banks[4] == 0
    assert wf("ldmatrix.x4", rows144) == 4
    assert wf("ldmatrix.x4.trans", rows144) == 4          # .trans moves the same rows
    assert wf("stmatrix.x4", rows128) == 32


def test_ldmatrix_uses_only_the_row_address_lanes():
    rows = list((LANE % 8) * 144)
    x1 = rows[:8] + [3] * 24                               # lanes 8-31: ignored (even misaligned)
    assert wf("ldmatrix.x1", x1) == 1
    assert wf("ldmatrix.x2", rows[:16]) == 2               # just the 16 row addresses
    r = banks.analyze("ldmatrix.x2", rows[:16])
    assert [p.lanes for p in r.phases] == [tuple(range(8)), tuple(range(8, 16))]


def test_report_json_schema():
    r = banks.analyze("ld.shared.v4.b32", "lane * 16")
    j = r.to_json()
    assert list(j) == ["op", "arch", "wavefronts", "ideal", "conflicts", "phases", "extrapolated", "notes"]
    assert j["op"] == "ld.shared.v4.b32" and j["arch"] == "sm_90"
    assert {"lanes", "wavefronts"} <= set(j["phases"][0])
    json.dumps(j)
    served = [w for s in r.phases[0].serves for w in s[1]]
    assert sorted(served) == list(r.phases[0].words)


# ---- AMD [issue]: unverified on hardware ---------------------------------------------------------
def test_gfx1201_stride_experiment():
    s1 = wf("ds_read_b32", "lane * 4", arch="gfx1201")
    s32 = wf("ds_read_b32", "lane * 128", arch="gfx1201")
    s33 = wf("ds_read_b32", "lane * 132", arch="gfx1201")
    assert s1 == s33 == 1 and s32 == 32                   # stride 33 as fast as 1; 32 much slower


def test_amd_phases_per_generation():
    r12 = banks.analyze("ds_read_b128", "lane * 16", arch="gfx1201")
    r11 = banks.analyze("ds_load_b128", "lane * 16", arch="gfx1100")
    assert [p.lanes for p in r12.phases] == [tuple(range(k, k + 8)) for k in range(0, 32, 8)]
    assert r11.phases[0].lanes == (0, 1, 2, 3, 20, 21, 22, 23)
    assert r11.phases[1].lanes == (4, 5, 6, 7, 16, 17, 18, 19)
    # lanes 4-7 read what lanes 0-3 read: one phase on gfx12 (shared words), two on gfx11
    offs = (LANE % 4) * 16
    assert wf("ds_read_b128", offs, arch="gfx1201", active=0xFF) == 1
    assert wf("ds_read_b128", offs, arch="gfx1100", active=0xFF) == 2
    # lanes 0-3 and 20-23 on the same banks, different words: one gfx11 phase (2-way)
    offs = np.where(LANE < 16, (LANE % 4) * 16, 128 + (LANE % 4) * 16)
    assert wf("ds_read_b128", offs, arch="gfx1100", active=0x00F0000F) == 2
    assert [p.wavefronts for p in banks.analyze("ds_read_b128", offs, arch="gfx1100", active=0x00F0000F).phases] == [2]
    assert wf("ds_write_b64", "lane * 8", arch="gfx1200") == 2
    assert "unverified on hardware" in r12.status and "unverified" in r12.format()


# ---- bad input: one line, LayoutsimError ----------------------------------------------------------
@pytest.mark.parametrize("call,needle", [
    (lambda: wf("ld.shared.b32", "lane * 2"), "hardware faults"),
    (lambda: wf("ld.shared.v4.b32", "lane * 8"), "16-byte aligned"),
    (lambda: wf("ldmatrix.x4", "lane * 8"), "row address"),
    (lambda: wf("ld.shared.b32", "lane * 4 + 227 * 1024"), "227 KiB usable per block (228 KiB per SM)"),
    (lambda: wf("ld.shared.b32", "lane * 4 + 163 * 1024", arch="sm_80"), "163 KiB usable per block (164 KiB per SM)"),
    (lambda: wf("ds_read_b32", "lane * 4 + 65536", arch="gfx1201"), "64 KiB per workgroup"),
    (lambda: wf("ld.shared.b32", [0] * 31), "32 offsets"),
    (lambda: wf("ld.shared.b32", [0] * 33), "not 33"),
    (lambda: wf("ld.shard.b32", [0] * 32), "did you mean: ld.shared.b32"),
    (lambda: wf("ds_read_b128", [0] * 32), "give arch"),
    (lambda: wf("ds_read_b128", [0] * 32, arch="sm_90"), "AMD LDS op"),
    (lambda: wf("ld.shared.b32", [0] * 32, arch="gfx1201"), "NVIDIA shared-memory op"),
    (lambda: wf("stmatrix.x4", [0] * 32, arch="sm_80"), "introduced with sm_90"),
    (lambda: wf("ldmatrix.x4", [0] * 32, active=0xFFFF), ".sync.aligned"),
    (lambda: wf("ld.shared.b32", [-4] + [0] * 31), "negative"),
    (lambda: wf("ld.shared.b32", [0.5] * 32), "not an integer"),
    (lambda: wf("ld.shared.b32", [0] * 32, active=1 << 32), "32 lanes"),
    (lambda: wf("ld.shared.b32", [0] * 32, arch="sm_99"), "unknown arch"),
])
def test_bad_input_one_line(call, needle):
    with pytest.raises(LayoutsimError) as e:
        call()
    msg = str(e.value)
    assert needle in msg and "\n" not in msg


def test_spellings():
    ref = wf("ld.shared.v4.b32", "lane * 16")
    for name in ("ld.shared::cta.v4.u32", "ld.shared.b128", "ld.shared.v4.f32", "LDS.128", "ld.volatile.shared.v2.b64"):
        assert wf(name, "lane * 16") == ref
    assert wf("LDSM.16.M88.4", "(lane % 8) * 128") == wf("ldmatrix.sync.aligned.m8n8.x4.shared.b16", "(lane % 8) * 128")
    assert banks.parse_op("STSM.16.MT88.2").name == "stmatrix.x2.trans"
    assert banks.parse_op("ds_store_b64").name == "ds_write_b64"
    assert banks.parse_op("ds_read_u8").width == 1
