"""A kernel that faults under `ptx run --json` prints the report with a `fault` object (kind,
thread, CTA, warp, PTX and CUDA line, address, buffer, message) and exits with code 2, the one
line on stderr; the text mode's line has the same facts, and PtxFault.fault is the same dict."""
import json

import numpy as np
import pytest

import layoutsim.ptx as P
from layoutsim.cli import main

PTX = r""".version 8.0
.target sm_90
.address_size 64

.visible .entry oob_store(.param .u64 out)
{
	.reg .b32 %r<5>;
	.reg .b64 %rd<4>;
	.loc 1 3 0
	ld.param.u64 %rd1, [out];
	cvta.to.global.u64 %rd1, %rd1;
	mov.u32 %r1, %tid.x;
	mov.u32 %r2, %ctaid.x;
	mov.u32 %r3, %ntid.x;
	mad.lo.s32 %r4, %r2, %r3, %r1;
	mul.wide.u32 %rd2, %r4, 4;
	add.s64 %rd3, %rd1, %rd2;
	.loc 1 5 5
	st.global.u32 [%rd3], %r4;
	ret;
}

.visible .entry misaligned_v4(.param .u64 in, .param .u64 out)
{
	.reg .pred %p<2>;
	.reg .f32 %f<6>;
	.reg .b32 %r<4>;
	.reg .b64 %rd<8>;
	.loc 1 9 0
	ld.param.u64 %rd1, [in];
	ld.param.u64 %rd2, [out];
	cvta.to.global.u64 %rd1, %rd1;
	cvta.to.global.u64 %rd2, %rd2;
	mov.u32 %r1, %tid.x;
	setp.eq.u32 %p1, %r1, 5;
	selp.u32 %r2, 8, 0, %p1;
	mul.wide.u32 %rd3, %r1, 16;
	cvt.u64.u32 %rd4, %r2;
	add.s64 %rd5, %rd3, %rd4;
	add.s64 %rd6, %rd1, %rd5;
	.loc 1 11 5
	ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd6];
	add.f32 %f5, %f1, %f2;
	mul.wide.u32 %rd7, %r1, 4;
	add.s64 %rd7, %rd2, %rd7;
	.loc 1 12 5
	st.global.f32 [%rd7], %f5;
	ret;
}

.visible .entry half_barrier(.param .u64 out)
{
	.reg .pred %p<2>;
	.reg .b32 %r<3>;
	.reg .b64 %rd<4>;
	.loc 1 16 0
	mov.u32 %r1, %tid.x;
	setp.lt.u32 %p1, %r1, 64;
	@%p1 bra DONE;
	.loc 1 18 9
	bar.sync 0, 128;
DONE:
	ret;
}
	.file	1 "/src/faults.cu"
"""


@pytest.fixture
def kernel(tmp_path):
    path = tmp_path / "faults.ptx"
    path.write_text(PTX)
    return str(path)


def run_json(capsys, kernel, name, *argv):
    rc = main(["ptx", "run", kernel, "--kernel", name, *argv, "--json"])
    out, err = capsys.readouterr()
    return rc, json.loads(out), err


def test_out_of_bounds_store(capsys, kernel):
    # 2 CTAs of 64 threads store out[i] for i = 0..127 into 100 words: i = 100 is CTA 1, thread 36
    rc, doc, err = run_json(capsys, kernel, "oob_store", "--grid", "2", "--block", "64", "--arg", "zeros:u32:100")
    f = doc["fault"]
    assert rc == 2 and err.count("\n") == 1 and f["message"] in err
    assert f["kind"] == "out_of_bounds" and f["space"] == "global"
    assert f["thread"] == [36, 0, 0] and f["cta"] == [1, 0, 0] and (f["warp"], f["lane"]) == (1, 4)
    assert f["ptx_line"] == 19 and f["ptx"] == "st.global.u32 [%rd3], %r4"
    assert f["cuda"] == {"file": "/src/faults.cu", "line": 5}
    b = f["buffer"]
    assert b["name"] == "argument 0" and b["arg"] == 0 and b["bytes"] == 400 and b["offset"] == 400
    assert f["address"] == b["start"] + 400
    assert doc["kernel"] == "oob_store" and doc["outputs"] == []        # the report so far, with the fault


def test_misaligned_vector_load(capsys, kernel):
    # thread 5 reads 16 bytes at in + 5*16 + 8
    rc, doc, err = run_json(capsys, kernel, "misaligned_v4", "--grid", "1", "--block", "32",
                            "--arg", "zeros:f32:200", "--arg", "zeros:f32:32")
    f = doc["fault"]
    assert rc == 2 and f["kind"] == "misaligned"
    assert f["thread"] == [5, 0, 0] and f["cta"] == [0, 0, 0] and f["warp"] == 0
    assert f["ptx_line"] == 42 and f["ptx"].startswith("ld.global.v4.f32") and f["cuda"]["line"] == 11
    assert f["buffer"]["arg"] == 0 and f["buffer"]["offset"] == 88 and f["buffer"]["bytes"] == 800
    assert f["address"] == f["buffer"]["start"] + 88
    # the text mode's one line says the same: line, CUDA line, thread, address, buffer
    assert main(["ptx", "run", kernel, "--kernel", "misaligned_v4", "--grid", "1", "--block", "32",
                 "--arg", "zeros:f32:200", "--arg", "zeros:f32:32"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    for fact in ("line 42", "faults.cu:11", "thread (5, 0, 0)", f"{f['address']:#x}", "+88 bytes",
                 "argument 0", "--arg 0", "misaligned"):
        assert fact in err


def test_barrier_deadlock(capsys, kernel):
    # warps 0-1 exit, warps 2-3 wait at bar.sync 0, 128 for four warps
    rc, doc, err = run_json(capsys, kernel, "half_barrier", "--grid", "1", "--block", "128", "--arg", "zeros:u32:4")
    f = doc["fault"]
    assert rc == 2 and f["kind"] == "deadlock" and f["message"].startswith("deadlock: 64 thread(s)")
    assert f["thread"] == [64, 0, 0] and f["cta"] == [0, 0, 0] and f["warp"] == 2
    assert f["ptx_line"] == 61 and f["ptx"] == "bar.sync 0, 128" and f["cuda"]["line"] == 18
    assert f["address"] is None and f["buffer"] is None
    assert [(w["wait"], w["threads"], w["ptx_line"]) for w in f["waits"]] == [("barrier", 64, 61)]
    assert "line 61 (faults.cu:18)" in err


def test_python_fault_and_partial_run():
    with pytest.raises(P.PtxFault) as e:
        P.run(PTX, "oob_store", 2, 64, [np.zeros(100, np.uint32)])
    f = e.value.fault
    assert f["kind"] == "out_of_bounds" and f["thread"] == [36, 0, 0] and f["message"] == str(e.value)
    assert e.value.run.fault == f and e.value.run.to_json()["fault"] == f
    with pytest.raises(P.PtxFault) as e:
        P.run(PTX, "half_barrier", 1, 128, [np.zeros(4, np.uint32)])
    assert e.value.fault["kind"] == "deadlock" and e.value.run.fault["warp"] == 2
