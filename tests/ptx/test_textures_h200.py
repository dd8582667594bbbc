"""Texture fetches and surface loads/stores replayed against the H200, bit for bit.

The data, tests/data/textures/textures.{json,npz}, comes from `python -m gpu_check.textures.measure
--out tests/data/textures` on the H200 (the probe kernels of gpu_check/textures/probes.py, the cases
of gpu_check/textures/cases.py); every case's out words (and, for stores, the surface read back)
must equal what the executor computes from the same PTX and inputs. Which sampler rules
(layoutsim.ptx.texture.RULES) explain a new measurement: `python -m gpu_check.textures.replay
tests/data/textures --fit`.
"""
import pytest

from gpu_check.textures import replay
from layoutsim.files import measured_data

DATA = measured_data("textures")

pytestmark = pytest.mark.skipif(not (DATA / replay.JSON).exists(),
                                reason="no H200 measurement yet: run `python -m gpu_check.textures.measure "
                                       "--out tests/data/textures` on the H200 and commit the two files")


def _cases():
    if not (DATA / replay.JSON).exists():
        return []
    meta, _ = replay.load(DATA)
    return [c for c in meta["cases"] if "error" not in c and c["kind"] != "query_more"]


@pytest.fixture(scope="module")
def recorded():
    return replay.load(DATA)


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c["name"])
def test_the_executor_reproduces_the_h200(case, recorded):
    """Bit for bit, except the cases replay.KNOWN lists: those must still differ in exactly the
    words recorded there (a fix or a regression updates KNOWN and the docs)."""
    _, arrays = recorded
    assert replay.compare(case, arrays) == replay.KNOWN.get(case["name"], 0)


def test_most_recorded_cases_match():
    cases = _cases()
    assert len(cases) == 108 and len(cases) - len(replay.KNOWN) == 107
