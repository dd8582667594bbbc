"""Replays what an NVIDIA GPU returned (tests/data/layouts), through the comparison code the live
run uses. The recorded files are part of the tests: a missing one is an error, not a skip."""
import json
from pathlib import Path

import numpy as np
import pytest

from gpu_check import record

DATA = Path(__file__).resolve().parents[1] / "data" / "layouts"
DUMPS = sorted(DATA.glob("layouts_*.npz"))
# the discovered maps are catalog data: layoutsim/isa/data (layoutsim.isa.ptx_wmma loads them)
WMMA = Path(__file__).resolve().parents[2] / "layoutsim" / "isa" / "data" / "nvcuda_wmma_sm_90.json"


def test_the_recorded_dump_is_here():
    assert [p.name for p in DUMPS] == ["layouts_sm_90.npz"], f"the H200 layout dump is missing from {DATA}"


@pytest.mark.parametrize("path", DUMPS, ids=lambda p: p.name)
def test_recorded_dump_matches_the_catalog(path):
    manifest, results = record.replay(path)
    env = manifest["environment"]
    for key in ("gpu", "compute_capability", "driver", "date"):
        assert env.get(key), f"{path.name}: environment lacks {key}"
    assert results
    bad = [r.diff_text() for r in results if r.status != "pass"]
    assert not bad, "\n".join(bad[:10])


def test_discovered_wmma_maps_are_uniform_covers():
    doc = json.loads(WMMA.read_text())
    assert doc["environment"].get("gpu")
    for e in doc["entries"]:
        t = np.asarray(e["table"])
        assert t.shape == (32, e["elements_per_lane"], 2), e["name"]
        counts = np.zeros((e["rows"], e["cols"]), int)
        np.add.at(counts, (t[..., 0].ravel(), t[..., 1].ravel()), 1)
        assert (counts == e["replication"]).all(), e["name"]
