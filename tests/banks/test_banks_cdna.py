"""CDNA LDS (gfx942, gfx950; wave64): the documented phases and bank counts (layoutsim/banks/amd.py
names each source; nothing here ran on AMD hardware). Expected values follow from those
documents: 32 banks on gfx942, 64 on gfx950, ds_read_b128 lane groups of CDNA3, 8-lane
ds_write_b128 phases, 64 KiB / 160 KiB of LDS."""
import numpy as np
import pytest

from layoutsim.banks import analyze
from layoutsim.errors import LayoutsimError


def test_gfx942_ds_read_b128_uses_the_documented_lane_groups():
    r = analyze("ds_read_b128", "lane*16", arch="gfx942")
    assert (r.wavefronts, r.ideal) == (8, 8)
    assert r.phases[0].lanes == (0, 1, 2, 3, 20, 21, 22, 23)
    assert r.phases[4].lanes == (32, 33, 34, 35, 52, 53, 54, 55)
    # 128 bytes apart: lanes 0-3 and 20-23 of one group hit the same 4 banks at other rows
    r = analyze("ds_read_b128", "lane*128", arch="gfx942")
    assert r.wavefronts == 8 * 8 and r.conflicts == 56


def test_gfx942_writes_and_words():
    w = analyze("ds_write_b128", "lane*16", arch="gfx942")
    assert [p.lanes for p in w.phases][:2] == [tuple(range(8)), tuple(range(8, 16))]
    assert w.wavefronts == 8
    r = analyze("ds_read_b32", "lane*128", arch="gfx942")      # 32 lanes per phase, one bank
    assert (len(r.phases), r.wavefronts) == (2, 64)
    assert analyze("ds_read_b32", "lane*132", arch="gfx942").wavefronts == 2   # stride 33 words


def test_gfx950_has_64_banks_and_160_kib():
    assert analyze("ds_read_b32", "lane*4", arch="gfx950").wavefronts == 1
    r = analyze("ds_read_b32", "lane*128", arch="gfx950")     # banks 0 and 32 only
    assert r.wavefronts == 32 and len(r.phases[0].banks) == 64
    assert analyze("ds_read_b32", "lane*256", arch="gfx950").wavefronts == 64
    analyze("ds_read_b32", "150*1024 + lane*4", arch="gfx950")
    with pytest.raises(LayoutsimError, match="64 KiB"):
        analyze("ds_read_b32", "150*1024 + lane*4", arch="gfx942")


def test_cdna_inputs_are_wave64():
    with pytest.raises(LayoutsimError, match="64 offsets"):
        analyze("ds_read_b32", list(range(0, 128, 4)), arch="gfx942")
    assert analyze("ds_read_b32", list(range(0, 256, 4)), arch="gfx942", active=(1 << 64) - 1).ideal == 2
    with pytest.raises(LayoutsimError, match="no LDS model for gfx908"):
        analyze("ds_read_b32", "lane*4", arch="gfx908")
    from layoutsim.banks import wavefronts_batch
    with pytest.raises(LayoutsimError, match="wave64"):
        wavefronts_batch("ds_read_b32", np.zeros((1, 64), np.int64), arch="gfx942")


# ---- the CLI's tile and expression paths count 64 lanes on CDNA --------------------------------
# Expected values from the rules as the model states them: gfx942 ds_read_b32 serves lanes 0-31
# and 32-63 in two phases over 32 banks; gfx950 serves all 64 lanes in one phase over 64 banks of
# 4 bytes, so one bank row is 256 bytes. --fill gives lane t of access k the (64k + t)-th 4-byte
# element of the row-major tile.
def _banks(argv, capsys):
    from layoutsim.cli import main
    rc = main(["banks", *argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_cli_fill_on_a_tile_takes_64_lanes_per_access(capsys):
    import json
    # 64x64 f32: one row (256 bytes) per access, 64 accesses; each row is 64 distinct words
    rc, out, _ = _banks(["--arch", "gfx950", "--op", "ds_read_b32", "--tile", "64x64", "--dtype", "f32",
                         "--fill", "--json"], capsys)
    reps = json.loads(out)
    assert rc == 0 and len(reps) == 64 and {r["wavefronts"] for r in reps} == {1}
    assert reps[1]["phases"][0]["lanes"] == list(range(64)) and reps[1]["phases"][0]["words"][0] == 256
    rc, out, _ = _banks(["--arch", "gfx942", "--op", "ds_read_b32", "--tile", "64x64", "--dtype", "f32",
                         "--fill"], capsys)
    assert rc == 0 and "total: 128 wavefronts (ideal 128, 0 from bank conflicts)" in out
    # pitch 64 f32 = 256 bytes: lanes 32-63 read the next row, one gfx950 bank row further on: the
    # same 32 banks twice in its one phase (2 wavefronts, ideal 1); gfx942's second phase is apart
    rc, out, _ = _banks(["--arch", "gfx950", "--op", "ds_read_b32", "--tile", "64x32", "--dtype", "f32",
                         "--pitch", "64", "--fill"], capsys)
    assert out.startswith("ds_read_b32 on gfx950: 32 warp accesses filling 64x32 f32, pitch 64")
    assert "total: 64 wavefronts (ideal 32, 32 from bank conflicts)" in out
    rc, out, _ = _banks(["--arch", "gfx942", "--op", "ds_read_b32", "--tile", "64x32", "--dtype", "f32",
                         "--pitch", "64", "--fill", "--index", "0", "--json"], capsys)
    j = json.loads(out)
    assert (j["wavefronts"], j["ideal"], [p["lanes"][0] for p in j["phases"]]) == (2, 2, [0, 32])


def test_cli_expressions_and_masks_are_wave64(capsys):
    import json
    rc, out, _ = _banks(["--arch", "gfx942", "--op", "ds_read_b32", "--addr", "lane*4", "--json"], capsys)
    assert rc == 0 and json.loads(out)["wavefronts"] == 2
    rc, out, _ = _banks(["--arch", "gfx950", "--op", "ds_read_b32", "--addr", "lane*4", "--json"], capsys)
    src = json.loads(out)["phases"][0]["source"]      # the 64 banks with their sources, compiler included
    assert "64 banks" in src and "triton-lang/triton" in src and "unverified on hardware" in src
    # lanes 32-63 only, each 128 bytes apart: one gfx942 bank (32 words), so 32 words in phase 1
    rc, out, _ = _banks(["--arch", "gfx942", "--op", "ds_read_b32", "--addr", "lane*128", "--active", "32-63",
                         "--json"], capsys)
    j = json.loads(out)
    assert (j["wavefronts"], [p["lanes"] for p in j["phases"] if p["lanes"]]) == (32, [list(range(32, 64))])
    rc, _, err = _banks(["--arch", "gfx950", "--op", "ds_read_b32", "--tile", "64x64", "--dtype", "f32",
                         "--block", "0,0"], capsys)
    assert rc == 2 and "AMD LDS op" in err and len(err.strip().splitlines()) == 1


def test_cdna_sub_word_accesses_follow_the_b32_rule():
    # 1- and 2-byte LDS reads: no AMD document gives their phases; the table assumes b32's and
    # the report says so (source "assumed like b32")
    for arch, phases in (("gfx942", 2), ("gfx950", 1)):
        for op, stride in (("ds_read_u8", 1), ("ds_read_u16", 2)):
            r = analyze(op, f"lane*{stride}", arch=arch)
            assert len(r.phases) == phases and r.source.startswith("assumed like b32"), (arch, op)
