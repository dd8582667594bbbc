"""What Nsight Compute counted for TMA copies on the H200 (tests/data/descriptors/
counters_tma_sm_90.json, 2026-12-01; docs/smem.md "What Nsight Compute counts"): per copy, one TMA
instruction, shared-memory bank writes = the bytes the box spans in shared memory / 4 (the
model's TensorMap.bytes()), and no LSU shared-memory wavefront. A missing file fails."""
import json

import pytest

from h200_data import measured
from layoutsim.smem import TensorMap

LSU = ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
       "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_cmd_write.sum",
       "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma.sum")


@pytest.fixture(scope="module")
def counted():
    data = json.loads(measured("descriptors/counters_tma_sm_90.json", "docs/smem.md").read_text())
    boxes = {(x["label"], x["swizzle"]): x["box"] for x in data["launches"] if x["repeat"] == 1}
    return [(boxes[(o["label"], o["swizzle"])], o["per_op"]) for o in data["per_op"]]


def test_a_copy_writes_its_shared_bytes_once_and_no_lsu_wavefront(counted):
    assert len(counted) == 7
    for box, per in counted:
        t = TensorMap(box["box"], box["elem_bytes"], box["swizzle"])
        assert per["smsp__inst_executed_op_tma_ld.sum"]["value"] == 1
        assert per["sm__pipe_tma_cycles_active.sum"]["value"] == 2
        assert per["l1tex__data_bank_writes.sum"]["value"] == t.bytes() / 4, box
        for name in LSU:
            assert abs(per[name]["value"]) <= per[name]["noise"], (box, name)
