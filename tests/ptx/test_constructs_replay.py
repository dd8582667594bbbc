"""Replay of the GPU measurements of issue 24's constructs (gpu_check/constructs/measure.py, one
file per --set: constructs.json, and smem.json for the shared-memory layout probe smem_probe.cu):
the executor runs the same PTX and launches and must give the same buffers, the same printf
output and the same assert lines. A set's launches skip while its file is absent."""
import json
from pathlib import Path

import pytest

from gpu_check.constructs import replay as R

FOLDER = Path(__file__).resolve().parents[1] / "data" / "constructs"
SETS = ("constructs", "smem")


def _doc(which):
    path = FOLDER / f"{which}.json"
    if not path.exists():
        pytest.skip(f"{path.relative_to(FOLDER.parents[1])} is absent: run `python -m gpu_check.constructs.measure "
                    f"--out DIR --set {which}` on the GPU and commit DIR/{which}.json there")
    return json.loads(path.read_text())


def _launches():
    out = []
    for which in SETS:
        path = FOLDER / f"{which}.json"
        names = [x["name"] for x in json.loads(path.read_text())["launches"]] if path.exists() else ["absent"]
        out += [(which, n) for n in names]
    return out


@pytest.mark.parametrize("which,name", _launches())
def test_replays_the_gpu(which, name):
    doc = _doc(which)
    launch = {x["name"]: x for x in doc["launches"]}[name]
    assert R.differences(doc, launch) == []
