"""Arch profiles: the published numbers, their sources, and the AMD assumption's label."""
import pytest

from layoutsim.numerics.profiles import NOT_CONFIRMED, PROFILES, UNVERIFIED, profile_for


@pytest.mark.parametrize("arch", list(PROFILES))
def test_every_parameter_names_a_source(arch):
    for name, value, source in PROFILES[arch].parameters():
        assert source, f"{arch}.{name} = {value!r} has no source"


def test_hopper_numbers_as_published():
    p = PROFILES["sm_90"]
    # issue 4 / KM H100TC.m / MMASIM sim.py
    assert (p.block_16bit, p.block_tf32, p.extra_bits) == (16, 8, 2)
    assert (p.emax_floor_f32, p.fp32_rounding, p.fp16_rounding) == (-133, "rz", "rne")
    assert (p.c_zero, p.tf32_inputs, p.fp8_mma_sync) == ("skip", "truncate", "f16")
    assert (p.fp8_f16_split, p.fp8_f16_c) == ("pairs", "late")      # fitted on the H200
    assert (PROFILES["sm_80"].block_16bit, PROFILES["sm_80"].block_tf32, PROFILES["sm_80"].extra_bits) == (8, 4, 1)
    assert (PROFILES["sm_70"].block_16bit, PROFILES["sm_70"].extra_bits) == (4, 0)


def test_what_is_confirmed_and_what_is_unverified():
    assert all(p.confirmed == NOT_CONFIRMED for a, p in PROFILES.items()
               if a.startswith("sm_") and a != "sm_90")
    assert "H200" in PROFILES["sm_90"].confirmed
    # gfx11 / gfx12: AMD's characterisations, replayed against AMD's gfx1100 / gfx1201 captures
    # (test_amd_captures); CDNA1-3: MMA-Sim's published models (test_cdna), gfx950: none
    p = PROFILES["gfx11"]
    assert p.verified and "gfx1100" in p.confirmed and p.sign_frame == "c"
    assert "UNVERIFIED ASSUMPTION for f16 results" in p.label("f16", "f16")
    assert all("rocjitsu" in s for n, _, s in p.parameters()
               if n in ("block_16bit", "extra_bits", "fp32_rounding", "sign_frame"))
    assert all(PROFILES[a].verified and "MMA-Sim's published model" in PROFILES[a].label()
               and "not measured here" in PROFILES[a].label() and PROFILES[a].mfma
               for a in ("gfx908", "gfx90a", "gfx942"))
    assert not PROFILES["gfx950"].verified and UNVERIFIED in PROFILES["gfx950"].label()
    assert PROFILES["gfx950"].mfma == () and "CDNA1-3" in PROFILES["gfx950"].source("mfma")
    p = PROFILES["gfx12"]
    assert p.verified and "captured on AMD hardware" in p.confirmed and p.unproven == ("e4m3", "e5m2")
    assert all("rocjitsu" in s for n, _, s in p.parameters()
               if n in ("block_16bit", "extra_bits", "fp32_rounding", "group_16bit", "alignment"))


def test_profile_for_aliases():
    assert profile_for("h200") is PROFILES["sm_90"]
    assert profile_for("sm_90a") is PROFILES["sm_90"]
    assert profile_for("gfx1100") is PROFILES["gfx11"] and profile_for("gfx1201") is PROFILES["gfx12"]


def test_with_rejects_unknown_parameters():
    from layoutsim import LayoutsimError
    with pytest.raises(LayoutsimError, match="unknown profile parameter 'blok'"):
        PROFILES["sm_90"].with_(blok=3)


