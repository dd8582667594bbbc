"""Messages a kernel author meets (issue 22): `ptx run` with an AMD arch says it is NVIDIA-only;
`banks`/`coalesce` (and `ptx run`'s costs) on an NVIDIA arch other than the measured sm_90 say
which rules are extrapolated from the H200; refusals name the PTX and the CUDA line; the GPU
measurement drivers without a GPU say so in one line. Each through the CLI as a user runs it:
exit 2, one line, no traceback."""
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import layoutsim.ptx as P
from gpu_check import needs
from layoutsim import archs
from layoutsim.errors import LayoutsimError

ROOT = Path(__file__).resolve().parents[2]
WMMA = ROOT / "tests" / "ptx" / "kernels" / "wmma.sm_90.ptx"
WMMA_ARGS = ["--kernel", "gemm_f16", "--grid", "1", "--block", "32", "--arg", "zeros:f16:16x16", "--arg",
             "zeros:f16:16x16", "--arg", "zeros:f32:16x16", "--arg", "i32:16", "--arg", "i32:16", "--quiet"]


def cli(*argv, module="layoutsim.cli"):
    p = subprocess.run([sys.executable, "-m", module, *map(str, argv)], capture_output=True, text=True,
                       timeout=300)
    return p.returncode, p.stdout, p.stderr


def one_line_error(rc, out, err):
    assert rc == 2 and out == "" and "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


# ---- ptx run is NVIDIA-only --------------------------------------------------------------------------
@pytest.mark.parametrize("arch,canonical", [("gfx1201", "gfx1201"), ("gfx942", "gfx942"), ("rdna3", "gfx1100")])
def test_ptx_run_with_an_amd_arch(arch, canonical, tmp_path):
    for src in (WMMA, tmp_path / "kernel.cu"):        # a .cu is refused before nvcc sees the arch
        msg = one_line_error(*cli("ptx", "run", src, *WMMA_ARGS, "--arch", arch))
        assert f"arch {arch!r}" in msg and "is an AMD arch" in msg and "ptx run is NVIDIA-only" in msg
        assert (canonical in msg) and msg.endswith(", ".join(archs.NVIDIA)) and "gfx" not in msg.split(";")[1]


def test_python_ptx_run_with_an_amd_arch():
    with pytest.raises(LayoutsimError) as e:
        P.run(WMMA.read_text(), "gemm_f16", 1, 32, [], arch="gfx1201")
    msg = str(e.value)
    assert "layoutsim.ptx.run is NVIDIA-only" in msg and "sm_90" in msg and "gfx1100" not in msg


# ---- banks / coalesce / ptx run costs: what is extrapolated from the H200 -----------------------------
@pytest.mark.parametrize("arch", ["sm_100", "sm_75", "sm_120"])
def test_banks_on_an_unmeasured_nvidia_arch(arch):
    rc, out, _ = cli("banks", "--op", "ld.shared.v4.b32", "--arch", arch, "--addr", "lane*16")
    notes = [ln for ln in out.splitlines() if ln.startswith("note: ")]
    assert rc == 0 and len(notes) == 1
    assert notes[0].startswith(f"note: {arch}: the merge rules") and "extrapolated from the NVIDIA H200 (sm_90)" in notes[0]
    rc, out, _ = cli("banks", "--op", "ld.shared.v4.b32", "--arch", arch, "--addr", "lane*16", "--json")
    j = json.loads(out)
    assert j["extrapolated"] is True and j["notes"] == [notes[0][len("note: "):]]


@pytest.mark.parametrize("arch", ["sm_90", "gfx1201"])
def test_banks_on_the_measured_arch_or_amd_notes_nothing(arch):
    op = "ld.shared.v4.b32" if arch == "sm_90" else "ds_read_b128"
    rc, out, _ = cli("banks", "--op", op, "--arch", arch, "--addr", "lane*16")
    assert rc == 0 and "extrapolated" not in out
    j = json.loads(cli("banks", "--op", op, "--arch", arch, "--addr", "lane*16", "--json")[1])
    assert j["extrapolated"] is False and j["notes"] == []


def test_banks_fill_notes_the_extrapolation():
    rc, out, _ = cli("banks", "--op", "st.shared.v4.b32", "--arch", "sm_100", "--tile", "16x32", "--fill")
    assert rc == 0 and out.splitlines()[-1].startswith("note: sm_100: the merge rules")


