"""Measure the cuda-samples corpus on the H200 (one command, a few minutes):

    python -m gpu_check.realworld.samples_measure --out DIR [more options of gpu_check.kernel_corpus.measure]

is gpu_check.kernel_corpus.measure over tests/data/realworld/samples (gpu_check.realworld.samples_build)
as llmc_measure runs llm.c's: every launch under ncu five times (--ncu-runs 5: some totals vary
from run to run, h200.json keeps every value), the PTX also assembled by ptxas with its SASS kept
(the ptxas_sm_90 variant), a 300-second budget. Then copy DIR/h200.json and DIR/*.h200.npz into
tests/data/realworld/samples/ (tests/gpu_check/test_realworld_samples.py reads them).
"""
import sys

from gpu_check.kernel_corpus import measure

from .samples_build import DATA

DEFAULTS = ["--dir", str(DATA), "--ncu-runs", "5", "--variants", "sm_90,ptxas_sm_90", "--max-seconds", "300"]


def main(argv=None, backend=None):
    """backend: as gpu_check.kernel_corpus.measure.main takes it (tests pass a stand-in)."""
    return measure.main(DEFAULTS + list(sys.argv[1:] if argv is None else argv), backend=backend)


if __name__ == "__main__":
    sys.exit(main())
