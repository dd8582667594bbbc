"""In-kernel malloc/free (CUDA C++ Programming Guide, 'Dynamic Global Memory Allocation and
Operations'): a device heap of cudaLimitMallocHeapSize's default, 8 MiB ('Heap Memory
Allocation'); every pointer aligned to 16 bytes; NULL when the heap cannot hold the request; free
makes the memory available again; free(NULL) does nothing. PTX in the form nvcc 13.0 emits for
malloc/free (`.extern .func (.param .b64 func_retval0) malloc (.param .b64 ...)`), written here."""
import numpy as np
import pytest

import layoutsim.ptx as P
from layoutsim.ptx import malloc as M

HEAD = """.version 8.0
.target sm_90
.address_size 64
.extern .func (.param .b64 func_retval0) malloc (.param .b64 malloc_param_0);
.extern .func free (.param .b64 free_param_0);
"""
# out[tid] = p = malloc(n); if (p) *p = tid; if (tid & free_mask) free(p); then q = malloc(n2), out2[tid] = q
KERNEL = HEAD + """
.visible .entry k(.param .u64 out, .param .u64 out2, .param .u64 n, .param .u32 fmask, .param .u64 n2) {
  .reg .pred %p<4>; .reg .b32 %r<4>; .reg .b64 %rd<12>;
  ld.param.u64 %rd2, [out]; ld.param.u64 %rd3, [n]; ld.param.u32 %r3, [fmask]; ld.param.u64 %rd9, [out2];
  ld.param.u64 %rd10, [n2];
  { .param .b64 param0; st.param.b64 [param0+0], %rd3; .param .b64 retval0;
  call.uni (retval0), malloc, (param0);
  ld.param.b64 %rd1, [retval0+0]; }
  mov.u32 %r1, %tid.x;
  setp.eq.s64 %p1, %rd1, 0;
  @%p1 bra SKIP;
  st.u32 [%rd1], %r1;
SKIP:
  cvta.to.global.u64 %rd4, %rd2;
  mul.wide.u32 %rd5, %r1, 8;
  add.s64 %rd6, %rd4, %rd5;
  st.global.u64 [%rd6], %rd1;
  and.b32 %r2, %r1, %r3;
  setp.eq.b32 %p2, %r2, 0;
  @%p2 bra KEEP;
  { .param .b64 param0; st.param.b64 [param0+0], %rd1;
  call.uni free, (param0); }
KEEP:
  bar.sync 0;
  { .param .b64 param0; st.param.b64 [param0+0], %rd10; .param .b64 retval0;
  call.uni (retval0), malloc, (param0);
  ld.param.b64 %rd7, [retval0+0]; }
  cvta.to.global.u64 %rd4, %rd9;
  add.s64 %rd8, %rd4, %rd5;
  st.global.u64 [%rd8], %rd7;
  ret;
}"""


def _run(threads, n, fmask, n2):
    r = P.run(KERNEL, "k", 1, threads, [np.zeros(threads, np.uint64), np.zeros(threads, np.uint64),
                                        np.uint64(n), np.uint32(fmask), np.uint64(n2)])
    return r.buffers[0], r.buffers[1]


def test_malloc_gives_distinct_16_byte_aligned_blocks_the_kernel_can_use():
    p, _ = _run(64, 20, 0, 0)
    assert (p != 0).all() and (p % 16 == 0).all()
    s = np.sort(p.astype(np.int64))
    assert (np.diff(s) >= 20).all()                 # no two blocks overlap (20 bytes each)


def test_malloc_returns_null_when_the_8_mib_heap_is_full():
    assert M.HEAP_BYTES == 8 << 20
    p, _ = _run(32, 3 << 20, 0, 0)                  # 3 MiB each: two fit in 8 MiB, the third does not
    assert (p[:2] != 0).all() and (p[2:] == 0).all()


def test_free_makes_the_memory_available_again():
    # 4 MiB blocks fill the heap; the odd threads free theirs (one: thread 1), then every thread asks
    # for 4 MiB again: exactly one request (the first, thread 0) gets the freed block
    p, q = _run(32, 4 << 20, 1, 4 << 20)
    assert (p[:2] != 0).all() and (p[2:] == 0).all()
    assert q[0] == p[1] and (q[1:] == 0).all()


def test_freeing_twice_is_a_fault():
    src = HEAD + """
.visible .entry k(.param .u64 n) {
  .reg .b64 %rd<3>;
  ld.param.u64 %rd2, [n];
  { .param .b64 param0; st.param.b64 [param0+0], %rd2; .param .b64 retval0;
  call.uni (retval0), malloc, (param0);
  ld.param.b64 %rd1, [retval0+0]; }
  { .param .b64 param0; st.param.b64 [param0+0], %rd1; call.uni free, (param0); }
  { .param .b64 param0; st.param.b64 [param0+0], %rd1; call.uni free, (param0); }
  ret;
}"""
    with pytest.raises(P.PtxFault) as e:
        P.run(src, "k", 1, 32, [np.uint64(8)])
    assert e.value.fault["kind"] == "invalid_free" and e.value.fault["thread"] == [0, 0, 0]
    P.run(src.replace("[param0+0], %rd1; call.uni free, (param0); }\n  ret", "[param0+0], 0; call.uni free, (param0); }\n  ret"),
          "k", 1, 32, [np.uint64(8)])       # free(NULL) does nothing


def test_the_allocator_joins_freed_neighbours():
    h = M.DeviceHeap(1 << 20, 256)
    a, b, c = h.malloc(64), h.malloc(64), h.malloc(64)
    assert (a, b, c) == (1 << 20, (1 << 20) + 64, (1 << 20) + 128) and h.malloc(128) == 0
    assert h.free(a) and h.free(c) and h.free(b) and not h.free(b)
    assert h.free_list == [(1 << 20, 256)] and h.malloc(256) == 1 << 20
