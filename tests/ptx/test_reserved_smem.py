"""The system's reserved shared memory and where a kernel's own shared memory begins.

Expected values: ptxas 13.0's SASS for gpu_check/constructs/smem_probe.cu (-arch=sm_90: the first
static __shared__ array is `MOV R5, 0x400` plus the cluster rank at bit 24; %reserved_smem_offset_begin
and _cap are the constants 0 and 0x400; -arch=sm_80: the array is at 0 and the reserved offsets come
from SR_SMEMSZ and driver words) and an H100's reading of %reserved_smem_offset_end (288,
tests/data/constructs/constructs.json, launch "sregs")."""
import numpy as np
import pytest

import layoutsim.ptx as P
from layoutsim.errors import LayoutsimError

PTX = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<3>;
  .shared .align 4 .b8 st[40];
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd2, %rd1;
  mov.u32 %r1, st;
  st.shared.u32 [st], 5;
  mov.u32 %r2, %reserved_smem_offset_1;
  st.shared.u32 [%r2], 77;
  ld.shared.u32 %r3, [st];
  mov.u32 %r4, %reserved_smem_offset_end;
  mov.u32 %r5, %reserved_smem_offset_cap;
  mov.u32 %r6, %aggr_smem_size;
  st.global.u32 [%rd2], %r1;
  st.global.u32 [%rd2+4], %r3;
  st.global.u32 [%rd2+8], %r4;
  st.global.u32 [%rd2+12], %r5;
  st.global.u32 [%rd2+16], %r6;
  ret;
}
"""


def test_sm90_shared_memory_begins_after_the_reserved_kib():
    out = np.zeros(5, np.uint32)
    r = P.run(PTX, "k", 1, 32, [out], arch="sm_90")
    st_addr, st_value, end, cap, aggr = r.buffers[0].tolist()
    assert st_addr == 0x400 and cap == 1024 and end == 288
    assert st_value == 5            # a write at %reserved_smem_offset_1 (cooperative groups' scratch) is not st
    assert aggr == 40               # the kernel's own bytes, the reserved KiB not counted


def test_reading_reserved_offsets_before_sm90_is_refused():
    with pytest.raises(LayoutsimError, match=r"%reserved_smem_offset_1 on sm_80 is not modelled"):
        P.run(PTX.replace(".target sm_90", ".target sm_80"), "k", 1, 32, [np.zeros(5, np.uint32)], arch="sm_80")
