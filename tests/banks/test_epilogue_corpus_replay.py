"""Replays the epilogue accesses measured on an H200 (tests/data/banks/epilogue_sm_90.json):
ldmatrix/stmatrix.x4 (and .trans) and ld/st.shared.v4.b32 on f16 tiles in each TMA/wgmma swizzle
mode, one warp access each, wavefronts counted by Nsight Compute, against the bank model. The
patterns must still be the ones gpu_check.descriptors.epilogue builds from layoutsim.smem's
modes, and every measured wavefront count must be what the model predicts. A missing file
fails, it does not skip."""
import json

import pytest

import h200_data
from gpu_check.bank_probe import corpus as bank_corpus
from gpu_check.descriptors import epilogue
from layoutsim.banks import nvidia


@pytest.fixture(scope="module")
def measured():
    return json.loads(h200_data.measured("banks/epilogue_sm_90.json", "docs/smem.md").read_text())


def test_the_file_holds_the_patterns_the_group_builds(measured):
    rows = measured["patterns"]
    want = epilogue.patterns()
    assert len(rows) == len(want) == 36 and measured["measured"] == 36
    for got, pat in zip(rows, want):
        assert (got["op"], got["tag"], got["offsets"], got["active"]) == (pat["op"], pat["tag"], pat["offsets"],
                                                                          pat["active"])


def test_every_measured_access_costs_what_the_bank_model_says(measured):
    rows = measured["patterns"]
    assert all(isinstance(r["measured"], int) for r in rows)
    model = bank_corpus.predictions(rows, nvidia.DEFAULT)
    bad = [(r["op"], r["tag"], m, r["measured"]) for r, m in zip(rows, model) if m != r["measured"]]
    assert not bad, bad[:5]
    # the file's own comparison agrees, and the tiles do cost different amounts (not all ideal)
    assert measured["mismatches"] == 0 and {r["measured"] for r in rows} == {4, 8, 16, 32}
