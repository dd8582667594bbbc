"""A kernel that faults under `ptx run --json` prints the report with a `fault` object (kind,
thread, CTA, warp, PTX and CUDA line, address, buffer, message) and exits with code 2, the one
line on stderr; the text mode's line has the same facts, and PtxFault.fault is the same dict."""
import json

import numpy as np
import pytest

from report_kernels import KERNEL, TEXT, line_of

import layoutsim.ptx as P
from layoutsim.cli import main

STORE = line_of("oob_store", "st.global")
LOAD = line_of("misaligned_v4", "ld.global.v4")
BARRIER = line_of("half_barrier", "bar.sync")


def run_json(capsys, name, *argv):
    rc = main(["ptx", "run", KERNEL, "--kernel", name, *argv, "--json"])
    out, err = capsys.readouterr()
    return rc, json.loads(out), err


def test_out_of_bounds_store(capsys):
    # 2 CTAs of 64 threads store out[i] for i = 0..127 into 100 words: i = 100 is CTA 1, thread 36
    rc, doc, err = run_json(capsys, "oob_store", "--grid", "2", "--block", "64", "--arg", "zeros:u32:100")
    f = doc["fault"]
    assert rc == 2 and err.count("\n") == 1 and f["message"] in err
    assert f["kind"] == "out_of_bounds" and f["space"] == "global"
    assert f["thread"] == [36, 0, 0] and f["cta"] == [1, 0, 0] and (f["warp"], f["lane"]) == (1, 4)
    assert f["ptx_line"] == STORE and f["ptx"] == "st.global.u32 [%rd3], %r4"
    assert f["cuda"] == {"file": "/src/report.cu", "line": 5}
    b = f["buffer"]
    assert b["name"] == "argument 0" and b["arg"] == 0 and b["bytes"] == 400 and b["offset"] == 400
    assert f["address"] == b["start"] + 400
    assert doc["kernel"] == "oob_store" and doc["outputs"] == []        # the report so far, with the fault


def test_misaligned_vector_load(capsys):
    # thread 5 reads 16 bytes at in + 5*16 + 8
    rc, doc, err = run_json(capsys, "misaligned_v4", "--grid", "1", "--block", "32",
                            "--arg", "zeros:f32:200", "--arg", "zeros:f32:32")
    f = doc["fault"]
    assert rc == 2 and f["kind"] == "misaligned"
    assert f["thread"] == [5, 0, 0] and f["cta"] == [0, 0, 0] and f["warp"] == 0
    assert f["ptx_line"] == LOAD and f["ptx"].startswith("ld.global.v4.f32") and f["cuda"]["line"] == 11
    assert f["buffer"]["arg"] == 0 and f["buffer"]["offset"] == 88 and f["buffer"]["bytes"] == 800
    assert f["address"] == f["buffer"]["start"] + 88
    # the text mode's one line says the same: line, CUDA line, thread, address, buffer
    assert main(["ptx", "run", KERNEL, "--kernel", "misaligned_v4", "--grid", "1", "--block", "32",
                 "--arg", "zeros:f32:200", "--arg", "zeros:f32:32"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    for fact in (f"line {LOAD}", "report.cu:11", "thread (5, 0, 0)", f"{f['address']:#x}", "+88 bytes",
                 "argument 0", "--arg 0", "misaligned"):
        assert fact in err


def test_barrier_deadlock(capsys):
    # warps 0-1 exit, warps 2-3 wait at bar.sync 0, 128 for four warps
    rc, doc, err = run_json(capsys, "half_barrier", "--grid", "1", "--block", "128", "--arg", "zeros:u32:4")
    f = doc["fault"]
    assert rc == 2 and f["kind"] == "deadlock" and f["message"].startswith("deadlock: 64 thread(s)")
    assert f["thread"] == [64, 0, 0] and f["cta"] == [0, 0, 0] and f["warp"] == 2
    assert f["ptx_line"] == BARRIER and f["ptx"] == "bar.sync 0, 128" and f["cuda"]["line"] == 18
    assert f["address"] is None and f["buffer"] is None
    assert [(w["wait"], w["threads"], w["ptx_line"]) for w in f["waits"]] == [("barrier", 64, BARRIER)]
    assert f"line {BARRIER} (report.cu:18)" in err


def test_python_fault_and_partial_run():
    with pytest.raises(P.PtxFault) as e:
        P.run(TEXT, "oob_store", 2, 64, [np.zeros(100, np.uint32)])
    f = e.value.fault
    assert f["kind"] == "out_of_bounds" and f["thread"] == [36, 0, 0] and f["message"] == str(e.value)
    assert e.value.run.fault == f and e.value.run.to_json()["fault"] == f
    with pytest.raises(P.PtxFault) as e:
        P.run(TEXT, "half_barrier", 1, 128, [np.zeros(4, np.uint32)])
    assert e.value.fault["kind"] == "deadlock" and e.value.run.fault["warp"] == 2
