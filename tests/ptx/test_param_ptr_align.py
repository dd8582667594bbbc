"""A kernel parameter's `.ptr .space .align N` is the alignment of the memory it points to (PTX ISA
5.1.6.1, "Kernel Function Parameter Attributes"), not the parameter's: Triton 3.x declares every
pointer `.param .u64 .ptr .global .align 1 p`, and after a .u32 parameter the pointer still sits
at the next 8-byte boundary (its own type's alignment), where ld.param.b64 reads it."""
import numpy as np

import layoutsim.ptx as ptx

PTX = """
.version 8.7
.target sm_90a
.address_size 64
.visible .entry k(
    .param .u32 k_n,
    .param .u64 .ptr .global .align 1 k_out
)
{
    .reg .b32 %r<2>;
    .reg .b64 %rd<2>;
    ld.param.b32 %r1, [k_n];
    ld.param.b64 %rd1, [k_out];
    st.global.b32 [%rd1], %r1;
    ret;
}
"""


def test_a_pointer_after_a_u32_is_8_byte_aligned():
    out = np.zeros(1, np.uint32)
    r = ptx.run(PTX, "k", 1, 1, [np.uint32(77), out], arch="sm_90a")
    assert r.buffers[1][0] == 77
