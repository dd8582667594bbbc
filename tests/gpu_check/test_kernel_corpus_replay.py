"""The H200 kernel corpus replayed through the executor (issue 10's contract): every case's sm_90
PTX run by `layoutsim.ptx.run` on its stored inputs must give every buffer bit for bit as the H200
did (<case>.h200.npz) and the launch's shared-memory wavefront totals exactly as Nsight Compute
counted them there (h200.json: l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld/st.sum, all CTAs).
Missing data is an error."""
import json
from functools import lru_cache

import numpy as np
import pytest

from gpu_check.kernel_corpus import corpus as C, ncu as N

MANIFEST = {e["name"]: e for e in C.load_manifest()}
H200 = json.loads((C.DATA / "h200.json").read_text())["cases"]


@lru_cache(maxsize=None)
def replay(name):
    from layoutsim.ptx import run
    e = MANIFEST[name]
    ptx = (C.DATA / e["ptx"]["sm_90"]).read_text()
    return run(ptx, e["kernel"], tuple(e["grid"]), tuple(e["block"]), C.launch_args(e, C.load_inputs(e)),
               arch="sm_90", shared_bytes=e["shared_bytes"])


@pytest.mark.parametrize("name", sorted(MANIFEST))
def test_every_buffer_is_the_h200s_bit_for_bit(name):
    e = MANIFEST[name]
    want = C.load_arrays(C.DATA / C.h200_file(name), e)
    got = replay(name).buffers
    assert len(got) == len(e["args"])
    for i, (a, w, g) in enumerate(zip(e["args"], want, got)):
        if a["kind"] != "array":
            assert g is None
            continue
        assert g.shape == w.shape and g.dtype == w.dtype, f"arg{i}"
        raw = np.dtype(f"u{w.dtype.itemsize}")
        wv, gv = np.ascontiguousarray(w).view(raw).ravel(), np.ascontiguousarray(g).view(raw).ravel()
        bad = np.flatnonzero(wv != gv)
        assert bad.size == 0, (f"arg{i} ({a['dtype']}{a['shape']}): {bad.size} of {wv.size} elements differ, first at "
                               f"{np.unravel_index(bad[0], w.shape)}: H200 {wv[bad[0]]:#x}, model {gv[bad[0]]:#x}")


@pytest.mark.parametrize("name", sorted(MANIFEST))
def test_shared_wavefront_totals_are_ncus(name):
    ncu = H200[name]["ncu"]
    assert replay(name).shared_wavefronts == {"ld": ncu[N.SHARED_LD], "st": ncu[N.SHARED_ST]}
