"""The llm.c corpus (tests/data/realworld/llmc: karpathy/llm.c's dev/cuda kernels, launched as each
file's host launcher launches them; gpu_check/realworld/llmc_cases.py, llmc_build.py):

  * the corpus's files are complete (manifest, every PTX, every inputs file, llm.c's licence) and
    the inputs are what the cases' fill specs give;
  * `python -m gpu_check.realworld.llmc_build --check` finds nothing to change, where nvcc and an
    llm.c checkout (the environment variable LAYOUTSIM_LLMC_SRC) are at hand;
  * once the H200 measurement is committed (h200.json, <case>.h200.npz, written by
    `python -m gpu_check.realworld.llmc_measure --out OUT`), every buffer of the replay bit for bit
    as the H200 left it and its ncu totals inside the range of the measured runs (the checks of
    test_realworld_replay.py). Until then those skip, naming the command.
"""
import os
import shutil
from pathlib import Path

import pytest

from gpu_check.kernel_corpus import corpus as C
from gpu_check.realworld import build as B, llmc_build as L
from gpu_check.realworld.llmc_cases import CASES
from test_realworld_replay import check_bit_for_bit, check_costs, check_files

DATA = L.DATA
MANIFEST = {e["name"]: e for e in C.load_manifest(DATA)} if (DATA / C.MANIFEST).is_file() else {}
MEASURE = ("python -m gpu_check.realworld.llmc_measure --out OUT on the H200, then copy OUT/h200.json and "
           "OUT/*.h200.npz into tests/data/realworld/llmc/")
# case -> {total: why}: a launch whose model total is outside the H200's range, explained (none yet)
OUTSIDE = {}


def test_the_corpus_files_are_complete():
    check_files(DATA, MANIFEST, L.LICENSE, "python -m gpu_check.realworld.llmc_build --src LLM_C")
    assert (DATA / L.LICENSE).read_text().startswith("MIT License")
    assert list(MANIFEST) == [c.name for c in CASES]
    for e in MANIFEST.values():
        assert e["package"].startswith("karpathy/llm.c@") and e["source"].startswith("dev/cuda/")


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_the_inputs_are_the_fill_specs(case):
    assert (DATA / C.inputs_file(case.name)).read_bytes() == C.npz_bytes(B.inputs(case))


def test_the_build_reproduces_the_corpus(tmp_path):
    src = os.environ.get("LAYOUTSIM_LLMC_SRC")
    if not src:
        pytest.skip("no llm.c checkout: set LAYOUTSIM_LLMC_SRC to one (git clone https://github.com/karpathy/llm.c)")
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc not found on PATH")
    # a copy without .git (git archive) builds under the committed manifest's commit
    commit = [] if (Path(src) / ".git").exists() else ["--commit", next(iter(MANIFEST.values()))["package"].split("@")[1]]
    assert L.main(["--src", src, *commit, "--dir", str(DATA), "--check"]) == 0


@pytest.mark.parametrize("name", sorted(MANIFEST))
def test_every_buffer_is_the_h200s_bit_for_bit(name):
    check_bit_for_bit(name, DATA, MEASURE)


@pytest.mark.parametrize("name", sorted(MANIFEST))
def test_costs_are_inside_the_h200s_range(name):
    check_costs(name, DATA, MEASURE, OUTSIDE)
