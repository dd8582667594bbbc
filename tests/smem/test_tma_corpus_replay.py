"""Replays the TMA corpus measured on an H200 (tests/data/descriptors/tma_sm_90.npz) through the
current model: every landed element where layoutsim.smem.box_addresses puts it, the fit leaving
exactly the reading the model uses, and the innermost-coordinate rule (tma.coords_problem)
flagging exactly the boxes that faulted. The file is part of the repository: a missing file
fails, it does not skip."""
from pathlib import Path

import pytest

from gpu_check.descriptors import corpus
from layoutsim import smem
from layoutsim.smem import tma

PATH = Path(__file__).resolve().parents[1] / "data" / "descriptors" / "tma_sm_90.npz"


@pytest.fixture(scope="module")
def replayed():
    if not PATH.exists():
        pytest.fail(f"{PATH} is missing: it is the H200 measurement layoutsim.smem.tma.CONFIRMED cites")
    return corpus.replay(PATH)


def test_every_landed_element_is_where_the_model_puts_it(replayed):
    c, results = replayed
    env = c.environment
    assert env["gpu"] == "NVIDIA H200" and env["compute_capability"] == "9.0"
    for key in ("driver", "cuda_driver_api", "nvcc", "date"):
        assert env.get(key), f"environment lacks {key}"
    assert not c.probes and len(c.tma) == 219
    assert [(r.cases, r.compared) for r in results] == [(181, 287_136), (37, 85_760), (1, 384)]
    bad = [r.diff_text() for r in results if r.status != "pass"]
    assert not bad, "\n".join(bad[:5])
    assert sum(r.mismatches for r in results) == 0
    kinds = {(t["case"].swizzle, t["case"].elem_bytes, len(t["case"].box)) for t in c.tma}
    assert kinds == {(m, e, r) for m in smem.MODES for e in (1, 2, 4) for r in (2, 3)}


def test_the_measurement_leaves_exactly_the_reading_in_use(replayed):
    c, _ = replayed
    _, fit = corpus.fit(c)
    assert [r for r, unexplained in fit.items() if unexplained == 0] == [tma.MEASURED]
    # the reading used before the measurement: wrong for every swizzled box narrower than its span
    narrow = sum(smem.mode(t["case"].swizzle).bits > 0 and
                 t["case"].box[0] * t["case"].elem_bytes < smem.mode(t["case"].swizzle).span for t in c.tma)
    assert fit[smem.TmaReading(pitch="dense")] == narrow == 90
    assert tma.CONFIRMED and PATH.name in tma.CONFIRMED and c.environment["driver"] in tma.CONFIRMED


def test_the_boxes_that_faulted_are_the_ones_the_coordinate_rule_refuses(replayed):
    c, _ = replayed
    faulted = [n["tma_case"] for n in c.notes if n["kind"] == "fault"]
    assert all("illegal instruction" in n["message"] for n in c.notes if n["kind"] == "fault")
    assert sorted(f["coords"][0] * f["elem_bytes"] for f in faulted) == [3, 4, 8]
    for f in faulted:
        assert tma.coords_problem(smem.TensorMap(f["box"], f["elem_bytes"], f["swizzle"]), f["coords"])
    for t in c.tma:                                   # every box that landed passes the rule
        case = t["case"]
        assert tma.coords_problem(smem.TensorMap(case.box, case.elem_bytes, case.swizzle), case.coords) is None
    assert any(t["case"].coord_probe for t in c.tma)  # the aligned control of the rule's phase landed
