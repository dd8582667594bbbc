"""The cuda-samples corpus (tests/data/realworld/samples: NVIDIA/cuda-samples' kernels, launched as
each sample's host code launches them; gpu_check/realworld/samples/, samples_build.py):

  * the corpus's files are complete (manifest, every PTX, every inputs file, the samples' licence)
    and the inputs are what the cases' fill specs give;
  * `python -m gpu_check.realworld.samples_build --check` finds nothing to change, where nvcc and a
    cuda-samples checkout (the environment variable LAYOUTSIM_CUDA_SAMPLES_SRC) are at hand;
  * once the GPU measurement is committed (h200.json, <case>.h200.npz, written by
    `python -m gpu_check.realworld.samples_measure --out OUT`), every buffer of the replay bit for
    bit as the GPU left it and its ncu totals inside the range of the measured runs (the checks of
    test_realworld_replay.py). Until then those skip, naming the command.
"""
import os
import shutil
from pathlib import Path

import pytest

from gpu_check.kernel_corpus import corpus as C
from gpu_check.realworld import build as B, samples_build as S
import numpy as np

from gpu_check.kernel_corpus.parts import TOTALS, run_totals
from gpu_check.realworld.samples import CASES, EXPLAINED_COSTS
from test_realworld_replay import check_bit_for_bit, check_costs, check_files, measured, ncu_values, replay

DATA = S.DATA
MANIFEST = {e["name"]: e for e in C.load_manifest(DATA)} if (DATA / C.MANIFEST).is_file() else {}
MEASURE = ("python -m gpu_check.realworld.samples_measure --out OUT on the H200, then copy OUT/h200.json and "
           "OUT/*.h200.npz into tests/data/realworld/samples/")
# case -> {total: why}: the launches whose model total is outside the GPU's range, explained
# (samples.EXPLAINED_COSTS; test_explained_costs_are_exactly_those holds their values)
NAME_OF = {metric: total for total, metric in TOTALS.items()}
OUTSIDE = {}
for (_case, _metric), _v in EXPLAINED_COSTS.items():
    OUTSIDE.setdefault(_case, {})[NAME_OF[_metric]] = _v[3]


def test_the_corpus_files_are_complete():
    check_files(DATA, MANIFEST, S.LICENSE, "python -m gpu_check.realworld.samples_build --src CUDA_SAMPLES")
    assert "NVIDIA CORPORATION" in (DATA / S.LICENSE).read_text()
    assert list(MANIFEST) == [c.name for c in CASES]
    for e in MANIFEST.values():
        assert e["package"].startswith("NVIDIA/cuda-samples@") and e["source"].startswith("Samples/")


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_the_inputs_are_the_fill_specs(case):
    assert (DATA / C.inputs_file(case.name)).read_bytes() == C.npz_bytes(B.inputs(case))


def test_the_build_reproduces_the_corpus():
    src = os.environ.get("LAYOUTSIM_CUDA_SAMPLES_SRC")
    if not src:
        pytest.skip("no cuda-samples checkout: set LAYOUTSIM_CUDA_SAMPLES_SRC to one "
                    "(git clone https://github.com/NVIDIA/cuda-samples)")
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc not found on PATH")
    commit = [] if (Path(src) / ".git").exists() else ["--commit", next(iter(MANIFEST.values()))["package"].split("@")[1]]
    assert S.main(["--src", src, *commit, "--dir", str(DATA), "--check"]) == 0


@pytest.mark.parametrize("name", sorted(MANIFEST))
def test_every_buffer_is_the_gpus_bit_for_bit(name):
    """Every launch, inverseCNDKernel's lg2.approx included (numerics.sfu.INFERRED)."""
    check_bit_for_bit(name, DATA, MEASURE)


@pytest.mark.parametrize("name", sorted(MANIFEST))
def test_costs_are_inside_the_gpus_range(name):
    check_costs(name, DATA, MEASURE, OUTSIDE)


@pytest.mark.parametrize("case, metric", sorted(EXPLAINED_COSTS))
def test_explained_costs_are_exactly_those(case, metric):
    """A documented difference stays the one recorded: the model's total and the GPU's range."""
    measured(case, DATA, MEASURE)
    vs = ncu_values(case, DATA, MEASURE)[NAME_OF[metric]]
    run = replay(case, DATA)
    assert run.sass_source is not None      # ptxas's SASS: from ptxas, or layoutsim/ptx/data/lowering_sm90_samples.json
    got = run_totals(run)[NAME_OF[metric]]
    assert (got, min(vs), max(vs)) == EXPLAINED_COSTS[case, metric][:3]
