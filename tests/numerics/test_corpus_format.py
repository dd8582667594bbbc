"""The corpus file format: save/load round trip, validation, replay catching a flipped bit."""
import json

import numpy as np
import pytest

import layoutsim
from layoutsim import LayoutsimError
from layoutsim.numerics import cases, corpus

NAME = "mma.m16n8k16.f32.bf16.bf16.f32"


def _make(tmp_path, flip=False):
    a, b, c = cases.generate(NAME, 40, seed=9)
    d = layoutsim.mma(NAME, a, b, c, raw=True)
    if flip:
        d = d.copy()
        d[3, 2, 1] ^= 1
    path = corpus.path_for(NAME, "sm_90", root=tmp_path)
    path.parent.mkdir(exist_ok=True)              # save() creates no folders
    return corpus.save(path, NAME, "sm_90", a, b, c, d, gpu="NVIDIA H200 (model output)",
                       driver="n/a", runtime="n/a", seed=9, n=40, notes="synthetic")


def test_round_trip_and_replay(tmp_path):
    path = _make(tmp_path)
    assert path.name == "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32.npz"
    assert path.parent.name == "sm_90"
    c = corpus.load(path)
    assert c.instruction == layoutsim.get(NAME).name and c.arch == "sm_90" and c.n == 40
    assert c.meta["generator"] == {"module": "layoutsim.numerics.cases", "seed": 9, "n": 40,
                                   "layoutsim_version": layoutsim.__version__}
    assert {"gpu", "driver", "runtime", "date", "vendor"} <= set(c.meta)
    assert corpus.replay(c).ok
    assert corpus.files(tmp_path) == [path]


def test_replay_reports_a_flipped_bit(tmp_path):
    rep = corpus.replay(corpus.load(_make(tmp_path, flip=True)))
    assert not rep.ok and rep.count == 1
    assert "case 3 D[2,1]: measured 0x" in rep.report()


def test_save_validates_dtypes_and_shapes(tmp_path):
    a, b, c = cases.generate(NAME, 4, seed=1)
    d = layoutsim.mma(NAME, a, b, c, raw=True)
    with pytest.raises(LayoutsimError, match="corpus array d .* must be uint32"):
        corpus.save(tmp_path / "x.npz", NAME, "sm_90", a, b, c, d.view(np.float32),
                    gpu="g", driver="d", runtime="r")
    with pytest.raises(LayoutsimError, match="different case counts"):
        corpus.save(tmp_path / "x.npz", NAME, "sm_90", a, b, c[:2], d,
                    gpu="g", driver="d", runtime="r")


def test_load_rejects_other_files(tmp_path):
    np.savez(tmp_path / "bad.npz", a=np.zeros(3))
    with pytest.raises(LayoutsimError, match="not a numerics corpus"):
        corpus.load(tmp_path / "bad.npz")
    meta = {"format": "something-else", "version": 1}
    np.savez(tmp_path / "bad2.npz", a=np.zeros(1), b=np.zeros(1), c=np.zeros(1), d=np.zeros(1),
             meta=np.array(json.dumps(meta)))
    with pytest.raises(LayoutsimError, match="this layoutsim reads layoutsim-numerics-corpus v1"):
        corpus.load(tmp_path / "bad2.npz")


def test_budget_fits():
    rows, total, fits = corpus.budget("sm_90", 40.0)
    assert fits and total < 40.0 and len(rows) > 60