def test_coalesce_on_an_unmeasured_nvidia_arch():
    rc, out, _ = cli("coalesce", "--op", "ld.global.v4.b32", "--arch", "sm_100", "--addr", "lane*16")
    assert rc == 0 and out.splitlines()[-1].startswith("note: sm_100: the request, sector, wavefront")
    for extra in (["--addr", "lane*16"], ["--stride", "1,2"]):
        d = json.loads(cli("coalesce", "--op", "ld.global.v4.b32", "--arch", "sm_75", *extra, "--json")[1])
        assert d["extrapolated"] is True and "extrapolated from the NVIDIA H200 (sm_90)" in d["notes"][0]
        d = json.loads(cli("coalesce", "--op", "ld.global.v4.b32", "--arch", "sm_90", *extra, "--json")[1])
        assert d["extrapolated"] is False and d["notes"] == []


def test_ptx_run_costs_on_an_unmeasured_arch_say_so():
    rc, out, _ = cli("ptx", "run", WMMA, *WMMA_ARGS, "--arch", "sm_100")
    assert rc == 0 and "note: sm_100: the bank and coalescing rules of these costs are extrapolated" in out
    rc, out, _ = cli("ptx", "run", WMMA, *WMMA_ARGS)
    assert rc == 0 and "extrapolated" not in out


# ---- refusals name the PTX line and the CUDA line -------------------------------------------------------
REFUSED = """
.version 8.0
.target sm_90
.address_size 64
	.file	1 "/home/u/clus.cu"
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<4>; .reg .f32 %f<8>;
	.loc	1 7 3
  mov.u32 %r1, %tid.x;
	.loc	1 9 5
  STATEMENT
  ret;
}
"""


@pytest.mark.parametrize("statement,what", [
    ("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r1], 32;", "unsupported instruction tcgen05"),
    ("redux.sync.min.f32 %f1, %f2, 0xffffffff;", "unsupported instruction redux.sync.min.f32 (floating-point redux)"),
])
def test_refusals_name_the_cuda_line(statement, what, tmp_path):
    src = tmp_path / "k.ptx"
    src.write_text(REFUSED.replace("STATEMENT", statement))
    msg = one_line_error(*cli("ptx", "run", src, "--kernel", "k", "--grid", "1", "--block", "32",
                              "--arg", "zeros:f32:4", "--quiet"))
    assert msg.startswith("layoutsim: error: line 12 (clus.cu:9): ") and what in msg


def test_no_refusal_spells_its_own_line():
    """Every UnsupportedPtx about an instruction goes through lines.py's wording (compile.unsupported
    or lines.of): none writes 'line {ins.line}' itself, so none can forget the CUDA line."""
    found = []
    for path in (ROOT / "layoutsim" / "ptx").glob("*.py"):
        text = path.read_text()
        found += [f"{path.name}: {m.group(0)}" for m in re.finditer(r'UnsupportedPtx\(f"line \{ins\.line\}', text)]
    assert found == []


# ---- the GPU measurement drivers without a GPU ------------------------------------------------------------
DRIVERS = [("gpu_check.bank_probe.measure", "ncu"), ("gpu_check.coalesce_probe.measure", "ncu"),
           ("gpu_check.sfu.measure", "pycuda")]


@pytest.mark.skipif(needs.gpu_missing() is None, reason="an NVIDIA GPU is here: the drivers would measure")
@pytest.mark.parametrize("module,tool", DRIVERS)
def test_measure_drivers_without_a_gpu(module, tool, tmp_path):
    out = tmp_path / "out"
    msg = one_line_error(*cli("--out", out, module=module))
    assert msg.startswith(f"python -m {module} needs an NVIDIA GPU with {tool}: no NVIDIA GPU here")
    assert "--dry-run" in msg and not out.exists()                    # nothing compiled, nothing written


def test_what_the_drivers_name_when_only_a_tool_is_missing(monkeypatch):
    monkeypatch.setattr(needs, "gpu_missing", lambda: None)
    assert needs.missing("x", ncu=sys.executable) is None
    msg = needs.missing("x", ncu="no-such-ncu")
    assert msg.startswith("x needs an NVIDIA GPU with ncu: ncu (Nsight Compute) not found (no-such-ncu)")
    assert "no NVIDIA GPU" not in msg
    monkeypatch.setattr(needs.importlib.util, "find_spec", lambda name: None)
    assert "pycuda is not installed" in needs.missing("y", pycuda=True)
