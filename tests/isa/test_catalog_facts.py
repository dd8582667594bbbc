"""Catalog facts beside the maps, with values: every entry builds, shapes as the names say, the
f64 mma fragments from the PTX ISA, arch and wave errors, summaries, notes, and the FragmentMap's
own checks. (Written against the survivors of tools/mutation.py; docs/dev/mutation.md.)"""
import dataclasses
import re

import numpy as np
import pytest

import layoutsim
from layoutsim.fragment import FragmentMap
from layoutsim.isa.registry import listing, lookup


def test_every_entry_builds_as_a_bijection_or_documented_replication():
    # construction checks the map (bijection, or the same count for every element); nvcuda::wmma
    # and RDNA3 (gfx11) A/B are the only replicated fragments
    for e in listing():
        inst = e.instruction()
        for op in inst.operands.values():
            rep = op.fragment.replication
            assert rep == 1 or e.family == "wmma.load" or "gfx11" in e.name, (e.name, op.name, rep)


def test_shapes_are_the_names():
    for e in listing():
        m = re.search(r"\.m(\d+)n(\d+)k(\d+)\.", e.name)
        if e.family in ("mma", "wgmma") and m:
            assert e.instruction().shape == tuple(int(x) for x in m.groups()), e.name
    assert {e.instruction().shape[0] for e in listing(family="wgmma")} == {64}


def holds(name, operand, lane):
    frag = layoutsim.get(name).operand(operand).fragment
    return {frag.name(reg, slot): (r, c) for reg, slot, _, r, c in frag.lane_entries(lane)}


# PTX ISA 9.0, 9.7.14.5.x "Matrix Fragments for mma.m16n8k4 / m16n8k8 / m16n8k16 with .f64":
# row = groupID (+8 for the odd registers), col = threadID_in_group (+4 per register pair).
# Lane 13: groupID 3, threadID_in_group 1.
@pytest.mark.parametrize("k,want", [
    (4, {"a0": (3, 1), "a1": (11, 1)}),
    (8, {"a0": (3, 1), "a1": (11, 1), "a2": (3, 5), "a3": (11, 5)}),
    (16, {"a0": (3, 1), "a1": (11, 1), "a2": (3, 5), "a3": (11, 5), "a4": (3, 9), "a5": (11, 9),
          "a6": (3, 13), "a7": (11, 13)}),
])
def test_f64_m16n8_A(k, want):
    assert holds(f"mma.m16n8k{k}.f64.f64.f64.f64", "A", 13) == want


def test_min_arch_is_the_first():
    assert layoutsim.get("mma.m16n8k16.f32.f16.f16.f32").min_arch == "sm_80"
    assert layoutsim.get("mma.m16n8k32.f32.e4m3.e4m3.f32").min_arch == "sm_89"


@pytest.mark.parametrize("name,arch,msg", [
    ("v_wmma_f32_16x16x16_f16", "sm_90",
     "v_wmma_f32_16x16x16_f16.w32.gfx12 is not available on sm_90: it is an AMD instruction of gfx1200, gfx1201"),
    ("mma.m16n8k16.f32.f16.f16.f32", "gfx1201",
     "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 is not available on gfx1201: it is an NVIDIA "
     "instruction of sm_80 and later"),
])
def test_wrong_vendor_errors_name_the_vendor(name, arch, msg):
    with pytest.raises(layoutsim.LayoutsimError) as e:
        layoutsim.get(name, arch=arch)
    assert str(e.value) == msg


@pytest.mark.parametrize("wave,msg", [(16, "wave size must be 32 or 64, not 16"),
                                      (64, "is an NVIDIA instruction: warps have 32 lanes, not 64")])
def test_wave_errors(wave, msg):
    with pytest.raises(layoutsim.LayoutsimError, match=msg):
        lookup("mma.m16n8k16.f32.f16.f16.f32", wave=wave)
    assert lookup("mma.m16n8k16.f32.f16.f16.f32", wave=32).name.startswith("mma.sync")


def test_listing_by_family_and_summaries():
    for fam, n in (("ldmatrix", 6), ("stmatrix", 6), ("swmmac", 22)):
        got = listing(family=fam)
        assert len(got) == n and {e.family for e in got} == {fam}
    summaries = {e.name: e.summary for e in listing(family="ldmatrix") + listing(family="stmatrix")}
    assert summaries["ldmatrix.sync.aligned.m8n8.x1.shared.b16"] == "loads 1 8x8 b16 matrix"
    assert summaries["ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"] == "loads 4 8x8 b16 matrices transposed"
    assert summaries["stmatrix.sync.aligned.m8n8.x2.shared.b16"] == "stores 2 8x8 b16 matrices"


def test_measured_wmma_entries_say_where_they_come_from():
    a = layoutsim.get("wmma.load.a.row.m16n16k16.f16")           # replicated twice (H200)
    assert a.confirmed == ("measured on NVIDIA H200 (driver 580.159.04, CUDA 13.0, 2026-12-01) with "
                           "gpu-check discover")
    assert "each element appears 2 times among the lanes' x[i]" in a.notes
    one = layoutsim.get("wmma.load.a.row.m16n16k16.bf16")
    assert one.operand("A").fragment.replication == 1
    assert not any("appears" in n for n in one.notes)


