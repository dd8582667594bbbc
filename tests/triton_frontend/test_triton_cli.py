"""`layoutsim triton run` / `layouts`: the report with Python lines, --json, one-line errors (exit 2)."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from layoutsim.cli import main
from triton_needs import needs_triton

ROOT = Path(__file__).resolve().parents[2]
KERNELS = str(ROOT / "gpu_check" / "triton_corpus" / "kernels.py")
ADD = [f"{KERNELS}:vector_add", "--grid", "4", "--arg", "arange:f32:1000", "--arg", "ones:f32:1000",
       "--arg", "zeros:f32:1000", "--arg", "i32:1000", "--meta", "BLOCK=256"]


@needs_triton
def test_run_reports_python_lines_and_writes_outputs(capsys, tmp_path):
    assert main(["triton", "run", *ADD, "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "kernels.py:12" in out and "kernel vector_add on sm_90" in out
    import numpy as np
    got = np.load(tmp_path / "arg2.npy")
    assert np.array_equal(got, np.arange(1000, dtype=np.float32) + 1)


@needs_triton
def test_run_json(capsys):
    assert main(["triton", "run", *ADD, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["triton"]["signature"]["n"] == "i32" and doc["triton"]["constexprs"]["4"] == 256
    assert any(i["cuda"] and i["cuda"]["file"].endswith("kernels.py") for i in doc["instructions"])


@needs_triton
@pytest.mark.parametrize("argv,needle", [
    (["triton", "run", *ADD[:-2]], "missing argument(s) BLOCK"),
    (["triton", "run", *ADD, "--arg", "i32:3"], "parameter BLOCK given twice"),
    (["triton", "run", *ADD, "--arg", "i32:3", "--arg", "i32:3"], "takes 5 arguments; 6 given"),
    (["triton", "run", *ADD, "--meta", "BLOCK"], "give NAME=VALUE"),
    (["triton", "run", *ADD, "--arch", "sm_75"], "arch 'sm_75'"),
    (["triton", "run", f"{KERNELS}:nope", "--grid", "1"], "no Triton kernel 'nope'"),
    (["triton", "run", "kernels.txt", "--grid", "1"], "give FILE.py:KERNEL"),
    (["triton", "layouts", *ADD[:1], "--config", "1"], "is not autotuned"),
    # a kernel Triton refuses: its own message with the kernel's Python line (tl.dot of f16 by f32)
    (["triton", "run", f"{KERNELS}:matmul", "--grid", "1,1", "--arg", "zeros:f16:64x64", "--arg", "zeros:f32:64x64",
      "--arg", "zeros:f32:64x64", *sum((["--arg", "i32:64"] for _ in range(6)), []), "--meta", "BM=64",
      "--meta", "BN=64", "--meta", "BK=32"], "kernels.py:41: Triton refuses matmul: Both operands must be same dtype"),
    (["triton", "run", *ADD[:-2], "--meta", "BLOCK=100"], "kernels.py:10: Triton refuses vector_add: arange's range "
                                                         "must be a power of 2"),
    # a wrong dtype and a wrong shape name the parameter
    (["triton", "run", *ADD[:5], "--arg", "zeros:c64:1000", *ADD[7:]], "--arg 1: unknown dtype 'c64'"),
    (["triton", "run", *ADD[:5], "--arg", "ones:f32:100", *ADD[7:]], "parameter y_ptr (argument 1)"),
    (["triton", "run", *ADD, "--meta", "num_ctas=3"], "num_ctas=3: give a power of two"),
])
def test_errors_are_one_line(capsys, argv, needle):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1, err


@pytest.mark.parametrize("tail", [["run", "--grid", "1"], ["layouts"]])
def test_missing_triton_says_how_to_install(tmp_path, tail):
    argv = ["triton", tail[0], KERNELS + ":vector_add", *tail[1:]]
    code = ("import sys; sys.modules['triton'] = None\n"
            "from layoutsim.cli import main\n"
            f"sys.exit(main({argv!r}))\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                       env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert p.returncode == 2 and 'pip install "layoutsim[triton]"' in p.stderr and p.stderr.count("\n") == 1


def test_query_does_not_import_triton():
    code = ("import sys\nfrom layoutsim.cli import main\nmain(['query', 'mma.m16n8k16.f32.f16.f16.f32', "
            "'--operand', 'A', '--lane', '3'])\nprint('triton' in sys.modules)\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                       env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert p.stdout.strip().splitlines()[-1] == "False"


@needs_triton
def test_layouts_relates_mma_to_the_catalog(capsys):
    argv = ["triton", "layouts", f"{KERNELS}:matmul", "--arg", "zeros:f16:64x64", "--arg", "zeros:f16:64x64",
            "--arg", "zeros:f32:64x64", *sum((["--arg", "i32:64"] for _ in range(6)), []),
            "--meta", "BM=64", "--meta", "BN=64", "--meta", "BK=32"]
    assert main([*argv, "--arch", "sm_80", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    rel = {e["name"]: m["catalog"] for e in doc["encodings"] for m in e["maps"] if m["catalog"]}
    # Triton's mma v2 accumulator and dot operands are the catalog's mma.m16n8k16 C, A and B maps
    assert {v["catalog"] for v in rel.values()} == {"mma.m16n8k16.f32.f16.f16.f32 C", "mma.m16n8k16.f32.f16.f16.f32 A",
                                                     "mma.m16n8k16.f32.f16.f16.f32 B"}
    assert all(v["matches"] for v in rel.values())
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "wgmma.m64n64k16.f32.f16.f16 D: matches" in out and "swizzle mode 128B" in out
