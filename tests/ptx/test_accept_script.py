"""benchmarks/accept.py: acceptance over a whole project (issue 24): every .cu compiled on its own,
every kernel loaded; files nvcc refuses are counted apart, refusals grouped by construct with the
CUDA line they name. The project here is three small files written for this test."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")

FILES = {
    "ok.cu": "__global__ void scale(float *x, float a, int n)\n"
             "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= a; }\n"
             "__global__ void twice(float *x) { x[threadIdx.x] += x[threadIdx.x]; }\n",
    # multimem (NVLink multicast memory, PTX ISA 9.7.9.23) is not modelled: a refusal
    "sub/refused.cu": "__global__ void multi(float *x)\n{\n    float v;\n"
                      "    asm volatile(\"multimem.ld_reduce.relaxed.sys.global.add.f32 %0, [%1];\" : \"=f\"(v) : \"l\"(x));\n"
                      "    x[threadIdx.x] = v;\n}\n",
    "sub/broken.cu": "#include \"no_such_header.h\"\n__global__ void k() {}\n",
}


def accept(*args):
    return subprocess.run([sys.executable, str(ROOT / "benchmarks" / "accept.py"), *map(str, args)],
                          capture_output=True, text=True, cwd=ROOT,
                          env={"PYTHONPATH": str(ROOT), "PATH": os.environ.get("PATH", "")})


def project(tmp_path):
    for name, text in FILES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def test_counts_and_the_refusal_with_its_cuda_line(tmp_path):
    r = accept(project(tmp_path), "--arch", "sm_90", "sm_80", "sm_90a", "--json", "--jobs", "1")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    for s in doc["archs"]:
        assert (s["files"], s["compiled"], s["failed_to_compile"]) == (3, 2, 1)
        assert (s["kernels"], s["accepted"], s["refused"], s["percent_accepted"]) == (3, 2, 1, 66.67)
        (g,) = s["refusals"]
        assert g["construct"].startswith("unsupported instruction multimem.ld_reduce") and g["kind"] == "refused"
        (ex,) = g["examples"]
        assert ex["file"] == "sub/refused.cu" and ex["kernel"] == "_Z5multiPf"
        assert ex["cuda"].startswith("refused.cu:4: asm volatile(\"multimem.ld_reduce")
        assert s["compile_failures"][0]["file"] == "sub/broken.cu"
        assert "no_such_header.h" in s["compile_failures"][0]["error"]


def test_a_bad_argument_is_one_line(tmp_path):
    r = accept(tmp_path / "missing")
    assert r.returncode == 2 and r.stderr.strip().count("\n") == 0 and "is not a directory" in r.stderr


def test_a_project_that_is_unknown_or_not_installed_is_one_line(tmp_path):
    r = accept("--project", "nosuch")
    assert r.returncode == 2 and r.stderr.strip().count("\n") == 0 and "one of cub, cutlass, warp" in r.stderr
    r = accept("--project", f"cub={tmp_path}")
    assert r.returncode == 2 and r.stderr.strip().count("\n") == 0 and "nvidia-cuda-cccl==13.0.85" in r.stderr
