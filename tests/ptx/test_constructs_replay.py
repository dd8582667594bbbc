"""Replay of the H200 measurement of issue 24's constructs (gpu_check/constructs/measure.py):
the executor runs the same PTX and launches and must give the same buffers, the same printf
output and the same assert lines. Skipped while tests/data/constructs/constructs.json is absent."""
import json
from pathlib import Path

import numpy as np
import pytest

import layoutsim.ptx as P

DATA = Path(__file__).resolve().parents[1] / "data" / "constructs" / "constructs.json"


def _doc():
    if not DATA.exists():
        pytest.skip(f"{DATA.relative_to(DATA.parents[2])} is absent: run `python -m gpu_check.constructs.measure "
                    f"--out DIR` on the H200 and commit DIR/constructs.json there")
    return json.loads(DATA.read_text())


def _launches():
    if not DATA.exists():
        return ["absent"]
    return [x["name"] for x in json.loads(DATA.read_text())["launches"]]


def _args(spec):
    out = []
    for kind, dt, v in spec:
        if kind == "scalar":
            out.append(np.dtype(dt).type(v))
        else:
            out.append(np.zeros(v, dt) if kind == "out" else np.asarray(v, dt))
    return out


@pytest.mark.parametrize("name", _launches())
def test_replays_the_h200(name):
    doc = _doc()
    run = {x["name"]: x for x in doc["launches"]}[name]
    args = _args(run["args"])
    outs = [i for i, a in enumerate(run["args"]) if a[0] == "out"]
    try:
        r = P.run(doc["ptx"], run["kernel"], tuple(run["grid"]), tuple(run["block"]), args,
                  shared_bytes=run["shared_bytes"])
        fault = None
    except P.PtxFault as e:
        r, fault = e.run, e.fault
    if run["error"]:                            # the GPU's launch failed: an assert
        assert fault is not None and fault["kind"] == "assert", run["error"]
        gpu_lines = [ln for ln in run["stderr"].splitlines() + run["stdout"].splitlines() if "Assertion" in ln]
        assert sorted(gpu_lines) == sorted(ln for ln in r.assertions) or \
            set(r.assertions) <= set(gpu_lines), (gpu_lines, r.assertions)
        return
    assert fault is None
    for k, i in enumerate(outs):
        want = np.asarray(run["outputs"][k], run["args"][i][1])
        got = r.buffers[i].view(want.dtype)
        if name == "sregs":          # nine words a thread; two are not the model's to claim:
            keep = np.ones(9, bool)  # [4] %reserved_smem_offset_end (288 on the GPU: not modelled,
            keep[[4, 8]] = False     # docs/ptx.md); [8] reads st[t % 25], which three threads race to write
            got, want = got.reshape(-1, 9)[:, keep], want.reshape(-1, 9)[:, keep]
        assert np.array_equal(got, want), name
    if name == "printf":
        # the GPU orders lines across warps as it likes: the same lines, and each warp's in lane order
        assert sorted(r.printf.splitlines()) == sorted(run["stdout"].splitlines())
