"""The constructs real kernels use (issue 24): WARP_SZ and the special registers, printf (vprintf),
assert (__assertfail), griddepcontrol, bmsk.clamp, recursion, function pointers, a warp whose
access spans two buffers. Kernels written here; expected values from the PTX ISA 9.0 and the CUDA
C++ Programming Guide (sections named at each test), the C library's printf for the formats."""
import math

import numpy as np
import pytest

import layoutsim.ptx as P
from layoutsim.errors import LayoutsimError
from layoutsim.ptx import printf as PF

HEAD = ".version 8.0\n.target sm_90\n.address_size 64\n"


def test_warp_sz_and_special_registers():
    # PTX ISA 4.3 (predefined identifier WARP_SZ = the warp size, 32); 10.3 %laneid, 10.6 %nwarpid,
    # 10.30-10.31 %dynamic_smem_size / %total_smem_size (static + dynamic bytes of the CTA)
    src = HEAD + """
.visible .entry k(.param .u64 out) {
  .reg .b32 %r<12>; .reg .b64 %rd<4>;
  .shared .align 4 .b8 st[100];
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd2, %r1, 24;
  add.s64 %rd3, %rd1, %rd2;
  mov.u32 %r2, WARP_SZ;
  mov.u32 %r3, %dynamic_smem_size;
  mov.u32 %r4, %total_smem_size;
  mov.u32 %r5, %lanemask_lt;
  mov.u32 %r6, %warpid;
  mov.u32 %r7, %reserved_smem_offset_0;
  st.global.v2.u32 [%rd3], {%r2, %r3};
  st.global.v2.u32 [%rd3+8], {%r4, %r5};
  st.global.v2.u32 [%rd3+16], {%r6, %r7};
  ret;
}"""
    r = P.run(src, "k", 1, 64, [np.zeros(64 * 6, np.uint32)], shared_bytes=0)
    o = r.buffers[0].reshape(64, 6)
    # 100 static bytes: %total_smem_size rounds to the 128-byte allocation unit (archs.py; an H100 read 384
    # for 100 + 256: tests/data/constructs)
    assert (o[:, 0] == 32).all() and (o[:, 1] == 0).all() and (o[:, 2] == 128).all()
    lane = np.arange(64) % 32
    assert np.array_equal(o[:, 3], ((1 << lane) - 1).astype(np.uint32))
    assert np.array_equal(o[:, 4], np.arange(64) // 32)


def _printf_buffer(*args):
    """An argument buffer as nvcc lays it out: each value at its natural alignment."""
    out = bytearray()
    for v in args:
        raw = v.tobytes()
        out += b"\0" * (-len(out) % len(raw)) + raw
    return bytes(out)


@pytest.mark.parametrize("fmt, args, want", [
    # what glibc's printf prints for the same format and values (C11 7.21.6.1)
    (b"%d %i %u", (np.int32(-5), np.int32(7), np.uint32(4294967295)), b"-5 7 4294967295"),
    (b"%5d|%-5d|%05d|%+d|% d", tuple(np.int32(x) for x in (42, 42, 42, 42, 42)), b"   42|42   |00042|+42| 42"),
    (b"%x %X %#x %o %#o %.0d", (np.int32(-1), np.int32(255), np.int32(255), np.int32(8), np.int32(8),
                                np.int32(0)), b"ffffffff FF 0xff 10 010 "),
    (b"%lld %llu %ld %lx", (np.int64(-1 << 40), np.uint64(1 << 63), np.int64(-3), np.int64(-1)),
     b"-1099511627776 9223372036854775808 -3 ffffffffffffffff"),
    (b"%hd %hhu", (np.int32(70000), np.int32(257)), b"4464 1"),
    (b"%f %.2f %e %g %G %10.3f", (np.float64(1.5), np.float64(2.345), np.float64(12345.678), np.float64(1e-5),
                                   np.float64(1e20), np.float64(-3.14159)),
     b"1.500000 2.35 1.234568e+04 1e-05 1E+20     -3.142"),
    (b"%f %f %5f %F", (np.float64(math.inf), -np.float64(math.nan), np.float64(-math.inf), np.float64(math.nan)),
     b"inf -nan  -inf NAN"),
    (b"%c%c %*d %.*f", (np.int32(72), np.int32(105), np.int32(4), np.int32(7), np.int32(1), np.float64(0.25)),
     b"Hi    7 0.2"),
    (b"%p %p 100%%", (np.uint64(0x7f0000001000), np.uint64(0)), b"0x7f0000001000 (nil) 100%"),
])
def test_printf_formats_like_the_c_library(fmt, args, want):
    buf = _printf_buffer(*args)
    got = PF.format_bytes(fmt, lambda off, n: buf[off:off + n], lambda a, lim: b"")
    assert got == want


def test_printf_refuses_what_it_does_not_format():
    with pytest.raises(LayoutsimError, match="%n"):
        PF.parse(b"x%n")


PRINTF = HEAD + """
.extern .func (.param .b32 func_retval0) vprintf (.param .b64 vprintf_param_0, .param .b64 vprintf_param_1);
.global .align 1 .b8 fmt[23] = {116,61,37,100,32,37,115,32,37,53,46,49,102,32,37,99,32,37,108,108,100,10};
.global .align 1 .b8 word[3] = {111,107};
.visible .entry k(.param .u64 out) {
  .local .align 8 .b8 depot[32];
  .reg .b32 %r<6>; .reg .b64 %rd<12>; .reg .f64 %fd<2>;
  mov.u64 %rd1, depot;
  cvta.local.u64 %rd2, %rd1;
  mov.u32 %r1, %tid.x;
  st.local.u32 [%rd1], %r1;
  mov.u64 %rd3, word;
  cvta.global.u64 %rd4, %rd3;
  st.local.u64 [%rd1+8], %rd4;
  cvt.rn.f64.u32 %fd1, %r1;
  st.local.f64 [%rd1+16], %fd1;
  add.u32 %r2, %r1, 65;
  st.local.u32 [%rd1+24], %r2;
  mov.u64 %rd5, fmt;
  cvta.global.u64 %rd6, %rd5;
  {
  .param .b64 param0;
  st.param.b64 [param0+0], %rd6;
  .param .b64 param1;
  st.param.b64 [param1+0], %rd2;
  .param .b32 retval0;
  call.uni (retval0), vprintf, (param0, param1);
  ld.param.b32 %r3, [retval0+0];
  }
  ld.param.u64 %rd7, [out];
  mul.wide.u32 %rd8, %r1, 4;
  add.s64 %rd9, %rd7, %rd8;
  st.global.u32 [%rd9], %r3;
  ret;
}"""


def test_printf_prints_every_thread_in_warp_then_lane_order():
    # "t=%d %s %5.1f %c %lld\n": five arguments, but the buffer above holds four (the %lld reads the
    # next aligned 8 bytes: beyond the depot's 32 bytes, a fault); so the kernel's format without %lld
    src = PRINTF.replace("fmt[23] = {116,61,37,100,32,37,115,32,37,53,46,49,102,32,37,99,32,37,108,108,100,10}",
                         "fmt[19] = {116,61,37,100,32,37,115,32,37,53,46,49,102,32,37,99,10}")
    r = P.run(src, "k", 2, 40, [np.zeros(40, np.int32)])
    want = "".join(f"t={t} ok {float(t):5.1f} {chr(65 + t)}\n" for _ in range(2) for t in range(40))
    assert r.printf == want
    # CUDA C++ Programming Guide, 'Formatted Output': printf returns the number of arguments parsed
    assert (r.buffers[0] == 4).all()
    with pytest.raises(P.PtxFault, match="outside the thread's local memory"):
        P.run(PRINTF, "k", 1, 1, [np.zeros(1, np.int32)])


ASSERT = HEAD + """
.extern .func __assertfail (.param .b64 a0, .param .b64 a1, .param .b32 a2, .param .b64 a3, .param .b64 a4);
.global .align 1 .b8 msg[7] = {116,32,60,32,51,48};
.global .align 1 .b8 file[5] = {107,46,99,117};
.global .align 1 .b8 func[14] = {118,111,105,100,32,107,40,105,110,116,32,42,41};
.visible .entry k(.param .u64 out) {
  .reg .pred %p<2>; .reg .b32 %r<3>; .reg .b64 %rd<10>;
  mov.u32 %r1, %tid.x;
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], 7;
  setp.lt.u32 %p1, %r1, 30;
  @%p1 bra DONE;
  mov.u64 %rd4, msg; cvta.global.u64 %rd5, %rd4;
  mov.u64 %rd6, file; cvta.global.u64 %rd7, %rd6;
  mov.u64 %rd8, func; cvta.global.u64 %rd9, %rd8;
  {
  .param .b64 param0; st.param.b64 [param0+0], %rd5;
  .param .b64 param1; st.param.b64 [param1+0], %rd7;
  .param .b32 param2; st.param.b32 [param2+0], 12;
  .param .b64 param3; st.param.b64 [param3+0], %rd9;
  .param .b64 param4; st.param.b64 [param4+0], 1;
  call.uni __assertfail, (param0, param1, param2, param3, param4);
  }
DONE:
  ret;
}"""


def test_assert_stops_the_launch_with_the_runtime_line():
    # CUDA C++ Programming Guide, 'Assertion': every failing thread prints
    # FILE:LINE: FUNCTION: block: [x,y,z], thread: [x,y,z] Assertion `EXPR` failed.; the kernel traps
    with pytest.raises(P.PtxFault) as e:
        P.run(ASSERT, "k", (1, 2), 32, [np.zeros(64, np.int32)])
    f = e.value.fault
    assert f["kind"] == "assert" and f["thread"] == [30, 0, 0] and f["cta"] == [0, 0, 0]
    line = "k.cu:12: void k(int *): block: [0,0,0], thread: [30,0,0] Assertion `t < 30` failed."
    assert f["message"].endswith(line)
    # both CTAs reach the assert together (one batch): every failing thread's line, CTA then thread order
    assert e.value.run.assertions == [line.replace("[0,0,0], thread: [30", f"[0,{c},0], thread: [{t}")
                                      for c in (0, 1) for t in (30, 31)]
    assert (e.value.run.buffers[0][:32] == 7).all()
    r = P.run(ASSERT, "k", 1, 30, [np.zeros(30, np.int32)])        # no thread fails: a normal run
    assert r.fault is None and r.assertions == []


def test_griddepcontrol_in_a_single_launch():
    # PTX ISA 9.7.13 griddepcontrol: wait blocks until the prerequisite grids completed; one launch
    # has none, so it returns at once; launch_dependents has no dependent grid to start
    src = HEAD + """
.visible .entry k(.param .u64 out) {
  .reg .b32 %r<2>; .reg .b64 %rd<4>;
  griddepcontrol.wait;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r1;
  griddepcontrol.launch_dependents;
  ret;
}"""
    r = P.run(src, "k", 1, 32, [np.zeros(32, np.uint32)])
    assert np.array_equal(r.buffers[0], np.arange(32))
    with pytest.raises(LayoutsimError, match="griddepcontrol does not take .sync"):
        P.run(src.replace("griddepcontrol.wait", "griddepcontrol.sync"), "k", 1, 32, [np.zeros(32, np.uint32)])


RECURSE = HEAD + """
.func (.param .b32 ret0) down(.param .b32 n) {
  .reg .pred %p<2>; .reg .b32 %r<6>;
  .local .align 4 .b8 keep[4];
  ld.param.b32 %r1, [n];
  st.local.u32 [keep], %r1;
  setp.eq.s32 %p1, %r1, 0;
  @%p1 bra BASE;
  add.s32 %r2, %r1, -1;
  {
  .param .b32 a; st.param.b32 [a+0], %r2;
  .param .b32 rv;
  call.uni (rv), down, (a);
  ld.param.b32 %r3, [rv+0];
  }
  ld.local.u32 %r4, [keep];
  mul.lo.s32 %r5, %r3, 3;
  add.s32 %r5, %r5, %r4;
  st.param.b32 [ret0+0], %r5;
  ret;
BASE:
  st.param.b32 [ret0+0], 1;
  ret;
}
.visible .entry k(.param .u64 out, .param .u32 extra) {
  .reg .b32 %r<4>; .reg .b64 %rd<4>;
  mov.u32 %r1, %tid.x;
  ld.param.u32 %r2, [extra];
  add.u32 %r1, %r1, %r2;
  {
  .param .b32 a; st.param.b32 [a+0], %r1;
  .param .b32 rv;
  call.uni (rv), down, (a);
  ld.param.b32 %r3, [rv+0];
  }
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r3;
  ret;
}"""


def test_recursion_keeps_each_activation():
    # PTX ISA 9.7.12.5 call (recursion allowed): down(n) = 3 * down(n - 1) + n, down(0) = 1; the
    # .local `keep` and the registers of each activation survive the inner call; lanes recurse
    # to different depths (divergence)
    def down(n):
        return 1 if n == 0 else (3 * down(n - 1) + n) & 0xFFFFFFFF
    r = P.run(RECURSE, "k", 1, 32, [np.zeros(32, np.uint32), np.uint32(0)])
    assert np.array_equal(r.buffers[0], [down(t) for t in range(32)])
    with pytest.raises(P.PtxFault) as e:
        P.run(RECURSE, "k", 1, 32, [np.zeros(32, np.uint32), np.uint32(2000)])
    assert e.value.fault["kind"] == "stack_overflow" and "1024 nested activations of down" in str(e.value)


FNPTR = HEAD + """
.func (.param .b32 r) inc(.param .b32 x) { .reg .b32 %r<3>; ld.param.b32 %r1, [x]; add.s32 %r2, %r1, 1;
  st.param.b32 [r+0], %r2; ret; }
.func (.param .b32 r) twice(.param .b32 x) { .reg .b32 %r<3>; ld.param.b32 %r1, [x]; shl.b32 %r2, %r1, 1;
  st.param.b32 [r+0], %r2; ret; }
.global .align 8 .u64 table[2] = {inc, twice};
.visible .entry k(.param .u64 out, .param .u32 bad) {
  .reg .b32 %r<5>; .reg .b64 %rd<8>;
  mov.u32 %r1, %tid.x;
  and.b32 %r2, %r1, 1;
  mul.wide.u32 %rd1, %r2, 8;
  mov.u64 %rd2, table;
  add.s64 %rd3, %rd2, %rd1;
  ld.global.u64 %rd4, [%rd3];
  ld.param.u32 %r4, [bad];
  cvt.u64.u32 %rd7, %r4;
  add.s64 %rd4, %rd4, %rd7;
  {
  .param .b32 a; st.param.b32 [a+0], %r1;
  .param .b32 rv;
  proto : .callprototype (.param .b32 _) _ (.param .b32 _);
  call (rv), %rd4, (a), proto;
  ld.param.b32 %r3, [rv+0];
  }
  ld.param.u64 %rd5, [out];
  mul.wide.u32 %rd6, %r1, 4;
  add.s64 %rd5, %rd5, %rd6;
  st.global.u32 [%rd5], %r3;
  ret;
}"""


def test_function_pointers_call_the_function_the_register_holds():
    # PTX ISA 9.7.12.5 call through a register with a .callprototype; the table's initializer
    # holds the functions' addresses (5.4.4 'Initializers': a function name is its address)
    r = P.run(FNPTR, "k", 1, 32, [np.zeros(32, np.uint32), np.uint32(0)])
    t = np.arange(32)
    assert np.array_equal(r.buffers[0], np.where(t % 2 == 0, t + 1, 2 * t))
    with pytest.raises(P.PtxFault) as e:
        P.run(FNPTR, "k", 1, 32, [np.zeros(32, np.uint32), np.uint32(4)])
    assert e.value.fault["kind"] == "invalid_call"


def test_one_warp_across_two_buffers_is_no_crash():
    # a warp whose lanes 0-15 write buffer A and 16-31 buffer B: each access lies inside one buffer
    # (state.py's memory model), so it runs; a lane past the end of A is an out-of-bounds fault
    src = HEAD + """
.visible .entry k(.param .u64 a, .param .u64 b, .param .u32 n) {
  .reg .pred %p<2>; .reg .b32 %r<4>; .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [a]; ld.param.u64 %rd2, [b]; ld.param.u32 %r3, [n];
  mov.u32 %r1, %tid.x;
  setp.lt.u32 %p1, %r1, %r3;
  selp.b64 %rd3, %rd1, %rd2, %p1;
  mul.wide.u32 %rd4, %r1, 4;
  add.s64 %rd5, %rd3, %rd4;
  st.global.u32 [%rd5], %r1;
  ret;
}"""
    r = P.run(src, "k", 1, 32, [np.zeros(32, np.uint32), np.zeros(32, np.uint32), np.uint32(16)])
    assert np.array_equal(r.buffers[0][:16], np.arange(16)) and np.array_equal(r.buffers[1][16:], np.arange(16, 32))
    with pytest.raises(P.PtxFault) as e:
        P.run(src, "k", 1, 32, [np.zeros(16, np.uint32), np.zeros(32, np.uint32), np.uint32(20)])
    assert e.value.fault["kind"] == "out_of_bounds" and e.value.fault["thread"] == [16, 0, 0]


def test_device_launch_calls_are_refused_in_one_line():
    src = HEAD + """
.extern .func (.param .b32 func_retval0) cudaGraphLaunch_ptsz (.param .b64 p0, .param .b64 p1);
.visible .entry k() {
  .reg .b32 %r<2>;
  { .param .b64 param0; st.param.b64 [param0+0], 0; .param .b64 param1; st.param.b64 [param1+0], 0;
  .param .b32 retval0;
  call.uni (retval0), cudaGraphLaunch_ptsz, (param0, param1);
  ld.param.b32 %r1, [retval0+0]; }
  ret;
}"""
    with pytest.raises(LayoutsimError, match=r"^line \d+: a device-side graph call \(cudaGraphLaunch_ptsz\) is not"):
        P.run(src, "k", 1, 32, [])


def test_line_tagging_keeps_local_frames_and_multi_line_calls_whole():
    # the line-tagged PTX given to ptxas (lowering.py): nvcc's `.local` stack frame is no `.loc`,
    # and a call spread over lines gets its .loc before its first line only (ptxas: "Parsing error
    # near '.loc'" otherwise, and costing fell back to per-PTX-instruction)
    from layoutsim.ptx import lowering as L
    tagged = L.with_ptx_lines(PRINTF.replace("call.uni (retval0), vprintf, (param0, param1);",
                                             "call.uni (retval0),\n\tvprintf,\n\t(\n\tparam0,\n\tparam1\n\t);"))
    assert ".local .align 8 .b8 depot[32];" in tagged
    call = tagged[tagged.index("call.uni"):tagged.index(");")]
    assert ".loc" not in call
    if L.find_ptxas() and L.find_nvdisasm():
        rows, _ = L.lower(tagged, "sm_90", keep=None)
        assert any(r["op"] == "call.uni" for r in rows["k"])
