"""Replay every measured corpus in tests/data/numerics/ through layoutsim.mma: identical bits.

The corpora are written by gpu_check on real GPUs (format: tests/data/numerics/README.md).
"""
from pathlib import Path

import pytest

from layoutsim.numerics import corpus

# the repository's corpora, also when layoutsim itself is installed elsewhere (CI)
FILES = corpus.files(Path(__file__).resolve().parents[1] / "data" / "numerics")




def test_the_corpora_are_here():
    # In this repository the measured data is part of the tests: missing data is an error, not
    # a reason to skip (a checkout without tests/data would otherwise pass on nothing).
    assert len(FILES) >= 88, (f"{len(FILES)} numerics corpora under tests/data/numerics/: the "
                              f"repository holds 88 measured on the H200 (is tests/data missing?)")


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_replay_is_bit_identical(path):
    rep = corpus.replay(corpus.load(path))
    assert rep.ok, rep.report()
