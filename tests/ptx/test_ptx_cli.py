"""`layoutsim ptx run`: arguments, report, --json, --out, and one-line errors with exit code 2."""
import json
import os
import shutil

import numpy as np
import pytest
from ptx_kernels import EXAMPLES, KERNELS

from layoutsim.cli import main

TRANSPOSE = str(EXAMPLES / "transpose.sm_90.ptx")
MEMORY = str(KERNELS / "memory.sm_90.ptx")


def run(capsys, *argv):
    rc = main(["ptx", "run", *argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_report_sorted_by_excess_with_cuda_lines(capsys, tmp_path):
    x = np.arange(64 * 64, dtype=np.float32).reshape(64, 64)
    np.save(tmp_path / "x.npy", x)
    rc, out, _ = run(capsys, TRANSPOSE, "--kernel", "transpose_conflicts", "--grid", "2,2", "--block", "32,8",
                     "--arg", str(tmp_path / "x.npy"), "--arg", "zeros:f32:64x64", "--arg", "i32:64",
                     "--out", str(tmp_path / "o"), "--quiet")
    assert rc == 0
    lines = out.splitlines()
    assert lines[1] == "shared memory: 4096 load wavefronts (ideal 128), 128 store wavefronts (ideal 128)"
    assert lines[2] == "global memory: 256 requests, 1024 sectors (ideal 1024)"    # 32 floats a warp: 4 sectors
    header = next(i for i, line in enumerate(lines) if line.startswith("line  cuda"))
    first = lines[header + 1].split()
    assert first[1] == "transpose.cu:9" and first[5] == "992" and first[6].startswith("ld.shared")
    assert np.array_equal(np.load(tmp_path / "o" / "arg1.npy"), x.T)
    assert not (tmp_path / "o" / "arg2.npy").exists()          # scalars have no buffer


def test_json_schema(capsys, tmp_path):
    rc, out, _ = run(capsys, TRANSPOSE, "--kernel", "transpose_padded", "--grid", "1", "--block", "32,8",
                     "--arg", "arange:f32:32x32", "--arg", "zeros:f32:32x32", "--arg", "i32:32", "--json",
                     "--racecheck")
    assert rc == 0
    doc = json.loads(out)
    assert set(doc) == {"schema", "kernel", "arch", "grid", "block", "cluster", "shared_wavefronts", "shared_ideal",
                        "global", "warp_instructions", "sampled", "notes", "hazards", "initcheck", "fault", "seconds",
                        "sass_source", "gmma_wavefronts", "tensor_maps", "fidelity", "printf", "assertions",
                        "graph_conditionals", "instructions", "outputs"}
    assert doc["fidelity"]["exact"] == doc["warp_instructions"] and doc["fidelity"]["approximate"] == 0
    assert doc["shared_wavefronts"] == {"ld": 32, "st": 32} and doc["hazards"] == []
    ins = doc["instructions"][0]
    assert set(ins) == {"line", "cuda", "text", "executions", "wavefronts", "ideal", "excess", "kind", "sass",
                        "requests", "sectors", "ideal_sectors", "excess_sectors", "global_kind", "note"}


def test_out_keeps_file_modes(capsys, tmp_path):
    d = tmp_path / "o"
    d.mkdir()
    np.save(d / "arg1.npy", np.zeros(3))
    os.chmod(d / "arg1.npy", 0o600)
    rc, _, _ = run(capsys, TRANSPOSE, "--kernel", "transpose_padded", "--grid", "1", "--block", "32,8",
                   "--arg", "ones:f32:32x32", "--arg", "zeros:f32:32x32", "--arg", "i32:32", "--out", str(d),
                   "--quiet")
    assert rc == 0 and (os.stat(d / "arg1.npy").st_mode & 0o777) == 0o600
    assert np.array_equal(np.load(d / "arg1.npy"), np.ones((32, 32), np.float32))


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="compiling a .cu needs nvcc")
def test_cu_is_compiled_with_nvcc(capsys):
    rc, out, _ = run(capsys, str(EXAMPLES / "transpose.cu"), "--kernel", "transpose_padded", "--grid", "1",
                     "--block", "32,8", "--arg", "ones:f32:32x32", "--arg", "zeros:f32:32x32", "--arg", "i32:32")
    assert rc == 0 and "transpose.cu:" in out


@pytest.mark.parametrize("args,message", [
    (["nope.ptx"], "nope.ptx: no such file"),
    ([TRANSPOSE, "--arg", "zeros:f32"], "give zeros:DTYPE:SHAPE"),
    ([TRANSPOSE, "--arg", "zeros:f99:4"], "unknown dtype 'f99'"),
    ([TRANSPOSE, "--arg", "i8:300"], "300 is outside i8"),
    ([TRANSPOSE, "--arg", "q:1"], "give FILE.npy, zeros:DTYPE:SHAPE"),
    ([TRANSPOSE, "--arg", "zeros:f32:100000x100000"], "may hold at most 536870912 bytes"),
    ([TRANSPOSE, "--grid", "0"], "every dimension must be at least 1"),
    ([TRANSPOSE, "--kernel", "transpose"], "kernel 'transpose' is not in the PTX"),
    ([TRANSPOSE, "--arg", "zeros:f32:4"], "takes 3 parameter(s)"),
    ([MEMORY, "--kernel", "gather", "--arg", "zeros:f32:4", "--arg", "arange:i32:32", "--arg", "zeros:f32:32"],
     "is outside global memory"),
])
def test_bad_input_one_line_exit_2(capsys, args, message):
    base = {"--kernel": "transpose_padded", "--grid": "1", "--block": "32"}
    argv = list(args)
    for k, v in base.items():
        if k not in argv:
            argv += [k, v]
    rc, out, err = run(capsys, *argv)
    assert rc == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and err.startswith("layoutsim: error: ") and message in err
