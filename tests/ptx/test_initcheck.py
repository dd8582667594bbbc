"""--initcheck: a read of shared memory no thread has written is reported per PTX line (first
thread, CTA, address, count) in the text report, the JSON `initcheck` key and Run.initcheck;
a kernel that stores, synchronizes, then loads reports nothing; without it nothing is tracked."""
import json

import numpy as np
from report_kernels import KERNEL, TEXT, line_of

import layoutsim.ptx as P
from layoutsim import archs
from layoutsim.cli import main

EARLY_LOAD, SYNCED_LOAD = line_of("early_read", "ld.shared"), line_of("synced", "ld.shared")
# shared addresses as the GPU's: the kernel's array begins after the reserved KiB (archs.user_smem_base)
S0 = archs.user_smem_base("sm_90")


def test_read_before_any_store_is_reported(capsys):
    rc = main(["ptx", "run", KERNEL, "--kernel", "early_read", "--grid", "2", "--block", "64",
               "--arg", "zeros:u32:64", "--initcheck", "--json"])
    doc = json.loads(capsys.readouterr()[0])
    assert rc == 0
    [rec] = doc["initcheck"]
    assert rec["ptx_line"] == EARLY_LOAD and rec["ptx"] == "ld.shared.u32 %r5, [%r4+64]"
    assert rec["cuda"] == {"file": "/src/report.cu", "line": 32} and rec["space"] == "shared"
    assert rec["thread"] == [0, 0, 0] and rec["cta"] == [0, 0, 0] and rec["address"] == S0 + 64 and rec["size"] == 4
    assert rec["count"] == 128                  # every thread of both CTAs
    rc = main(["ptx", "run", KERNEL, "--kernel", "early_read", "--grid", "2", "--block", "64",
               "--arg", "zeros:u32:64", "--initcheck", "--quiet"])
    out = capsys.readouterr()[0]
    assert (f"initcheck: Uninitialized __shared__ memory read of size 4 bytes at report.cu:32 (PTX line "
            f"{EARLY_LOAD}: ld.shared.u32 %r5, [%r4+64]) by thread (0,0,0) in block (0,0,0), address {S0 + 64:#x}; "
            f"128 such read(s)") in out


def test_store_sync_load_reports_nothing(capsys):
    rc = main(["ptx", "run", KERNEL, "--kernel", "synced", "--grid", "1", "--block", "64",
               "--arg", "zeros:u32:64", "--arg", "u32:0", "--initcheck", "--quiet"])
    out = capsys.readouterr()[0]
    assert rc == 0 and "initcheck: no reads of uninitialized shared memory" in out
    r = P.run(TEXT, "synced", 1, 64, [np.zeros(64, np.uint32), np.uint32(0)], initcheck=True)
    assert r.initcheck == [] and np.array_equal(r.buffers[0], np.arange(64))


def test_one_word_past_what_was_written():
    # thread t reads word t + 1: thread 63 (warp 1, lane 31) reads word 64, which nobody wrote
    r = P.run(TEXT, "synced", 1, 64, [np.zeros(64, np.uint32), np.uint32(1)], initcheck=True)
    [rec] = r.initcheck
    assert rec["ptx_line"] == SYNCED_LOAD and rec["cuda"]["line"] == 44
    assert rec["thread"] == [63, 0, 0] and (rec["warp"], rec["lane"]) == (1, 31)
    assert rec["address"] == S0 + 256 and rec["count"] == 1


def test_off_by_default():
    r = P.run(TEXT, "early_read", 1, 64, [np.zeros(64, np.uint32)])
    assert r.initcheck is None and r.to_json()["initcheck"] is None
    assert "initcheck" not in r.format()
