"""--initcheck: a read of shared memory no thread has written is reported per PTX line (first
thread, CTA, address, count) in the text report, the JSON `initcheck` key and Run.initcheck;
a kernel that stores, synchronizes, then loads reports nothing; without it nothing is tracked."""
import json

import numpy as np
import pytest

import layoutsim.ptx as P
from layoutsim.cli import main

PTX = r""".version 8.0
.target sm_90
.address_size 64

.shared .align 4 .b8 tile[512];

.visible .entry early_read(.param .u64 out)
{
	.reg .b32 %r<8>;
	.reg .b64 %rd<4>;
	.loc 1 4 0
	ld.param.u64 %rd1, [out];
	cvta.to.global.u64 %rd1, %rd1;
	mov.u32 %r1, %tid.x;
	shl.b32 %r2, %r1, 2;
	mov.u32 %r3, tile;
	add.s32 %r4, %r3, %r2;
	.loc 1 6 5
	ld.shared.u32 %r5, [%r4+64];
	.loc 1 7 5
	st.shared.u32 [%r4], %r1;
	mul.wide.u32 %rd2, %r1, 4;
	add.s64 %rd3, %rd1, %rd2;
	st.global.u32 [%rd3], %r5;
	ret;
}

.visible .entry synced(.param .u64 out, .param .u32 shift)
{
	.reg .b32 %r<8>;
	.reg .b64 %rd<4>;
	.loc 1 11 0
	ld.param.u64 %rd1, [out];
	ld.param.u32 %r6, [shift];
	cvta.to.global.u64 %rd1, %rd1;
	mov.u32 %r1, %tid.x;
	shl.b32 %r2, %r1, 2;
	mov.u32 %r3, tile;
	add.s32 %r4, %r3, %r2;
	.loc 1 13 5
	st.shared.u32 [%r4], %r1;
	.loc 1 14 5
	bar.sync 0;
	shl.b32 %r7, %r6, 2;
	add.s32 %r4, %r4, %r7;
	.loc 1 15 5
	ld.shared.u32 %r5, [%r4];
	mul.wide.u32 %rd2, %r1, 4;
	add.s64 %rd3, %rd1, %rd2;
	st.global.u32 [%rd3], %r5;
	ret;
}
	.file	1 "/src/init.cu"
"""
EARLY_LOAD, SYNCED_LOAD = 19, 47        # the PTX lines of the loads


@pytest.fixture
def kernel(tmp_path):
    path = tmp_path / "init.ptx"
    path.write_text(PTX)
    return str(path)


def test_read_before_any_store_is_reported(capsys, kernel):
    rc = main(["ptx", "run", kernel, "--kernel", "early_read", "--grid", "2", "--block", "64",
               "--arg", "zeros:u32:64", "--initcheck", "--json"])
    doc = json.loads(capsys.readouterr()[0])
    assert rc == 0
    [rec] = doc["initcheck"]
    assert rec["ptx_line"] == EARLY_LOAD and rec["ptx"] == "ld.shared.u32 %r5, [%r4+64]"
    assert rec["cuda"] == {"file": "/src/init.cu", "line": 6} and rec["space"] == "shared"
    assert rec["thread"] == [0, 0, 0] and rec["cta"] == [0, 0, 0] and rec["address"] == 64 and rec["size"] == 4
    assert rec["count"] == 128                  # every thread of both CTAs
    rc = main(["ptx", "run", kernel, "--kernel", "early_read", "--grid", "2", "--block", "64",
               "--arg", "zeros:u32:64", "--initcheck", "--quiet"])
    out = capsys.readouterr()[0]
    assert ("initcheck: Uninitialized __shared__ memory read of size 4 bytes at init.cu:6 (PTX line 19: "
            "ld.shared.u32 %r5, [%r4+64]) by thread (0,0,0) in block (0,0,0), address 0x40; 128 such read(s)") in out


def test_store_sync_load_reports_nothing(capsys, kernel):
    rc = main(["ptx", "run", kernel, "--kernel", "synced", "--grid", "1", "--block", "64",
               "--arg", "zeros:u32:64", "--arg", "u32:0", "--initcheck", "--quiet"])
    out = capsys.readouterr()[0]
    assert rc == 0 and "initcheck: no reads of uninitialized shared memory" in out
    r = P.run(PTX, "synced", 1, 64, [np.zeros(64, np.uint32), np.uint32(0)], initcheck=True)
    assert r.initcheck == [] and np.array_equal(r.buffers[0], np.arange(64))


def test_one_word_past_what_was_written():
    # thread t reads word t + 1: thread 63 (warp 1, lane 31) reads word 64, which nobody wrote
    r = P.run(PTX, "synced", 1, 64, [np.zeros(64, np.uint32), np.uint32(1)], initcheck=True)
    [rec] = r.initcheck
    assert rec["ptx_line"] == SYNCED_LOAD and rec["cuda"]["line"] == 15
    assert rec["thread"] == [63, 0, 0] and (rec["warp"], rec["lane"]) == (1, 31)
    assert rec["address"] == 256 and rec["count"] == 1


def test_off_by_default():
    r = P.run(PTX, "early_read", 1, 64, [np.zeros(64, np.uint32)])
    assert r.initcheck is None and r.to_json()["initcheck"] is None
    assert "initcheck" not in r.format()