# Every NVIDIA profile's arithmetic numbers as the sources give them (MMASIM = mmasim 2.1.1
# sim.py: L_max bytes -> products per block, F bits kept = 23 + extra, e_zero floors, fp8 F and
# rho; KM = MATLAB-tensor-core models fma / neab / min_exp_limit); the AMD profiles are checked
# against AMD's characterisations and MMA-Sim's CDNA models elsewhere in this file. Columns: block_16bit, block_tf32, block_fp8,
# extra_bits, fp8_align_bits, fp8_f32_bits, emax_floor_f32, emax_floor_f16, fp8_mma_sync,
# fp32_rounding. (tf32 / fp8 values of archs without those instructions are unused placeholders,
# written as the profile carries them.)
PUBLISHED = {
    "sm_70": (4, 4, 4, 0, 13, 13, -131, -19, "native", "rz"),   # MMASIM Volta 8 B, F=23; KM V100TC fma=4
    "sm_75": (8, 4, 4, 1, 13, 13, -132, -20, "native", "rz"),   # MMASIM Turing 16 B, F=24
    "sm_80": (8, 4, 4, 1, 13, 13, -132, -20, "native", "rz"),   # KM A100TC fma=8/4, neab=1
    "sm_86": (8, 4, 4, 1, 13, 13, -132, -20, "native", "rz"),   # MMASIM groups sm_86 with Ampere
    "sm_87": (8, 4, 4, 1, 13, 13, -132, -20, "native", "rz"),
    "sm_89": (8, 4, 16, 1, 13, 13, -132, -20, "native", "rz"),  # KM AdaTC fp8 fma=16, neab=-10
    "sm_90": (16, 8, 32, 2, 13, 13, -133, -21, "f16", "rz"),    # KM H100TC; CUTLASS #1986
    "sm_100": (16, 8, 32, 2, 25, 23, -133, -21, "f16", "rz"),   # MMASIM Blackwell as Hopper; its
    #          native fp8 (tcgen05.mma, TCGen05MMA: F=25, RZ-FP32); fp8 mma.sync on the f16 path
    "sm_120": (16, 8, 32, 2, 25, 23, -133, -21, "native", "rz"),  # MMASIM RTX Blackwell fp8 F=25, RZ-FP32
}
COLUMNS = ("block_16bit", "block_tf32", "block_fp8", "extra_bits", "fp8_align_bits", "fp8_f32_bits",
           "emax_floor_f32", "emax_floor_f16", "fp8_mma_sync", "fp32_rounding")


@pytest.mark.parametrize("arch", list(PUBLISHED))
def test_every_profile_has_its_published_numbers(arch):
    p = PROFILES[arch]
    assert tuple(getattr(p, c) for c in COLUMNS) == PUBLISHED[arch]
    # shared by every profile (FASI, KM, MMASIM; the f64 NaN rules measured on the H200)
    assert (p.fp16_rounding, p.c_zero, p.product_exponent, p.subnormal_inputs, p.subnormal_outputs,
            p.tf32_inputs, p.overflow, p.specials, p.zero_sign, p.int_saturation, p.f64) == (
        "rne", "skip", "sum", "keep", "keep", "truncate", "inf", "per_block", "positive", "final",
        "fma_chain")
    assert (p.nan_f32, p.nan_f16, p.nan_f64) == (0x7FFFFFFF, 0x7FFF, 0xFFF8000000000000)
    assert (p.nan_f64_rule, p.nan_f64_order, p.nan_f64_snan_first) == ("propagate", "BCA", False)
    assert (p.fp8_f16_split, p.fp8_f16_c) == ("pairs", "late")
    assert p.verified
    assert {a for a in PROFILES if a.startswith("sm_")} == set(PUBLISHED)


def _describe(name, arch):
    from layoutsim.numerics.api import resolve
    from layoutsim.numerics.plan import make_plan
    inst, prof = resolve(name, arch)
    return make_plan(inst, prof).describe().split("\n")[1:]


def test_plans_describe_the_published_arithmetic():
    assert _describe("mma.m16n8k32.f32.e4m3.e4m3.f32", "sm_90") == [
        "  inputs e4m3 x e4m3 (converted to f16: the fp16 path), C f32, D f32",
        "  blocks of 16 products; 25 bits kept below the largest exponent (floor -133); result rz "
        "to 23 fraction bits; C added last, RNE",
        "  k order: " + str([k for k in range(32) if k % 4 < 2] + [k for k in range(32) if k % 4 >= 2])]
    assert _describe("wgmma.m64n8k32.f32.e4m3.e4m3", "sm_90") == [
        "  inputs e4m3 x e4m3, C f32, D f32",
        "  blocks of 32 products; 13 bits kept below the largest exponent (floor -133); result rz "
        "to 13 fraction bits"]
    assert _describe("mma.m16n8k16.f16.f16.f16.f16", "sm_80") == [
        "  inputs f16 x f16, C f16, D f16",
        "  blocks of 8 products; 24 bits kept below the largest exponent (floor -20); result rne "
        "to 10 fraction bits"]
    assert _describe("mma.m16n8k16.s32.s8.s8.s32", "sm_90") == [
        "  exact integer sum of 16 products and C, wrapped modulo 2^32"]
    assert _describe("mma.m16n8k16.satfinite.s32.s8.s8.s32", "sm_90") == [
        "  exact integer sum of 16 products and C, clamped to int32 (final)"]
    assert _describe("mma.m8n8k4.f64.f64.f64.f64", "sm_90") == [
        "  f64: fma_chain over k = 0..3, IEEE round to nearest"]


