"""The executor against the H200 on the cluster probes: every buffer of every case of
gpu_check/clusters/cases.py must equal, byte for byte, what `python -m gpu_check.clusters.measure`
recorded on the GPU (tests/data/clusters/clusters.npz and clusters.json)."""
import json
from pathlib import Path

import numpy as np
import pytest
from ptx_kernels import ptx

import layoutsim.ptx as P
from gpu_check.clusters import cases as C

DATA = Path(__file__).resolve().parents[1] / "data" / "clusters"
NPZ, META = DATA / "clusters.npz", DATA / "clusters.json"
pytestmark = pytest.mark.skipif(not NPZ.exists(), reason="tests/data/clusters/clusters.npz is not measured yet: "
                                                         "run `python -m gpu_check.clusters.measure --out DIR` on "
                                                         "the H200 and commit DIR's files there")
CASES = C.cases()


@pytest.fixture(scope="module")
def measured():
    return np.load(NPZ), json.loads(META.read_text())


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_replay_equals_h200(case, measured):
    arrays, meta = measured
    if case["name"] not in {m["name"] for m in meta["cases"]}:
        pytest.skip(f"{case['name']}: not measured on the GPU yet: run `python -m gpu_check.clusters.measure "
                    f"--out DIR` there and commit DIR's files to tests/data/clusters/")
    r = P.run(ptx("cluster", C.ARCH), case["kernel"], case["grid"], case["block"], C.executor_args(case),
              cluster=case["cluster"])
    for i, got in enumerate(r.buffers):
        want = arrays[f"{case['name']}.{i}"]
        assert got.dtype == want.dtype and got.shape == want.shape
        assert np.array_equal(got.view(np.uint8), want.view(np.uint8)), f"{case['name']} buffer {i}"
