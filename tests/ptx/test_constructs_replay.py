"""Replay of the H200 measurement of issue 24's constructs (gpu_check/constructs/measure.py):
the executor runs the same PTX and launches and must give the same buffers, the same printf
output and the same assert lines. Skipped while tests/data/constructs/constructs.json is absent."""
import json
from pathlib import Path

import pytest

from gpu_check.constructs import replay as R

DATA = Path(__file__).resolve().parents[1] / "data" / "constructs" / "constructs.json"


def _doc():
    if not DATA.exists():
        pytest.skip(f"{DATA.relative_to(DATA.parents[2])} is absent: run `python -m gpu_check.constructs.measure "
                    f"--out DIR` on the H200 and commit DIR/constructs.json there")
    return json.loads(DATA.read_text())


def _launches():
    if not DATA.exists():
        return ["absent"]
    return [x["name"] for x in json.loads(DATA.read_text())["launches"]]


@pytest.mark.parametrize("name", _launches())
def test_replays_the_h200(name):
    doc = _doc()
    launch = {x["name"]: x for x in doc["launches"]}[name]
    assert R.differences(doc, launch) == []
