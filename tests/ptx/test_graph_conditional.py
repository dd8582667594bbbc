"""cudaGraphSetConditional called from device code (layoutsim/ptx/ops_sys.py). The PTX is written
here in the form nvcc 13.0 emits for `cudaGraphSetConditional(handle, value)` (-arch=sm_90: an
`.extern .func` with a .b64 and a .b32 parameter and `call.uni cudaGraphSetConditional, (param0,
param1)`, the declaration CUDA 13.0's cuda_device_runtime_api.h gives); the executor keeps the value
each handle was last set to and reports it (Run.graph_conditionals, the text report, --json)."""
import json

import numpy as np
import pytest

import layoutsim.ptx as P
from layoutsim.cli import main
from layoutsim.errors import LayoutsimError

HEAD = ".version 8.0\n.target sm_90\n.address_size 64\n"
DECL = """
.extern .func cudaGraphSetConditional
(
	.param .b64 cudaGraphSetConditional_param_0,
	.param .b32 cudaGraphSetConditional_param_1
)
;
"""
# thread `who` of each CTA sets handle h + ctaid.x to flags[ctaid.x] & 1 (as the CUDA samples' kernels do:
# `if (threadIdx.x == 0) cudaGraphSetConditional(handle, *flag & 1)`); who = -1: every thread sets h
KERNEL = HEAD + DECL + """
.visible .entry k(.param .u64 k_flags, .param .u64 k_h, .param .u32 k_who)
{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<8>;
	.reg .b64 	%rd<8>;
	ld.param.u64 	%rd1, [k_flags];
	ld.param.u64 	%rd2, [k_h];
	ld.param.u32 	%r5, [k_who];
	mov.u32 	%r3, %tid.x;
	mov.u32 	%r4, %ctaid.x;
	setp.eq.s32 	%p1, %r5, -1;
	@%p1 bra 	$L__all;
	setp.ne.s32 	%p1, %r3, %r5;
	@%p1 bra 	$L__done;
	cvt.u64.u32 	%rd4, %r4;
	add.s64 	%rd2, %rd2, %rd4;
$L__all:
	cvta.to.global.u64 	%rd3, %rd1;
	cvt.u64.u32 	%rd4, %r4;
	add.s64 	%rd3, %rd3, %rd4;
	ld.global.u8 	%r1, [%rd3];
	and.b32  	%r2, %r1, 1;
	{ // callseq 0, 0
	.param .b64 param0;
	st.param.b64 	[param0+0], %rd2;
	.param .b32 param1;
	st.param.b32 	[param1+0], %r2;
	call.uni 
	cudaGraphSetConditional, 
	(
	param0, 
	param1
	);
	} // callseq 0
$L__done:
	ret;
}
"""


def test_each_handle_keeps_the_value_the_kernel_set():
    flags = np.array([1, 0, 3], np.uint8)
    r = P.run(KERNEL, "k", 3, 64, [flags, np.uint64(0x7000), np.uint32(5)])
    assert r.graph_conditionals == [{"handle": 0x7000, "value": 1}, {"handle": 0x7001, "value": 0},
                                    {"handle": 0x7002, "value": 1}]
    assert not any("cudaGraphSetConditional" in n for n in r.notes)
    assert "cudaGraphSetConditional: handle 0x7001 set to 0" in r.format()
    assert r.to_json()["graph_conditionals"][2] == {"handle": 0x7002, "value": 1}
    # a kernel that sets none reports none
    assert P.run(KERNEL, "k", 1, 32, [flags, np.uint64(0x7000), np.uint32(40)]).graph_conditionals == []


def test_racing_setters_are_said_in_a_note():
    # every thread of two CTAs sets one handle: the runtime calls that undefined behaviour
    r = P.run(KERNEL, "k", 2, 32, [np.array([1, 0], np.uint8), np.uint64(0x10), np.int32(-1)])
    assert r.graph_conditionals == [{"handle": 0x10, "value": 0}]     # the last in the executor's order
    assert any("handle 0x10 set by more than one thread" in n and "undefined behaviour" in n for n in r.notes)


def test_the_cli_prints_the_values(tmp_path, capsys):
    f = tmp_path / "k.ptx"
    f.write_text(KERNEL)
    rc = main(["ptx", "run", str(f), "--kernel", "k", "--grid", "1", "--block", "32", "--arg", "ones:u8:1",
               "--arg", "u64:4096", "--arg", "u32:0", "--json"])
    out = capsys.readouterr().out
    assert rc == 0
    doc = json.loads(out)
    assert doc["graph_conditionals"] == [{"handle": 4096, "value": 1}]


def test_a_call_with_the_wrong_arguments_is_refused_in_one_line():
    src = HEAD + """
.extern .func cudaGraphSetConditional (.param .b64 p0);
.visible .entry k() {
  { .param .b64 param0; st.param.b64 [param0+0], 0;
  call.uni cudaGraphSetConditional, (param0); }
  ret;
}"""
    with pytest.raises(LayoutsimError, match=r"^line \d+: cudaGraphSetConditional takes 2 arguments \(handle, "
                                             r"value\) and returns nothing, not 1"):
        P.run(src, "k", 1, 32, [])