def test_amd_notes():
    assert layoutsim.get("v_wmma_f32_16x16x16_f16", arch="gfx1100").notes == (
        "A and B: lanes 0-15 hold the data and lanes 16-31 hold it again (RDNA3 replication; every "
        "copy is listed as a holder).",)
    assert "16-31, 32-47, 48-63 hold it again" in layoutsim.get(
        "v_wmma_f32_16x16x16_f16", arch="gfx1100", wave=64).notes[0]
    assert any(n.startswith("iu8: NEG[0]/NEG[1]") for n in
               layoutsim.get("v_wmma_i32_16x16x16_iu8", arch="gfx1201").notes)
    assert not any("NEG" in n for n in layoutsim.get("v_wmma_f32_16x16x16_f16", arch="gfx1201").notes)


# ---- FragmentMap's own checks and conveniences ---------------------------------------------
def _table(rows, cols, regs, slots):
    """A simple bijective table: lane l, element i -> row l % rows, col (l // rows)*n + i."""
    n = regs * slots
    t = np.zeros((32, regs, slots, 3), np.int16)
    for lane in range(32):
        for i in range(n):
            t[lane, i // slots, i % slots] = (0, lane % rows, (lane // rows) * n + i)
    return t


def test_default_register_names_and_immutability():
    frag = FragmentMap(table=_table(8, 16, 2, 2), shape=(1, 8, 16), elem_bits=16)
    assert frag.names == ("r0.0", "r0.1", "r1.0", "r1.1")
    assert frag.replication == 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        frag.elem_bits = 8
    with pytest.raises(ValueError):
        frag.table[0, 0, 0, 0] = 1                   # read-only
    with pytest.raises(ValueError):
        frag.holders[0, 0, 0, 0, 0] = 1


def test_fragment_checks():
    five = np.zeros((32, 1, 1, 3, 3), np.int16)                          # 5 dimensions, last two 3
    for bad in (_table(8, 16, 2, 2)[None], _table(8, 16, 2, 2)[0], five):  # 5 and 3 dimensions
        with pytest.raises(AssertionError, match="expected \\[lanes, regs, slots, 3\\]"):
            FragmentMap(table=bad, shape=(1, 8, 16), elem_bits=16)
    with pytest.raises(AssertionError, match="not a bijection"):               # nothing held
        FragmentMap(table=np.full((32, 2, 2, 3), -1, np.int16), shape=(1, 8, 16), elem_bits=16)
    with pytest.raises(AssertionError, match="^2 slots of 32 bits exceed a 32-bit register$"):
        FragmentMap(table=_table(8, 16, 2, 2), shape=(1, 8, 16), elem_bits=32)
    t = _table(8, 16, 2, 2)
    t[:, 0, 0] = -1                                   # element (0, 0) and others unheld
    with pytest.raises(AssertionError, match="not a bijection"):
        FragmentMap(table=t, shape=(1, 8, 16), elem_bits=16)


def test_who_holds_bounds_and_messages():
    one = layoutsim.get("mma.m16n8k16.f32.f16.f16.f32").operand("C").fragment
    with pytest.raises(layoutsim.LayoutsimError) as e:
        one.who_holds(0, 0, -1)
    assert "matrix" not in str(e.value).split("outside")[0]
    four = layoutsim.get("ldmatrix.x4").operand("R").fragment
    for bad in ((0, 0, -1), (0, 0, 4), (8, 0, 0), (0, -1, 0)):
        with pytest.raises(layoutsim.LayoutsimError, match="outside"):
            four.who_holds(*bad)
    with pytest.raises(layoutsim.LayoutsimError, match="matrix 4 "):
        four.who_holds(0, 0, 4)


def test_several_matrices_of_any_row_count_and_bit_ranges():
    # three 3x4 matrices (not a power of two: the inverse must index m*rows + r, not m*rows | r)
    t = np.zeros((36, 1, 1, 3), np.int16)
    for lane in range(36):
        t[lane, 0, 0] = (lane // 12, (lane % 12) // 4, lane % 4)
    frag = FragmentMap(table=t, shape=(3, 3, 4), elem_bits=32)
    assert [frag.who_holds(r, c, m) for m, r, c in ((1, 1, 0), (2, 2, 3), (1, 0, 3))] == [
        [(16, 0, 0)], [(35, 0, 0)], [(15, 0, 0)]]
    a = layoutsim.get("mma.m16n8k16.f32.f16.f16.f32").operand("A").fragment
    assert [a.bit_range(s) for s in (0, 1)] == [(0, 15), (16, 31)]
    i4 = layoutsim.get("mma.m16n8k64.s32.s4.s4.s32").operand("A").fragment
    assert [i4.bit_range(s) for s in (0, 1, 7)] == [(0, 3), (4, 7), (28, 31)]
