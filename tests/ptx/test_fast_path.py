"""The executor's fast paths against its reference (issue 26): every launch below runs twice, once
as it runs by default and once with LAYOUTSIM_PTX_REFERENCE=1 (scheduler.reference(): every step
through the scheduler's general loop), and the two runs must agree in everything they give:
the final buffers byte for byte, the report (per-line executions, bank and coalescing counts,
totals, notes, fidelity: Run.to_json without its wall time), the hotspot samples, the steps the
scheduler took, and the trace of memory accesses the handlers emitted (events.py), in order.

Launches: the project's kernel corpus (tests/data/kernels: divergence, barriers, shuffles,
atomics, wmma, mma+ldmatrix, cp.async, wgmma, TMA), the CuTe tutorials (tests/data/realworld),
the Triton corpus (tests/data/triton_corpus), all through gpu_check/kernel_corpus/launches.py.
The expected values are the reference path's own."""
import numpy as np
import pytest

import layoutsim.ptx as P
from gpu_check.kernel_corpus import launches as L
from layoutsim.ptx import costs, events, scheduler

LAUNCHES = [("kernels", n) for n in ("transpose_conflicts", "warp_reduce", "histogram_atomics", "softmax_f32",
                                     "cp_async_gemv", "mma_ldmatrix_swizzled", "wmma_f16_shared", "wgmma_ss_f16",
                                     "tma_wgmma_gemm", "byte_smem", "wgmma_rs_bf16")] + \
           [("cute", n) for n in ("cute_hgemm_sm80_tn", "cute_wgmma_sm90_tn", "cute_sgemm_2_nt")] + \
           [("triton", n) for n in ("fat_attn_bwd_preprocess", "fat_attn_fwd", "matmul_f16", "liger_cross_entropy",
                                    "fla_chunk_local_cumsum", "flaggems_sum_1", "softmax_rows")]


def _traced(s):
    """(Run, accesses in emission order, scheduler steps) of one launch."""
    trace, steps = [], []
    emit, run = events.Events.access, scheduler.Scheduler.run

    def access(self, rec):
        trace.append((rec.op, rec.space, rec.site, rec.width, rec.issued,
                      np.asarray(rec.threads).tobytes(),
                      None if rec.addresses is None else np.asarray(rec.addresses).tobytes(),
                      None if rec.flat is None else np.asarray(rec.flat).tobytes()))
        return emit(self, rec)

    def counted(self):
        steps.append(run(self))
        return steps[-1]
    events.Events.access, scheduler.Scheduler.run = access, counted
    try:
        r = P.run(s.ptx, s.kernel, s.grid, s.block, s.args, **s.options)
    finally:
        events.Events.access, scheduler.Scheduler.run = emit, run
    return r, trace, steps


def _report(r):
    j = r.to_json()
    j.pop("seconds")
    return j


@pytest.mark.parametrize("part,name", LAUNCHES, ids=[f"{p}/{n}" for p, n in LAUNCHES])
def test_fast_path_gives_the_reference_run(monkeypatch, part, name):
    s = L.setup(part, name)
    monkeypatch.delenv("LAYOUTSIM_PTX_REFERENCE", raising=False)
    fast, fast_trace, fast_steps = _traced(s)
    monkeypatch.setenv("LAYOUTSIM_PTX_REFERENCE", "1")
    ref, ref_trace, ref_steps = _traced(s)
    assert len(fast.buffers) == len(ref.buffers)
    for a, b in zip(fast.buffers, ref.buffers):
        assert (a is None and b is None) or (a.dtype == b.dtype and a.shape == b.shape and
                                             a.tobytes() == b.tobytes())
    assert _report(fast) == _report(ref)
    assert fast.samples == ref.samples
    assert fast_steps == ref_steps
    assert len(fast_trace) == len(ref_trace) and fast_trace == ref_trace


def test_reference_switch(monkeypatch):
    for value, ref in (("", False), ("0", False), ("1", True), ("yes", True)):
        monkeypatch.setenv("LAYOUTSIM_PTX_REFERENCE", value)
        assert scheduler.reference() is ref
    monkeypatch.delenv("LAYOUTSIM_PTX_REFERENCE")
    assert scheduler.reference() is False


@pytest.mark.parametrize("part,name", [("cute", "cute_hgemm_sm80_tn"), ("triton", "matmul_f16"),
                                       ("kernels", "softmax_f32")])
def test_a_launch_repeated_replays_its_costings(monkeypatch, part, name):
    """costs.py keeps a step's costing across launches of one program: the second launch replays
    every costing the first computed, and gives what costing each step afresh gives."""
    s = L.setup(part, name)
    monkeypatch.setattr(costs, "_STEPS", {})
    P.run(s.ptx, s.kernel, s.grid, s.block, s.args, **s.options)
    assert costs._STEPS                                  # the first launch kept its steps
    again = P.run(s.ptx, s.kernel, s.grid, s.block, s.args, **s.options)
    monkeypatch.setattr(costs, "STEP_THREADS", 0)        # no step kept: each costed afresh
    fresh = P.run(s.ptx, s.kernel, s.grid, s.block, s.args, **s.options)
    assert _report(again) == _report(fresh)
    assert again.samples == fresh.samples
    for a, b in zip(again.buffers, fresh.buffers):
        assert (a is None and b is None) or a.tobytes() == b.tobytes()
