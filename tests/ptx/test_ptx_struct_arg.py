"""A by-value struct parameter that holds device pointers (layoutsim.ptx.StructArg: how a CuTe
Tensor is passed by value, its pointer first, then its layout's dynamic ints). The kernel below
reads the pointer and an int from the struct as nvcc's PTX does (ld.param at the field's offset)."""
import numpy as np
import pytest

import layoutsim.ptx as P
from layoutsim.errors import LayoutsimError

PTX = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .align 8 .b8 t[16], .param .u32 v)
{
    .reg .b64 %rd<4>;
    .reg .b32 %r<5>;
    ld.param.u64 %rd1, [t];
    ld.param.u32 %r1, [t+8];
    ld.param.u32 %r2, [v];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r3, %tid.x;
    mul.wide.u32 %rd3, %r3, 4;
    add.s64 %rd3, %rd2, %rd3;
    ld.global.u32 %r4, [%rd3];
    add.u32 %r2, %r2, %r1;
    add.u32 %r4, %r4, %r2;
    st.global.u32 [%rd3], %r4;
    ret;
}
"""


def struct(n, arr, size=16):
    return P.StructArg(np.int64(0).tobytes() + np.int32(n).tobytes() + bytes(size - 12), ((0, arr),))


def test_the_kernel_reads_the_arrays_address_and_the_ints_from_the_struct():
    a = np.arange(32, dtype=np.uint32)
    r = P.run(PTX, "k", 1, 32, [struct(5, a), np.uint32(7)])
    (out,) = r.buffers[0]
    assert out.tolist() == [i + 12 for i in range(32)] and a.tolist() == list(range(32))
    assert r.buffers[1] is None


def test_a_struct_of_the_wrong_size_or_a_pointer_outside_it_is_refused():
    a = np.zeros(32, np.uint32)
    with pytest.raises(LayoutsimError, match="StructArg of 12 bytes given; the parameter is 16 bytes"):
        P.run(PTX, "k", 1, 32, [struct(5, a, size=12), np.uint32(7)])
    with pytest.raises(LayoutsimError, match="8-byte field inside the 16-byte struct"):
        P.run(PTX, "k", 1, 32, [P.StructArg(bytes(16), ((12, a),)), np.uint32(7)])


# the same kernel reading its struct through the parameter's address in a register
REG_PTX = (PTX.replace(".reg .b64 %rd<4>;", ".reg .b64 %rd<5>;")
           .replace("ld.param.u64 %rd1, [t];", "mov.b64 %rd4, t;\n    ld.param.u64 %rd1, [%rd4];")
           .replace("[t+8]", "[%rd4+8]"))


def test_a_kernel_reads_its_struct_through_the_parameters_address_in_a_register():
    """PTX ISA 9.0 section 5.1.6.1: `mov.b64 %rd, t` in the entry takes the kernel parameter's
    .param address, and ld.param through that register reads the parameter (nvcc reads CUTLASS's
    1-KB Params struct this way)."""
    a = np.arange(32, dtype=np.uint32)
    assert "[%rd4+8]" in REG_PTX and "[t]" not in REG_PTX
    r = P.run(REG_PTX, "k", 1, 32, [struct(5, a), np.uint32(7)])
    assert r.buffers[0][0].tolist() == [i + 12 for i in range(32)]


def test_a_pointer_into_an_array_and_an_array_named_twice_are_one_allocation():
    """(offset, array, byte): the field holds the array's address plus the byte (CUB hands a kernel
    d_offsets and d_offsets + 1): the kernel's threads add 12 to the 32 words from that byte on."""
    a = np.arange(64, dtype=np.uint32)
    first = P.StructArg(np.int64(0).tobytes() + np.int32(5).tobytes() + bytes(4), ((0, a, 0),))
    r = P.run(PTX, "k", 1, 32, [first, np.uint32(7)])
    assert r.buffers[0][0].tolist() == [i + 12 for i in range(32)] + list(range(32, 64))
    shifted = P.StructArg(np.int64(0).tobytes() + np.int32(5).tobytes() + bytes(4), ((0, a, 128),))
    r = P.run(PTX, "k", 1, 32, [shifted, np.uint32(7)])
    assert r.buffers[0][0].tolist() == list(range(32)) + [i + 12 for i in range(32, 64)]


def test_a_pointer_past_its_array_is_refused():
    a = np.zeros(32, np.uint32)
    with pytest.raises(LayoutsimError, match="the byte inside the array"):
        P.run(PTX, "k", 1, 32, [P.StructArg(bytes(16), ((0, a, 129),)), np.uint32(7)])
