"""Replays the wgmma descriptor corpus measured on an H200 (tests/data/descriptors) through the
current model, and checks that it singles out the reading the model uses. The file is part of the
repository: a missing file fails, it does not skip."""
from pathlib import Path

import pytest

from gpu_check.descriptors import corpus
from layoutsim import smem

PATH = Path(__file__).resolve().parents[1] / "data" / "descriptors" / "descriptors_sm_90.npz"


@pytest.fixture(scope="module")
def replayed():
    if not PATH.exists():
        pytest.fail(f"{PATH} is missing: it is the H200 measurement layoutsim.smem.CONFIRMED cites")
    return corpus.replay(PATH)


def test_every_measured_descriptor_reads_where_the_model_says(replayed):
    c, results = replayed
    env = c.environment
    assert env["gpu"] == "NVIDIA H200" and env["compute_capability"] == "9.0"
    for key in ("driver", "cuda_driver_api", "nvcc", "date"):
        assert env.get(key), f"environment lacks {key}"
    assert len(results) == 54                       # 18 probes x canonical, random, unused-bit phases
    assert sum(len(p["values"]) for p in c.probes) == 1028
    bad = [r.diff_text() for r in results if r.status != "pass"]
    assert not bad, "\n".join(bad[:5])
    assert sum(r.compared for r in results) == 2_202_624 and sum(r.mismatches for r in results) == 0


def test_the_measurement_leaves_exactly_the_documented_reading(replayed):
    c, _ = replayed
    desc, _ = corpus.fit(c)
    assert [r for r, unexplained in desc.items() if unexplained == 0] == [smem.DOCUMENTED]
    assert all(unexplained > 0 for r, unexplained in desc.items() if r != smem.DOCUMENTED)
    assert smem.CONFIRMED and PATH.name in smem.CONFIRMED and c.environment["driver"] in smem.CONFIRMED
