"""Replay the shared-memory wavefronts measured on an H200 (tests/data/banks/bank_corpus.json,
written by `python -m gpu_check.bank_probe.measure --out DIR` under Nsight Compute) through the
bank model: every measured pattern must match. Expected values: the measurement."""
import json
from pathlib import Path

import numpy as np
import pytest

from layoutsim import banks
from layoutsim.banks import nvidia

DATA = Path(__file__).resolve().parent.parent / "data" / "banks" / "bank_corpus.json"



@pytest.fixture(scope="module")
def data():
    # measured data is part of the tests here: missing is an error, never a skip
    assert DATA.exists(), f"{DATA} is missing: it is the H200 measurement this test replays"
    return json.loads(DATA.read_text())


def test_corpus_is_a_real_measurement(data):
    env = data["environment"]
    assert env.get("dry_run") is False, "a dry run is not a measurement"
    for key in ("gpu", "driver", "cuda", "ncu", "date"):
        assert env.get(key), f"environment lacks {key}"
    measured = [p for p in data["patterns"] if p.get("measured") is not None]
    assert len(measured) >= 300
    assert {p["op"] for p in measured} == set(banks.op_names("nvidia"))
    assert nvidia.MEASURED, "set nvidia.MEASURED to the GPU, driver, CUDA version and date of this corpus"


def test_model_matches_every_measured_pattern(data):
    measured = [p for p in data["patterns"] if p.get("measured") is not None]
    groups = {}
    for p in measured:
        groups.setdefault((p["op"], p.get("arch", "sm_90")), []).append(p)
    bad = []
    for (op, arch), ps in groups.items():
        offs = np.array([p["offsets"] for p in ps], np.int64)
        masks = np.array([p["active"] for p in ps], np.uint64)
        got = banks.wavefronts_batch(op, offs, arch=arch, active=masks, engine="numpy")
        bad += [(p["id"], op, p["tag"], int(g), p["measured"]) for p, g in zip(ps, got) if g != p["measured"]]
    assert not bad, f"{len(bad)} of {len(measured)} patterns differ (id, op, tag, model, measured): {bad[:20]}"
