"""A claim of confirmation must be replayable: every instruction whose numerics the committed
H200 report confirms (layoutsim/isa/data/confirmed.json, "numerics") has a measured corpus in
tests/data/numerics/sm_90/, which test_corpus_replay replays bit for bit.

The 12 wgmma forms wider than N = 8 were recorded on the H200 on 2026-12-01 (driver 580.159.04,
CUDA 13.0; `gpu-check run --group numerics --only ... --seed 20261201 --record`, 117 cases,
487,424 results, 0 mismatches with layoutsim.mma).
"""
from pathlib import Path

import pytest

import layoutsim

from layoutsim.numerics import corpus

ROOT = Path(__file__).resolve().parents[1] / "data" / "numerics"
CONFIRMED = sorted(corpus.confirmed_numerics())


def test_the_confirmed_list():
    assert len(CONFIRMED) == 88


@pytest.mark.parametrize("name", CONFIRMED)
def test_every_numerics_confirmed_form_has_a_measured_corpus(name):
    assert corpus.in_corpus(layoutsim.get(name)), f"{name} is confirmed but the corpus does not keep it"
    path = corpus.path_for(name, "sm_90", root=ROOT)
    assert path in corpus.files(ROOT), f"{path.name}: confirmed on the H200 but no corpus in tests/data"
    c = corpus.load(path)
    assert c.meta["gpu"] == "NVIDIA H200" and c.n >= 2 and c.instruction == name
