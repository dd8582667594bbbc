"""The H200 kernel corpus replayed through the executor (issue 10's contract): every case's sm_90
PTX run by `layoutsim.ptx.run` on its stored inputs must give every buffer bit for bit as the H200
did (<case>.h200.npz), the launch's shared-memory wavefront totals exactly as Nsight Compute
counted them there (h200.json: l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld/st.sum, all CTAs),
and its global requests and sectors per op (l1tex__t_requests/sectors_pipe_lsu_mem_global_op_ld/
st/atom/red.sum). Missing data is an error.

One shared quantity differs and is compared as the two measured numbers instead
(gpu_check.kernel_corpus.check.UNMODELLED, which says why): wgmma_rs_bf16's op_ld, 512 in the
model, 616 on the H200.

Global quantities h200.json records that the model does not produce, so not compared:
  * ..._global_op_ldgsts_cache_access (requests, sectors and their lookups): 0 in every case (the
    corpus's only cp.async, cp_async_gemv, is .cg: LDGSTS.BYPASS, which ncu counts under op_ld);
  * the L1 lookup split ..._lookup_hit / _lookup_miss of op_ld/atom/red (a cache-state quantity;
    e.g. cp_async_gemv op_ld: 15872 hit, 8704 miss of 24576 sectors).
"""
import json
from functools import lru_cache

import numpy as np
import pytest

from gpu_check.kernel_corpus import check as CHECK, corpus as C, ncu as N

MANIFEST = {e["name"]: e for e in C.load_manifest()}
H200 = json.loads((C.DATA / "h200.json").read_text())["cases"]


def measured(name):
    """The case's H200 record; a case listed in the manifest without one (corpus.pending) fails."""
    if name not in H200 or not (C.DATA / C.h200_file(name)).is_file():
        pytest.fail(f"{name} awaits its H200 run: {C.MEASURE}")
    return H200[name]


@lru_cache(maxsize=None)
def replay(name):
    from layoutsim.ptx import run
    e = MANIFEST[name]
    ptx = (C.DATA / C.run_ptx(e)).read_text()
    return run(ptx, e["kernel"], tuple(e["grid"]), tuple(e["block"]), C.launch_args(e, C.load_inputs(e)),
               arch="sm_90", shared_bytes=e["shared_bytes"])


@pytest.mark.parametrize("name", sorted(MANIFEST))
def test_every_buffer_is_the_h200s_bit_for_bit(name):
    e = MANIFEST[name]
    measured(name)
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


# case -> {"ld"|"st": (the model's count, ncu's)}: the documented differences
UNMODELLED = {case: {("ld" if k == N.SHARED_LD else "st"): v for k, v in d.items()}
              for case, d in CHECK.UNMODELLED.items()}


@pytest.mark.parametrize("name", sorted(MANIFEST))
def test_shared_wavefront_totals_are_ncus(name):
    ncu = measured(name)["ncu"]
    want = {"ld": ncu[N.SHARED_LD], "st": ncu[N.SHARED_ST]}
    got = dict(replay(name).shared_wavefronts)
    for total, (model, gpu) in UNMODELLED.get(name, {}).items():
        assert (got[total], want[total]) == (model, gpu), f"{name} {total}: the documented difference changed"
        got[total] = want[total] = None
    assert got == want


@pytest.mark.parametrize("name", sorted(MANIFEST))
def test_gmma_wavefronts_are_ncus(name):
    """wgmma's shared operand reads: l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma.sum (0
    where the kernel has no wgmma)."""
    ncu = measured(name)["ncu"]
    assert replay(name).gmma_wavefronts == ncu.get("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma.sum", 0)


@pytest.mark.parametrize("name", sorted(MANIFEST))
def test_global_totals_are_ncus(name):
    ncu = measured(name)["ncu"]
    got = replay(name).global_totals or {}          # None: no LSU global access (TMA-only kernels)
    for op in N.GLOBAL_REQUESTS:
        want = {"requests": ncu[N.GLOBAL_REQUESTS[op]], "sectors": ncu[N.GLOBAL_SECTORS[op]]}
        assert got.get(op, {"requests": 0, "sectors": 0}) == want, op
