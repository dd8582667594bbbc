"""Catalog facts beside the maps, with values: every entry builds, shapes as the names say, the
f64 mma fragments from the PTX ISA, arch and wave errors, summaries, notes, and the FragmentMap's
own checks are in test_fragment_map.py. (Written against the survivors of tools/mutation.py; docs/dev/mutation.md.)"""
import re

import pytest

import layoutsim
from layoutsim.isa.registry import listing, lookup


def test_every_entry_builds_as_a_bijection_or_documented_replication():
    # construction checks the map (bijection, or the same count for every element); nvcuda::wmma
    # and RDNA3 (gfx11) A/B, and tcgen05.cp's multicast (.warpx2: 2 lanes a row, .warpx4: 4) are the only
    # replicated fragments
    for e in listing():
        inst = e.instruction()
        for op in inst.operands.values():
            rep = op.fragment.replication
            cast = {".warpx2": 2, ".warpx4": 4}.get(next((t for t in (".warpx2", ".warpx4") if t in e.name), ""), 1)
            assert rep == 1 or e.family == "wmma.load" or "gfx11" in e.name or rep == cast, (e.name, op.name, rep)


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


def test_nvcuda_wmma_registers_are_32_bits_except_f64():
    # PTX ISA 9.7.13 (wmma): fragments are .b32 registers (.f16x2/.bf16x2 packed, .f32, .s32),
    # and .f64 registers for the f64 shapes
    seen = set()
    for e in listing(family="wmma.load"):
        frag = next(iter(e.instruction().operands.values())).fragment
        want = 64 if ".f64" in e.name else 32
        assert frag.reg_bits == want, e.name
        seen.add(want)
    assert seen == {32, 64}


def test_moves_refuse_an_operand_of_another_register_count():
    from layoutsim.isa import moves
    b = layoutsim.get("mma.m16n8k16.f32.f16.f16.f32").operand("B").fragment      # 2 registers
    assert moves.origins(b, layoutsim.get("ldmatrix.x4")) is None
    assert moves.origins(b, layoutsim.get("ldmatrix.x2.trans")) == [(0, 0), (8, 0)]
    f64 = layoutsim.get("mma.m8n8k4.f64.f64.f64.f64").operand("A").fragment       # 64-bit elements
    assert moves.origins(f64, layoutsim.get("ldmatrix.x1")) is None


def test_notes_name_only_operands_the_instruction_has():
    # the wave64 SWMMAC note speaks of IDX; no plain WMMA (v_wmma_i32_16x16x32_iu4 on gfx12
    # included) has an IDX operand
    for e in listing():
        if e.vendor != "amd":
            continue
        inst = e.instruction()
        if any("IDX" in n for n in inst.notes):
            assert "IDX" in inst.operands, e.name
    iu4 = layoutsim.get("v_wmma_i32_16x16x32_iu4", arch="gfx1201", wave=64)
    assert not any("IDX" in n for n in iu4.notes)


def test_amd_register_names():
    # 64-bit operands sit in VGPR pairs; the gfx950 fp6 operand is one 192-bit (6-VGPR) register
    # of 6-bit slots (AMD Instinct CDNA4 ISA reference guide, MFMA operand sizes)
    d = layoutsim.get("v_mfma_f64_16x16x4_f64", arch="gfx942").operand("D").fragment
    assert d.names[:2] == ("v[0:1]", "v[2:3]")
    a = layoutsim.get("v_mfma_f32_16x16x128_f8f6f4 cbsz:2", arch="gfx950").operand("A").fragment
    assert a.names[:2] == ("v[0:5][5:0]", "v[0:5][11:6]")
    with pytest.raises(layoutsim.LayoutsimError) as e:
        layoutsim.get("v_mfma_f32_4x4x4_16b_f16 cbsz:1 abid:2")
    assert str(e.value) == ("v_mfma_f32_4x4x4_16b_f16: abid:2 out of range; with cbsz:1 abid is 0-1")


def test_wgmma_needs_the_arch_specific_target():
    # PTX ISA 9.7.15: wgmma.mma_async requires sm_90a
    entries = listing(family="wgmma")
    assert entries and all(e.arch_specific and e.instruction().arch_specific for e in entries)
    assert not any(e.arch_specific for e in listing(family="mma"))
    # sm_120's mma.sync .kind:: forms (PTX ISA 9.7.14: sm_120a) are arch-specific
    assert all(e.arch_specific for e in listing(family="mma_kind"))


def test_gfx12_wave64_lane_notes_name_the_right_operands():
    def notes(name):
        return layoutsim.get(name, arch="gfx1201", wave=64).notes
    assert "wave64: A and IDX use lanes 0-31 only; B uses all 64 lanes." in notes("v_swmmac_i32_16x16x32_iu4")
    assert not any("lanes 0-31 only" in n for n in notes("v_swmmac_f32_16x16x32_f16"))
    assert "wave64: A and B fit one VGPR of lanes 0-31; lanes 32-63 are ignored (-1 here)." in notes(
        "v_wmma_i32_16x16x16_iu4")
