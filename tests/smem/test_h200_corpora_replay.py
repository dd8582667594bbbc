"""Replays the two corpora measured on an H200 (tests/data/descriptors) through the current model.

descriptors_sm_90.npz: every operand element of 1028 wgmma descriptors read where
layoutsim.smem.operand_addresses says, and the fit singling out the reading the model uses.
tma_sm_90.npz: every landed TMA element where layoutsim.smem.box_addresses puts it, the fit
leaving exactly the reading the model uses, and the innermost-coordinate rule
(tma.coords_problem) flagging exactly the boxes that faulted.
The files are part of the repository: a missing file fails, it does not skip."""
import pytest

from gpu_check.descriptors import corpus
from h200_data import check_environment, measured
from layoutsim import smem
from layoutsim.smem import tma

# file -> what cites it (a missing file fails)
CORPORA = {"descriptors_sm_90.npz": "layoutsim.smem.CONFIRMED", "tma_sm_90.npz": "layoutsim.smem.tma.CONFIRMED"}


@pytest.fixture(scope="module")
def replayed():
    return {name: corpus.replay(measured(f"descriptors/{name}", cites)) for name, cites in CORPORA.items()}


@pytest.fixture(scope="module")
def descriptors(replayed):
    return replayed["descriptors_sm_90.npz"]


@pytest.fixture(scope="module")
def boxes(replayed):
    return replayed["tma_sm_90.npz"]


def test_both_corpora_were_measured_on_the_h200_the_model_cites(replayed):
    for name, (c, _) in replayed.items():
        check_environment(c.environment)
        confirmed = smem.CONFIRMED if name.startswith("descriptors") else tma.CONFIRMED
        assert name in confirmed and c.environment["driver"] in confirmed


def test_every_measured_descriptor_reads_where_the_model_says(descriptors):
    c, results = descriptors
    assert len(results) == 54                       # 18 probes x canonical, random, unused-bit phases
    assert sum(len(p["values"]) for p in c.probes) == 1028
    bad = [r.diff_text() for r in results if r.status != "pass"]
    assert not bad, "\n".join(bad[:5])
    assert sum(r.compared for r in results) == 2_202_624 and sum(r.mismatches for r in results) == 0


def test_the_measurement_leaves_exactly_the_documented_reading(descriptors):
    c, _ = descriptors
    desc, _ = corpus.fit(c)
    assert [r for r, unexplained in desc.items() if unexplained == 0] == [smem.DOCUMENTED]
    assert all(unexplained > 0 for r, unexplained in desc.items() if r != smem.DOCUMENTED)


# ---- TMA ----------------------------------------------------------------------------------------
def test_every_landed_element_is_where_the_model_puts_it(boxes):
    c, results = boxes
    assert not c.probes and len(c.tma) == 219
    assert [(r.cases, r.compared) for r in results] == [(181, 287_136), (37, 85_760), (1, 384)]
    bad = [r.diff_text() for r in results if r.status != "pass"]
    assert not bad, "\n".join(bad[:5])
    assert sum(r.mismatches for r in results) == 0
    kinds = {(t["case"].swizzle, t["case"].elem_bytes, len(t["case"].box)) for t in c.tma}
    assert kinds == {(m, e, r) for m in smem.MODES for e in (1, 2, 4) for r in (2, 3)}


def test_the_measurement_leaves_exactly_the_reading_in_use(boxes):
    c, _ = boxes
    _, fit = corpus.fit(c)
    assert [r for r, unexplained in fit.items() if unexplained == 0] == [tma.MEASURED]
    # the reading used before the measurement: wrong for every swizzled box narrower than its span
    narrow = sum(smem.mode(t["case"].swizzle).bits > 0 and
                 t["case"].box[0] * t["case"].elem_bytes < smem.mode(t["case"].swizzle).span for t in c.tma)
    assert fit[smem.TmaReading(pitch="dense")] == narrow == 90


def test_the_boxes_that_faulted_are_the_ones_the_coordinate_rule_refuses(boxes):
    c, _ = boxes
    faulted = [n["tma_case"] for n in c.notes if n["kind"] == "fault"]
    assert all("illegal instruction" in n["message"] for n in c.notes if n["kind"] == "fault")
    assert sorted(f["coords"][0] * f["elem_bytes"] for f in faulted) == [3, 4, 8]
    for f in faulted:
        assert tma.coords_problem(smem.TensorMap(f["box"], f["elem_bytes"], f["swizzle"]), f["coords"])
    for t in c.tma:                                   # every box that landed passes the rule
        case = t["case"]
        assert tma.coords_problem(smem.TensorMap(case.box, case.elem_bytes, case.swizzle), case.coords) is None
    assert any(t["case"].coord_probe for t in c.tma)  # the aligned control of the rule's phase landed
