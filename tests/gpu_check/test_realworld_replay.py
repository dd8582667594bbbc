"""The real-world corpus (tests/data/realworld: CUTLASS 4.2's CuTe tutorials from the pip package
nvidia-cutlass==4.2.0.0, launched as their host programs launch them; gpu_check/realworld/cases.py)
replayed through the executor against its H200 measurement (h200.json, <case>.h200.npz, written by
`python -m gpu_check.realworld.measure --out OUT` on the H200):

  * every buffer bit for bit as the H200 left it;
  * the launch's shared ld/st wavefronts and global ld/st sectors (Nsight Compute's
    l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld/st.sum, l1tex__t_sectors_pipe_lsu_mem_global_op_ld/st.sum,
    all CTAs) inside the range of the five ncu runs h200.json's ncu_runs keeps (min..max over every
    value: some totals vary from run to run).

While the H200 data is absent, each of these skips, naming the command that makes it. The corpus's
own files (manifest, PTX, inputs, the package's licence) are checked always.
"""
import json
from functools import lru_cache

import numpy as np
import pytest

from gpu_check.kernel_corpus import corpus as C
from gpu_check.kernel_corpus.parts import TOTALS, run_totals
from gpu_check.realworld.build import DATA, LICENSE
from tool_needs import need

MANIFEST = {e["name"]: e for e in C.load_manifest(DATA)} if (DATA / C.MANIFEST).is_file() else {}
MEASURE = ("python -m gpu_check.realworld.measure --out OUT on the H200, then copy OUT/h200.json and "
           "OUT/*.h200.npz into tests/data/realworld/")
# case -> {total: why}: a launch whose model total is outside the H200's range, explained (none yet)
OUTSIDE = {}


def check_files(data, manifest, licence, build):
    """A corpus folder complete and within bounds, its source's licence beside the PTX."""
    assert manifest, f"{data}/manifest.json is missing: {build}"
    assert C.validate(data) == []
    assert (data / licence).is_file(), "the source's licence is kept beside its PTX"


def test_the_corpus_files_are_complete():
    check_files(DATA, MANIFEST, LICENSE, "python -m gpu_check.realworld.build")
    for e in MANIFEST.values():
        assert e["package"] == "nvidia-cutlass==4.2.0.0" and e["source"].startswith("examples/")


def measured(name, data=DATA, measure=MEASURE):
    """The case's record in data/h200.json; a skip naming `measure` while it is absent."""
    h200 = data / "h200.json"
    if not h200.is_file():
        pytest.skip(f"no H200 measurement of {data.name} yet: {measure}")
    cases = json.loads(h200.read_text())["cases"]
    if name not in cases or not (data / C.h200_file(name)).is_file():
        pytest.skip(f"{name} awaits its H200 run: {measure}")
    return cases[name]


def ncu_values(name, data=DATA, measure=MEASURE):
    """{total name: [every measured value]} over the ncu runs (the first run alone if only one)."""
    doc = json.loads((data / "h200.json").read_text())
    runs = doc.get("ncu_runs", {}).get("cases", {}).get(name) or [measured(name, data, measure)["ncu"]]
    runs = [r for r in runs if r]
    if not runs:
        pytest.skip(f"{name}: ncu gave no totals on the H200 ({doc.get('problems', [])[:1]})")
    return {k: [int(r[m]) for r in runs if r.get(m) is not None] for k, m in TOTALS.items()}


@lru_cache(maxsize=None)
def manifest(data):
    return {e["name"]: e for e in C.load_manifest(data)}


@lru_cache(maxsize=None)
def replay(name, data=DATA):
    from layoutsim.ptx import run
    e = manifest(data)[name]
    ptx = (data / C.run_ptx(e)).read_text()
    inputs = C.load_inputs(e, data)
    return run(ptx, e["kernel"], tuple(e["grid"]), tuple(e["block"]), C.launch_args(e, inputs), **C.run_options(e, inputs))


def check_bit_for_bit(name, data=DATA, measure=MEASURE):
    """Every array argument of the replay byte for byte as the H200 left it (a skip until measured)."""
    e = manifest(data)[name]
    measured(name, data, measure)
    want = C.load_arrays(data / C.h200_file(name), e)
    run = replay(name, data)
    got = C.buffers_by_arg(e, run.buffers)
    if not run.fidelity["contraction"]["available"]:
        if any(a["kind"] == "array" and not a.get("symbol") and w.tobytes() != g.tobytes()
               for a, w, g in zip(e["args"], want, got)):
            need("ptxas")       # which mul+adds ptxas fused into FFMA decides these bits (contract.py)
    for i, (a, w, g) in enumerate(zip(e["args"], want, got)):
        if a["kind"] != "array" or a.get("symbol"):       # a symbol's bytes are not read back
            continue
        raw = np.dtype(f"u{w.dtype.itemsize}")
        wv, gv = np.ascontiguousarray(w).view(raw).ravel(), np.ascontiguousarray(g).view(raw).ravel()
        bad = np.flatnonzero(wv != gv)
        assert bad.size == 0, (f"arg{i} ({a['dtype']}{a['shape']}): {bad.size} of {wv.size} elements differ, first at "
                               f"{np.unravel_index(bad[0], w.shape)}: H200 {wv[bad[0]]:#x}, model {gv[bad[0]]:#x}")


def check_costs(name, data=DATA, measure=MEASURE, explained=OUTSIDE):
    """The replay's totals inside the H200 runs' min..max, except those `explained` names."""
    measured(name, data, measure)
    values = ncu_values(name, data, measure)
    got = run_totals(replay(name, data))
    outside = []
    for total, vs in values.items():
        if not vs or total in explained.get(name, {}):
            continue
        if not min(vs) <= got[total] <= max(vs):
            outside.append(f"{total}: model {got[total]}, H200 {min(vs)}..{max(vs)} over {len(vs)} runs")
    assert not outside, f"{name}: " + "; ".join(outside)


@pytest.mark.parametrize("name", sorted(MANIFEST))
def test_every_buffer_is_the_h200s_bit_for_bit(name):
    check_bit_for_bit(name)


@pytest.mark.parametrize("name", sorted(MANIFEST))
def test_costs_are_inside_the_h200s_range(name):
    check_costs(name)
