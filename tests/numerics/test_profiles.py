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
