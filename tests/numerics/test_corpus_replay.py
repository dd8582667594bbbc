"""Replay every measured corpus in tests/data/numerics/ through layoutsim.mma: identical bits.

The corpora are written by gpu_check on real GPUs (format: tests/data/numerics/README.md).
"""
from pathlib import Path

import pytest

from layoutsim.numerics import corpus

# the repository's corpora, also when layoutsim itself is installed elsewhere (CI)
FILES = corpus.files(Path(__file__).resolve().parents[1] / "data" / "numerics")


@pytest.mark.skipif(not FILES, reason="no measured corpus in tests/data/numerics/ yet: the GPU "
                    "run (gpu_check) writes one .npz per instruction (see its README.md)")
@pytest.mark.parametrize("path", FILES or [None], ids=lambda p: p and f"{p.parent.name}/{p.stem}")
def test_replay_is_bit_identical(path):
    rep = corpus.replay(corpus.load(path))
    assert rep.ok, rep.report()
