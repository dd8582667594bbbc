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