def test_profiles_command(capsys):
    import json
    from layoutsim.numerics.show_profiles import main
    assert main(["sm_90", "sm_120", "--table"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split() == ["sm_90", "16", "8", "32", "2", "rz", "rne", "-133", "-21", "f16", "13", "13", "H200"]
    assert lines[2].split() == ["sm_120", "16", "8", "32", "2", "rz", "rne", "-133", "-21", "native", "25", "23", "no"]
    assert main(["gfx1201", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    # gfx12: AMD's characterisation (rocjitsu gfx12_dot.h: steps of four products), which
    # replays AMD's gfx1201 captures, so the profile counts as verified
    assert [d["arch"] for d in doc] == ["gfx12"] and doc[0]["verified"] is True
    assert doc[0]["parameters"]["block_16bit"]["value"] == 4
    assert main(["sm_90"]) == 0
    out = capsys.readouterr().out
    assert " *block_16bit" in out and "  block_16bit" not in out and " *nan_f32" in out and "0x7fffffff" in out
    from layoutsim import LayoutsimError
    with pytest.raises(LayoutsimError, match="^unknown arch 'sm_99'"):   # the __main__ wrapper prints it, exit 2
        main(["sm_99"])


def test_amd_plans_describe_the_characterised_arithmetic():
    # gfx12: rocjitsu gfx12_dot.h (steps of four products, pairs first, alignment by the floor,
    # C with two more bits; the NaN payloads of AMD's captures); gfx11: the sign-frame DOT2 steps
    assert _describe("v_wmma_f32_16x16x16_f16", "gfx1201")[-2:] == [
        "  blocks of 4 products; 24 bits kept below the largest exponent (floor -128); result rne to 23 "
        "fraction bits",
        "  products aligned and summed in groups of 2 first; alignment by floor; C keeps 2 more bits; "
        "factor NaN 0xffc00a3d, invalid NaN 0xffc00000, a NaN C comes back quieted"]
    assert _describe("v_wmma_f16_16x16x16_f16", "gfx1201")[-2].endswith("(floor -16); result rne to 10 fraction bits")
    assert _describe("v_wmma_bf16_16x16x16_bf16", "gfx1201")[-2].endswith(
        "(floor -128); result rne32_truncate to 7 fraction bits")
    assert _describe("v_swmmac_f32_16x16x32_f16", "gfx1201")[0] == (
        "  A 2:4 sparse: computed as the dense instruction on the logical (expanded) A, blocks over "
        "logical k (an assumption, like the rest of the AMD arithmetic)")
    assert not any("sparse" in line for line in _describe("v_wmma_f32_16x16x16_f16", "gfx1201"))
    assert _describe("v_wmma_f32_16x16x16_f16", "gfx1100")[-1] == (
        "  each step in C's sign frame: a term of the other sign counts -magnitude - 1; C keeps 2 more bits")


def test_plans_name_the_parameters_they_use():
    from layoutsim.numerics.api import resolve
    from layoutsim.numerics.plan import make_plan

    def uses(name, arch):
        return make_plan(*resolve(name, arch)).uses
    f32 = uses("v_wmma_f32_16x16x16_f16", "gfx1201")
    assert {"fp32_rounding", "emax_floor_f32", "nan_f32", "group_16bit", "alignment"} <= set(f32)
    assert not {"emax_floor_f16", "fp16_rounding", "group_fp8"} & set(f32)
    bf16 = uses("v_wmma_bf16_16x16x16_bf16", "gfx1201")
    assert bf16[:2] == ("bf16_rounding", "emax_floor_bf16")
    assert "group_fp8" in uses("v_wmma_f32_16x16x16_fp8_fp8", "gfx1201")
    hopper = uses("mma.m16n8k16.f32.f16.f16.f32", "sm_90")       # no groups, truncation, no C bits
    assert "emax_floor_f32" in hopper and not {"alignment", "group_16bit", "c_extra_bits"} & set(hopper)


def test_profiles_are_immutable_and_the_table_lists_every_arch(capsys):
    import dataclasses
    from layoutsim.numerics.profiles import profile_for
    from layoutsim.numerics.show_profiles import main
    with pytest.raises(dataclasses.FrozenInstanceError):
        profile_for("sm_90").block_16bit = 8
    assert main(["gfx942", "sm_90", "--table"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].startswith("gfx942  (MFMA: f32 fma, xf32 two_stage/4, f16 two_stage/8") and lines[1].endswith("MMA-Sim")
    assert lines[2].split()[0] == "sm_90" and len(lines) == 3
