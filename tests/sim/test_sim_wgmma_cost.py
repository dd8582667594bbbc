"""The simulator costs a wgmma's shared-memory operand reads as the H200 counts them
(tests/data/descriptors/counters_wgmma_sm_90.json, Nsight Compute, 2026-12-01): per wgmma,
l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma = operand bytes / 128 with no bank conflicts,
in every swizzle mode, K- and MN-major, A and B from shared memory or B alone; no ld.shared
wavefront; the total shared wavefront counter includes them. The file is part of the repository:
a missing file fails, it does not skip."""
import json

import numpy as np
import pytest

import layoutsim
from h200_data import measured as h200_file
from layoutsim.sim import Warpgroup
from layoutsim.smem import Descriptor

GMMA = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma.sum"


def _per_wgmma(launches, metric):
    """{(label, entry, swizzle, major): value per wgmma} from the repeat-1 and repeat-33 launches."""
    by = {}
    for x in launches:
        by.setdefault((x["label"], x["entry"], x["swizzle"], x["major"]), {})[x["repeat"]] = x["metrics"][metric]
    return {k: (v[33] - v[1]) / 32 for k, v in by.items() if set(v) == {1, 33}}


@pytest.fixture(scope="module")
def measured():
    data = json.loads(h200_file("descriptors/counters_wgmma_sm_90.json", "layoutsim.sim.costing.wgmma_cost").read_text())
    return [x for x in data["launches"] if x["entry"]]           # the wgmma probes (TMA launches have none)


def _simulate(entry, swizzle, major, a_from_smem):
    g = Warpgroup("sm_90")
    m, n, k = layoutsim.get(entry).shape
    b = Descriptor.dense(0x4000, n, k, 16, swizzle, major)
    if a_from_smem:
        a = Descriptor.dense(0x400, m, k, 16, swizzle, "K")
    else:
        a = "a"
        g.set_fragment(entry, "A", "a", np.zeros((m, k), np.uint16))
    g.wgmma(entry, "d", a, b, scale_d=False, trans_b=major == "MN")
    return g.trace[-1], g.trace.totals()


def test_gmma_wavefronts_are_what_the_h200_counted(measured):
    gmma = _per_wgmma(measured, GMMA)
    conflicts = _per_wgmma(measured, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_gmma.sum")
    assert len(gmma) == 10                                       # 8 RS (4 modes x K/MN) + 2 SS
    for (label, entry, swizzle, major), want in gmma.items():
        entry_, total = _simulate(entry, swizzle, major, a_from_smem="SS" in label)
        assert entry_.wavefronts == want and entry_.ideal == want, (label, swizzle, major)
        assert entry_.conflicts == conflicts[(label, entry, swizzle, major)] == 0
        assert total["wavefronts"] == want


def test_wgmma_reads_are_not_ld_shared_but_are_in_the_total(measured):
    ld = _per_wgmma(measured, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum")
    total = _per_wgmma(measured, "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum")
    gmma = _per_wgmma(measured, GMMA)
    assert set(ld.values()) == {0}
    # the total also carries the fill's store wavefronts, which vary from launch to launch by a few
    for key, g in gmma.items():
        assert abs(total[key] - g) <= 4, (key, total[key], g)
