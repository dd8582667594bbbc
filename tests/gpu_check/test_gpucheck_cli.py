"""gpu-check's command line: the no-GPU path, bad input, the report and its formatting."""
import json
import subprocess
import sys

import pytest

import gpu_check.cli as cli
from fakegpu import FakeBackend
from gpu_check import report as R
from gpu_check.checks.common import Mismatch, Result

from gpucheck_helpers import need_nvcc


def _no_pycuda(monkeypatch):
    monkeypatch.setitem(sys.modules, "pycuda", None)
    monkeypatch.setitem(sys.modules, "pycuda.driver", None)


def test_run_without_pycuda_is_one_line_and_exit_2(monkeypatch, capsys):
    _no_pycuda(monkeypatch)
    assert cli.main(["run"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert err.startswith("gpu-check: pycuda is not installed") and "nothing was run" in err


def test_discover_without_pycuda_is_one_line_and_exit_2(monkeypatch, capsys):
    _no_pycuda(monkeypatch)
    assert cli.main(["discover", "--record", "/nonexistent"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1


def test_run_in_a_fresh_process_without_a_gpu():
    try:
        import pycuda.driver as drv   # noqa: F401
        drv.init()
        if drv.Device.count():
            pytest.skip("a GPU is present")
    except Exception:   # noqa: BLE001 - no pycuda or no driver: the case under test
        pass
    r = subprocess.run([sys.executable, "-m", "gpu_check.cli", "run"], capture_output=True, text=True)
    assert r.returncode == 2 and r.stdout == ""
    assert len(r.stderr.strip().splitlines()) == 1 and r.stderr.startswith("gpu-check: ")


def test_no_cuda_driver_is_one_line(monkeypatch, capsys):
    class Drv:
        @staticmethod
        def init():
            raise RuntimeError("cuInit failed: no CUDA-capable device is detected")
    import types
    fake = types.ModuleType("pycuda")
    fake.VERSION = (2026, 1)
    monkeypatch.setitem(sys.modules, "pycuda", fake)
    monkeypatch.setitem(sys.modules, "pycuda.driver", Drv)
    fake.driver = Drv
    assert cli.main(["run"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == ("gpu-check: no CUDA driver or GPU: cuInit failed: no CUDA-capable device is detected; "
                           "nothing was run")


@pytest.mark.parametrize("argv, text", [
    (["run", "--group", "bankz"], "unknown group 'bankz'; valid: layouts, numerics, kernels, banks, descriptors, coalescing"),
    (["run", "--cases", "0"], "--cases must be at least 1"),
    (["run", "--frobnicate"], "unrecognized arguments: --frobnicate"),
    (["report", "/nonexistent/report.json"], "cannot read report '/nonexistent/report.json'"),
])
def test_bad_input_is_one_line_exit_2(argv, text, capsys):
    with pytest.raises(SystemExit) if argv[1:2] == ["--frobnicate"] else _null():
        code = cli.main(argv)
    err = capsys.readouterr().err
    assert text in err and len(err.strip().splitlines()) == 1
    if argv[1:2] != ["--frobnicate"]:
        assert code == 2


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


def test_banks_alone_without_ncu_is_one_line(monkeypatch, capsys):
    from gpu_check.checks import banks
    monkeypatch.setattr(banks, "ncu_path", lambda: None)
    assert cli.main(["run", "--group", "banks"]) == 2
    err = capsys.readouterr().err
    assert "ncu (Nsight Compute) not found" in err and len(err.strip().splitlines()) == 1


def test_banks_skipped_without_ncu_inside_a_full_run(monkeypatch):
    from gpu_check.checks import banks
    monkeypatch.setattr(banks, "ncu_path", lambda: None)
    (r,) = banks.measure_and_compare()
    assert r.status == "skip" and "ncu" in r.note


def _report(tmp_path, results):
    from gpu_check.run import summarize
    info = {"layouts": dict(summarize(results, "layouts"), seconds=1.5),
            "banks": dict(summarize(results, "banks"), seconds=0.0)}
    rep = R.make_report(["gpu-check", "run"], FakeBackend().environment(), {"target": "sm_90a", "kernels": 3},
                        results, info, {"k_x": ["HMMA.16816.F32"]}, exit_code=1)
    (tmp_path / "r").mkdir()
    return R.write_json(tmp_path / "r" / "report.json", rep), rep


def _results():
    bad = Result("layouts", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", "onehot", cases=16, compared=2048,
                 mismatches=1, details=[Mismatch(3, "lane 13 d2 (reg 2) = D[11][2]", "f32", 0x41200000, 0)]).finish()
    ok = Result("layouts", "ldmatrix.sync.aligned.m8n8.x4.shared.b16", "ids", cases=32, compared=4096).finish()
    skip = Result("banks", "bank corpus", "ncu", status="skip", note="ncu not found: bank checks skipped")
    return [bad, ok, skip]


def test_report_json_is_written_atomically(tmp_path):
    path, rep = _report(tmp_path, _results())
    assert [p.name for p in path.parent.iterdir()] == ["report.json"]      # no temporary left behind
    data = json.loads(path.read_text())
    assert data["environment"]["gpu"] == "FakeGPU" and data["exit_code"] == 1
    assert data["totals"]["mismatches"] == 1 and data["totals"]["skipped"] == 1
    d = data["results"][0]["details"][0]
    assert d["text"] == "case 3: lane 13 d2 (reg 2) = D[11][2]: expected 0x41200000 (10.0), got 0x00000000 (0.0)"


def test_summary_table_and_diff_text(tmp_path):
    _, rep = _report(tmp_path, _results())
    table = R.summary_table(rep)
    lines = table.splitlines()
    assert lines[0].split() == ["group", "status", "entries", "checks", "cases", "compared", "mismatches", "seconds"]
    assert lines[2].split()[:7] == ["layouts", "FAIL", "2", "2", "48", "6144", "1"]
    assert lines[3].split()[:2] == ["banks", "skipped"]
    diff = R.diffs_text(R.results_of(rep))
    assert diff.splitlines()[0] == ("MISMATCH mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 [layouts/onehot]: "
                                    "1 of 2048 elements differ over 16 cases")


def test_report_command_prints_and_writes_markdown(tmp_path, capsys):
    path, _ = _report(tmp_path, _results())
    md = tmp_path / "docs" / "validation" / "h200.md"
    md.parent.mkdir(parents=True)
    assert cli.main(["report", str(path), "--markdown", str(md)]) == 1
    out = capsys.readouterr().out
    assert "gpu-check report: gpu=FakeGPU" in out and "MISMATCH" in out
    text = md.read_text()
    assert text.startswith("# gpu-check on FakeGPU (sm_90), 2025-01-01")
    assert "| `mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32` | onehot | 1 / 2048 | case 3: lane 13 d2" in text
    assert "Note: ncu not found: bank checks skipped" in text
    assert "| HMMA.16816.F32 | `k_x` |" in text


@need_nvcc
def test_run_with_a_fake_gpu_end_to_end(tmp_path, monkeypatch, capsys, kernel_cache):
    monkeypatch.setattr(cli, "make_backend", lambda name="cuda": FakeBackend())
    from gpu_check.checks import banks
    monkeypatch.setattr(banks, "ncu_path", lambda: None)
    rep = tmp_path / "report.json"
    code = cli.main(["run", "--only", "ldmatrix.x1,mma.m16n8k8.f32.bf16.bf16.f32", "--group", "layouts,banks",
                     "--report", str(rep), "--record", str(tmp_path / "data")])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "[layouts]" in out and "[banks]    skipped: ncu (Nsight Compute) not found" in out
    assert "total" in out and f"report written to {rep}" in out
    data = json.loads(rep.read_text())
    assert data["groups"]["banks"]["skipped"] == 1 and data["totals"]["mismatches"] == 0
    assert (tmp_path / "data" / "layouts" / "layouts_sm_90.npz").exists()
    assert cli.main(["replay", str(tmp_path / "data" / "layouts" / "layouts_sm_90.npz")]) == 0


@need_nvcc
def test_run_json_mode(tmp_path, monkeypatch, capsys, kernel_cache):
    monkeypatch.setattr(cli, "make_backend", lambda name="cuda": FakeBackend(fault=("ldmatrix", lambda s, o: o ^ 1)))
    code = cli.main(["run", "--only", "ldmatrix.x2", "--group", "layouts", "--json"])
    out, err = capsys.readouterr()
    assert code == 1
    data = json.loads(out)
    assert data["totals"]["mismatches"] > 0 and data["exit_code"] == 1
    assert "[layouts]" in err


def test_source_command(capsys):
    assert cli.main(["source", "--target", "sm_80", "--only", "ldmatrix.x1"]) == 0
    out = capsys.readouterr().out
    assert 'extern "C" __global__' in out and "ldmatrix.sync.aligned.m8n8.x1.shared.b16" in out


def test_only_matching_nothing_is_one_line(capsys):
    assert cli.main(["run", "--only", "mma.m16n8k17.f32"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gpu-check: no catalog entry matches --only 'mma.m16n8k17.f32'")
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("argv, says", [(["--record", "somewhere"], "nothing may be recorded"),
                                        (["--group", "layouts,banks"], "'banks' measures a GPU")])
def test_a_ptxsim_run_refuses_to_record_or_to_mix_in_gpu_measurements(argv, says, tmp_path, capsys):
    assert cli.main(["run", "--backend", "ptxsim", *argv]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and says in err
    assert not (tmp_path / "somewhere").exists()


def test_a_ptxsim_report_confirms_nothing(tmp_path, capsys):
    rep = tmp_path / "r.json"
    ok = Result("layouts", "ldmatrix.x1", "ids", cases=1, compared=64).finish()
    R.write_json(rep, R.make_report(["gpu-check", "run", "--backend", "ptxsim"], {"simulated": True}, {}, [ok],
                                    {"layouts": {}}))
    assert cli.main(["report", str(rep), "--confirmed", str(tmp_path / "c.json")]) == 2
    assert "confirms nothing" in capsys.readouterr().err and not (tmp_path / "c.json").exists()
