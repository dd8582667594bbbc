"""Replay of the H200 measurement of the video instructions (gpu_check/video_probe/measure.py): the
executor runs every measured instruction it models (every SIMD form of PTX ISA 9.0 section
9.7.18.2, the scalar forms of 9.7.18.1 without .sat/.min/.max and vmad) on the same inputs and must
give every word the GPU gave (a file measured at c63dda1, whose k_scalar holds every scalar form,
replays the same way). Skipped while tests/data/video/video.json.gz is absent; the other scalar
forms stay refused, one line each."""
import gzip
import json
import sys
from pathlib import Path

import numpy as np
import pytest

import layoutsim.ptx as P
from gpu_check.video_probe import forms as F
from layoutsim.errors import LayoutsimError

DATA = Path(__file__).resolve().parents[1] / "data" / "video" / "video.json.gz"


def _doc():
    if not DATA.exists():
        pytest.skip(f"{DATA.relative_to(DATA.parents[2])} is absent: run `python -m gpu_check.video_probe.measure "
                    f"--out DIR` on the H200 and commit DIR/video.json.gz there")
    with gzip.open(DATA, "rt") as f:
        return json.load(f)


def test_the_executor_gives_the_h200s_words_for_every_modelled_form():
    # every recorded instruction the executor models (forms.modelled), from whichever kernel the
    # measurement ran it in, in one kernel made of them
    doc = _doc()
    forms, want = [], []
    for k in doc["kernels"].values():
        keep = [i for i, f in enumerate(k["forms"]) if F.modelled(f)]
        forms += [k["forms"][i] for i in keep]
        want += [k["out"][i] for i in keep]
    a, b, c = (np.asarray(doc["inputs"][x], np.uint32) for x in "abc")
    want = np.asarray(want, np.uint32)
    out = np.zeros(want.size, np.uint32)
    src = ".version 8.0\n.target sm_90\n.address_size 64\n\n" + F.kernel("k_replay", forms)
    got = P.run(src, "k_replay", 1, doc["threads"], [a, b, c, out]).buffers[3].reshape(want.shape)
    bad = [f"{form}: lanes {np.flatnonzero(g != w).tolist()[:4]}, e.g. {int(g[g != w][0]):#x} vs the GPU's "
           f"{int(w[g != w][0]):#x}" for form, g, w in zip(forms, got, want) if (g != w).any()]
    assert len(forms) >= len(F.simd_forms()) and not bad, f"{len(bad)} of {len(forms)} forms differ: " + "; ".join(bad[:5])


def test_the_measured_ptx_is_what_forms_makes():
    # each recorded kernel is forms.kernel of its recorded instructions, all of which forms.py makes
    doc = _doc()
    every = set(F.simd_forms()) | set(F.scalar_forms())
    for name, k in doc["kernels"].items():
        assert k["ptx"].endswith(F.kernel(name, k["forms"])) and set(k["forms"]) <= every


def test_the_probe_kernels_load_here():
    # what measure.py runs: k_scalar_refused is refused in one line naming the scalar video form
    # (k_simd and k_scalar run in the next test)
    with pytest.raises(LayoutsimError) as e:
        P.run(F.ptx("k_scalar_refused"), "k_scalar_refused", 1, F.THREADS, [*F.inputs(), np.zeros(F.THREADS, np.uint32)])
    assert "\n" not in str(e.value) and "scalar video instruction vadd.min is not modelled" in str(e.value)


def test_the_measurement_script_writes_what_the_replay_reads(tmp_path, monkeypatch):
    # measure.py with the GPU replaced by the executor (k_simd) and zeros (k_scalar): the file it
    # writes is the one the replay reads, and k_simd's words replay
    from gpu_check.video_probe import measure as M

    def fake(name, a, b, c):
        n = len(F.KERNELS[name]()) * F.THREADS
        if name == "k_scalar_refused":
            return np.zeros(n, np.uint32)
        return P.run(F.ptx(name), name, 1, F.THREADS, [a, b, c, np.zeros(n, np.uint32)]).buffers[3]
    monkeypatch.setattr(M, "measure_one", fake)
    monkeypatch.setattr(M, "gpu_name", lambda: "no GPU (test)")
    assert M.main(["--out", str(tmp_path)]) == 0
    monkeypatch.setattr(sys.modules[__name__], "DATA", tmp_path / "video.json.gz")
    test_the_executor_gives_the_h200s_words_for_every_modelled_form()
    test_the_measured_ptx_is_what_forms_makes()
