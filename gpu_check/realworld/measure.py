"""Measure the real-world corpus on the H200 (one command, about 5 minutes):

    python -m gpu_check.realworld.measure --out DIR [more options of gpu_check.kernel_corpus.measure]

is gpu_check.kernel_corpus.measure over tests/data/realworld with every sm_90 launch under ncu five
times (--ncu-runs 5: some totals vary from run to run, and h200.json keeps every value), the PTX
also assembled by ptxas with its SASS kept (the ptxas_sm_90 variant: what the lowering and the
per-SASS-line source counters are read against), and a 300-second budget. Then copy DIR/h200.json
and DIR/*.h200.npz into tests/data/realworld/ (tests/gpu_check/test_realworld_replay.py reads them)
and DIR/raw/source_*.csv and DIR/sass/ wherever the cost investigation needs them.
"""
import sys

from gpu_check.kernel_corpus import measure

from .build import DATA

DEFAULTS = ["--dir", str(DATA), "--ncu-runs", "5", "--variants", "sm_90,ptxas_sm_90", "--max-seconds", "300"]


def main(argv=None, backend=None):
    """backend: as gpu_check.kernel_corpus.measure.main takes it (tests pass a stand-in)."""
    return measure.main(DEFAULTS + list(sys.argv[1:] if argv is None else argv), backend=backend)


if __name__ == "__main__":
    sys.exit(main())
