"""Tensor maps the kernel builds (Triton's tl.make_tensor_descriptor): tensormap.replace sets the
fields of a zero-filled 128-byte object in shared memory, tensormap.cp_fenceproxy copies it to global
memory, and cp.async.bulk.tensor loads a box through it (layoutsim/ptx/tensormap.py, ops_async.py).

Expected values: the PTX ISA 9.0, 9.7.9.29 (tensormap.replace: the rank field holds the rank minus
1, the element types numbered .u8 0 ... .f32 7 ... .tf32.ftz 12, .b4x16 13 and up the packed
sub-byte types) and 9.7.9.25 with cuda.h's cuTensorMapEncodeTiled for the box a load brings
(element (x0, x1) at globalAddress + x0 * 4 + x1 * globalStrides[0]): numpy slices here. Triton
3.6.0 emits these encodings (elemtype 6 for f16, 10 for bf16, 9 for f64, rank 1 for 2-D)."""
import numpy as np
import pytest

import layoutsim.ptx as P
from layoutsim.errors import LayoutsimError
from layoutsim.ptx import tensormap as TM

# one warp: the map at smem+0 (zeroed by the warp), built by thread 0 for a 2-D f32 tensor of
# 8 rows x 16 columns (box 8 x 4, stride 64 bytes, element type from p_et), copied to p_scratch,
# then a box at coordinates (4, 2) lands at smem+1024 and the warp writes it to p_out
SRC = """.version 8.3
.target sm_90a
.address_size 64
.extern .shared .align 1024 .b8 smem[];
.visible .entry build_and_load(.param .u64 p_t, .param .u64 p_scratch, .param .u64 p_out, .param .u32 p_et)
{
  .reg .b32 %r<24>;
  .reg .b64 %rd<12>;
  .reg .pred %p<4>;
  ld.param.u64 %rd1, [p_t];
  ld.param.u64 %rd2, [p_scratch];
  ld.param.u64 %rd3, [p_out];
  ld.param.u32 %r20, [p_et];
  mov.u32 %r1, %tid.x;
  setp.eq.u32 %p1, %r1, 0;
  mov.u32 %r2, smem;
  cvt.u64.u32 %rd4, %r2;
  mov.b32 %r3, 0;
  shl.b32 %r4, %r1, 2;
  add.s32 %r5, %r2, %r4;
  st.shared.b32 [%r5], %r3;
  bar.warp.sync -1;
  mov.b32 %r6, 8;
  mov.b32 %r7, 4;
  mov.b32 %r8, 16;
  mov.b32 %r9, 1;
  mov.b64 %rd5, 64;
  @%p1 tensormap.replace.tile.global_address.shared::cta.b1024.b64 [%rd4], %rd1;
  @%p1 tensormap.replace.tile.rank.shared::cta.b1024.b32 [%rd4], 1;
  @%p1 tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%rd4], 0, %r6;
  @%p1 tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%rd4], 1, %r7;
  @%p1 tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%rd4], 0, %r8;
  @%p1 tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%rd4], 1, %r6;
  @%p1 tensormap.replace.tile.global_stride.shared::cta.b1024.b64 [%rd4], 0, %rd5;
  @%p1 tensormap.replace.tile.element_stride.shared::cta.b1024.b32 [%rd4], 0, %r9;
  @%p1 tensormap.replace.tile.element_stride.shared::cta.b1024.b32 [%rd4], 1, %r9;
  @%p1 tensormap.replace.tile.elemtype.shared::cta.b1024.b32 [%rd4], %r20;
  @%p1 tensormap.replace.tile.interleave_layout.shared::cta.b1024.b32 [%rd4], 0;
  @%p1 tensormap.replace.tile.swizzle_mode.shared::cta.b1024.b32 [%rd4], 0;
  @%p1 tensormap.replace.tile.fill_mode.shared::cta.b1024.b32 [%rd4], 0;
  tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%rd2], [%rd4], 128;
  fence.proxy.tensormap::generic.acquire.gpu [%rd2], 128;
  add.s32 %r10, %r2, 1024;
  add.s32 %r13, %r2, 2048;
  @%p1 mbarrier.init.shared.b64 [%r13], 1;
  bar.warp.sync -1;
  mov.b32 %r11, 4;
  mov.b32 %r12, 2;
  @%p1 mbarrier.arrive.expect_tx.shared.b64 %rd6, [%r13], 128;
  @%p1 cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r10], [%rd2, {%r11, %r12}], [%r13];
WAIT:
  mbarrier.try_wait.parity.shared.b64 %p2, [%r13], 0;
  @!%p2 bra WAIT;
  add.s32 %r14, %r10, %r4;
  ld.shared.b32 %r15, [%r14];
  cvt.u64.u32 %rd7, %r4;
  add.s64 %rd8, %rd3, %rd7;
  st.global.b32 [%rd8], %r15;
  ret;
}
"""


def _run(elemtype, t):
    return P.run(SRC, "build_and_load", 1, 32, [t, np.zeros(128, np.uint8), np.zeros(32, t.dtype),
                                                np.uint32(elemtype)], arch="sm_90a", shared_bytes=4096)


def test_a_map_built_in_shared_memory_loads_the_box_cuda_describes():
    t = np.random.default_rng(3).standard_normal((8, 16)).astype(np.float32)
    r = _run(7, t)                                              # .f32
    assert np.array_equal(r.buffers[2].reshape(4, 8), t[2:6, 4:12])
    scratch = r.buffers[1].tobytes()                             # the copy holds the same map
    assert scratch.startswith(TM.DEVICE_MAGIC)
    assert TM.DeviceMap(scratch, "x").dims.tolist() == [16, 8]


def test_other_element_types_of_the_same_width_load_the_same_bytes():
    t = np.arange(128, dtype=np.uint32).reshape(8, 16)
    for code in (2, 3, 11):                                     # .u32, .s32, .tf32: 4-byte elements
        assert np.array_equal(_run(code, t).buffers[2].reshape(4, 8), t[2:6, 4:12])


def test_a_packed_sub_byte_element_type_is_refused():
    with pytest.raises(LayoutsimError, match="element type 13"):
        _run(13, np.zeros((8, 16), np.float32))


def test_replace_encodes_each_field_and_checks_its_ordinal():
    raw = TM.replace(bytes(128), "rank", None, 2, "t")
    raw = TM.replace(raw, "box_dim", 2, 7, "t")
    f = TM._fields(raw)
    assert f["rank"] == [2] and f["box_dim"] == [0, 0, 7, 0, 0]
    with pytest.raises(LayoutsimError, match="ordinal"):
        TM.replace(raw, "rank", 0, 1, "t")
    with pytest.raises(LayoutsimError, match="ordinal"):
        TM.replace(raw, "global_stride", 4, 16, "t")
    with pytest.raises(LayoutsimError, match="TensorMapArg"):
        TM.replace(TM.handle(0), "global_address", None, 0, "t")
