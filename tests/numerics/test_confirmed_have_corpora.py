"""A claim of confirmation must be replayable: every instruction whose numerics the committed
H200 report confirms (layoutsim/isa/data/confirmed.json, "numerics") has a measured corpus in
tests/data/numerics/sm_90/, which test_corpus_replay replays bit for bit.

PENDING: the wgmma forms wider than N = 8 were checked on the H200 (docs/validation/h200.json)
but not recorded. Their recording is prepared (`gpu-check run --group numerics --only ...
--record`, gpu_job.sh of branch i16; case counts from layoutsim.numerics.corpus.suggested_cases).
They are strict expected failures: once their files are in tests/data this test passes for them
and pytest fails with XPASS(strict) until they are removed from PENDING.
"""
from pathlib import Path

import pytest

import layoutsim

from layoutsim.numerics import corpus

ROOT = Path(__file__).resolve().parents[1] / "data" / "numerics"
CONFIRMED = sorted(corpus.confirmed_numerics())
PENDING = {f"wgmma.mma_async.sync.aligned.{s}" for s in (
    "m64n16k16.f32.f16.f16", "m64n24k16.f32.f16.f16", "m64n32k16.f32.f16.f16",
    "m64n64k16.f32.f16.f16", "m64n128k16.f32.f16.f16", "m64n256k16.f32.f16.f16",
    "m64n256k16.f16.f16.f16", "m64n256k16.f32.bf16.bf16", "m64n256k8.f32.tf32.tf32",
    "m64n256k32.f32.e4m3.e4m3", "m64n256k32.s32.s8.s8", "m64n160k32.s32.u8.s8")}


def test_the_confirmed_list_and_pending_agree():
    assert len(CONFIRMED) == 88 and PENDING <= set(CONFIRMED)


@pytest.mark.parametrize("name", CONFIRMED)
def test_every_numerics_confirmed_form_has_a_measured_corpus(name, request):
    if name in PENDING:
        request.applymarker(pytest.mark.xfail(strict=True, reason="H200 recording prepared, not yet run"))
    assert corpus.in_corpus(layoutsim.get(name)), f"{name} is confirmed but the corpus does not keep it"
    path = corpus.path_for(name, "sm_90", root=ROOT)
    assert path in corpus.files(ROOT), f"{path.name}: confirmed on the H200 but no corpus in tests/data"
    c = corpus.load(path)
    assert c.meta["gpu"] == "NVIDIA H200" and c.n >= 2 and c.instruction == name
