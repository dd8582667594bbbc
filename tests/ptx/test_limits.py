"""Bounded time and memory of `ptx run` (issue 22): --max-steps and --timeout (max_steps=,
timeout=) stop a spin loop with one line naming its PTX and CUDA lines (exit 2); Ctrl-C gives one
line and exit 130, with --jobs too and no worker left behind; progress lines by wall time; the
run's memory bound shared among --jobs workers."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import layoutsim.ptx as P
from layoutsim import cli
from layoutsim.errors import LayoutsimError
from layoutsim.ptx import parallel, watch

ROOT = Path(__file__).resolve().parents[2]
# a kernel whose every thread spins forever: two lines of a CUDA loop (spin.cu:7 and :8)
SPIN = """.version 8.0
.target sm_90
.address_size 64

.visible .entry spin(
	.param .u64 out
)
{
	.reg .b32 %r<4>;
	mov.u32 %r1, 0;
$L_loop:
	.loc 1 7 5
	add.s32 %r1, %r1, 1;
	.loc 1 8 5
	bra.uni $L_loop;
	ret;
}
	.file	1 "/home/u/spin.cu"
"""
NOP = """.version 8.0
.target sm_90
.address_size 64
.visible .entry nop(.param .u64 out)
{
	ret;
}
"""


@pytest.fixture
def spin(tmp_path):
    path = tmp_path / "spin.ptx"
    path.write_text(SPIN)
    return str(path)


def _cli(argv, capsys):
    rc = cli.main(argv)
    out, err = capsys.readouterr()
    return rc, out, err.strip().splitlines()


def _spin_args(spin, *extra):
    return ["ptx", "run", spin, "--kernel", "spin", "--grid", "2", "--block", "64", "--arg", "zeros:f32:4",
            *extra]


def _names_the_loop(line):
    return "line 13 (spin.cu:7) `add.s32 %r1, %r1, 1`" in line and "(spin.cu:8) `bra.uni $L_loop`" in line


# ---- the options ------------------------------------------------------------------------------
@pytest.mark.parametrize("bad", [0, -1, 1.5, 1000.0, True, False, "100", np.float64(3)])
def test_bad_max_steps_refused(bad):
    with pytest.raises(LayoutsimError, match=r"max_steps=.*give a number of scheduler steps >= 1") as e:
        P.run(NOP, "nop", 1, 32, [np.zeros(1, np.int32)], max_steps=bad)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf"), True, "1"])
def test_bad_timeout_refused(bad):
    with pytest.raises(LayoutsimError, match=r"timeout=.*give seconds of wall time > 0"):
        P.run(NOP, "nop", 1, 32, [np.zeros(1, np.int32)], timeout=bad)


def test_none_means_the_defaults():
    r = P.run(NOP, "nop", 1, 32, [np.zeros(1, np.int32)], max_steps=None, timeout=None)
    assert r.warp_instructions == 1
    assert P.run(NOP, "nop", 1, 32, [np.zeros(1, np.int32)], max_steps=np.int64(5), timeout=30).warp_instructions == 1


@pytest.mark.parametrize("flag,value", [("--max-steps", "0"), ("--max-steps", "-3"), ("--timeout", "0"),
                                        ("--timeout", "nan"), ("--timeout", "-1")])
def test_bad_cli_values_one_line(spin, capsys, flag, value):
    rc, out, err = _cli(_spin_args(spin, flag, value), capsys)
    assert rc == 2 and out == "" and len(err) == 1 and flag.strip("-").replace("-", "_") in err[0]


def test_non_numbers_refused_by_the_parser(spin, capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(_spin_args(spin, "--max-steps", "1.5"))
    assert e.value.code == 2 and "--max-steps" in capsys.readouterr().err


# ---- a spin loop stops ---------------------------------------------------------------------------
def test_max_steps_stops_a_spin_loop_with_its_lines(spin, capsys):
    rc, out, err = _cli(_spin_args(spin, "--max-steps", "1000"), capsys)
    assert rc == 2 and out == ""
    assert len(err) == 1
    assert "stopped at the step limit, 1000 steps (max_steps 1000, --max-steps); 0 of 2 CTAs done" in err[0]
    assert _names_the_loop(err[0]) and "mov.u32" not in err[0]      # a line run once is not where it spins


@pytest.mark.parametrize("flag,value,kind", [("--max-steps", "1000", "step_limit"),
                                             ("--timeout", "0.5", "time_limit")])
def test_json_gives_the_limit_as_a_fault_record(spin, capsys, flag, value, kind):
    """--json on a run stopped by a limit prints a report whose fault names the limit, not nothing."""
    rc, out, err = _cli(_spin_args(spin, flag, value) + ["--json"], capsys)
    assert rc == 2 and len(err) == 1
    fault = json.loads(out)["fault"]
    assert fault["kind"] == kind and fault["message"] in err[0] and _names_the_loop(fault["message"])
    assert fault["steps"] == 1000 if kind == "step_limit" else fault["steps"] > 0


def test_the_step_count_is_exact_and_counts_the_whole_run():
    """max_steps bounds the steps of the run, over every batch (here one CTA per batch)."""
    with pytest.raises(watch.RunLimit, match=r"step limit, 777 steps"):
        P.run(SPIN, "spin", 3, 32, [np.zeros(1, np.int32)], max_steps=777, batch_threads=32)
    three = SPIN.replace("bra.uni $L_loop;", "ret;")          # mov, add, ret: 3 steps per CTA
    with pytest.raises(watch.RunLimit, match=r"step limit, 4 steps .*; 1 of 3 CTAs done"):
        P.run(three, "spin", 3, 32, [np.zeros(1, np.int32)], max_steps=4, batch_threads=32)
    assert P.run(three, "spin", 3, 32, [np.zeros(1, np.int32)], max_steps=9, batch_threads=32).warp_instructions == 9


def test_timeout_stops_a_spin_loop_within_seconds(spin, capsys):
    t = time.monotonic()
    rc, out, err = _cli(_spin_args(spin, "--timeout", "1", "--quiet"), capsys)
    assert time.monotonic() - t < 20           # the loop alone would run for hours
    assert rc == 2 and len(err) == 1
    assert "stopped at the 1 s time limit (timeout, --timeout) after" in err[0] and _names_the_loop(err[0])


def test_the_clock_is_read_once_per_check(monkeypatch):
    """The check is cheap: one clock read every CHECK_EVERY steps, not one per step."""
    reads = [0]
    real = time.monotonic

    def counting():
        reads[0] += 1
        return real()
    monkeypatch.setattr(watch.time, "monotonic", counting)
    steps = 40 * watch.CHECK_EVERY
    with pytest.raises(watch.RunLimit):
        P.run(SPIN, "spin", 1, 32, [np.zeros(1, np.int32)], max_steps=steps, timeout=600)
    assert 30 <= reads[0] <= steps // watch.CHECK_EVERY + 10


# ---- progress by wall time ---------------------------------------------------------------------------
class FakeClock:
    def __init__(self, step):
        self.t, self.step = 100.0, step

    def __call__(self):
        self.t += self.step
        return self.t


def test_progress_every_two_seconds_of_a_fake_clock():
    seen = []

    class Costs:
        executions = np.zeros(3, np.int64)
        warp_instructions = 0
    w = watch.Watch(None, 5, max_steps=10**9, progress=seen.append, clock=FakeClock(0.5))
    w.batch(Costs)
    n = 1
    for _ in range(40):                       # 40 checks, 0.5 s apart: 20 s
        Costs.warp_instructions += 64
        n = w.check(n)
    assert 9 <= len(seen) <= 10
    assert all(b.seconds - a.seconds >= 2.0 for a, b in zip(seen, seen[1:]))
    last = seen[-1]
    assert last.ctas == 5 and last.ctas_done == 0 and last.warp_instructions > 0
    assert last.line().startswith("ptx: 0 of 5 CTAs done, ") and "warp-instructions in" in last.line()


def test_progress_lines_on_stderr_of_a_long_run(spin, capsys, monkeypatch):
    monkeypatch.setattr(watch, "PROGRESS_SECONDS", 0.0)        # every check: a run of 3000 steps is long
    rc, out, err = _cli(_spin_args(spin, "--max-steps", "3000"), capsys)
    assert rc == 2
    progress = [ln for ln in err if ln.startswith("ptx: ")]
    assert len(progress) >= 50 and len(err) == len(progress) + 1
    assert all(" of 2 CTAs done, " in ln and "warp-instructions in" in ln and "/s)" in ln for ln in progress)
    assert "step limit" in err[-1]


@pytest.mark.parametrize("flag", ["--quiet", "--json"])
def test_no_progress_with_quiet_or_json(spin, capsys, monkeypatch, flag):
    monkeypatch.setattr(watch, "PROGRESS_SECONDS", 0.0)
    rc, out, err = _cli(_spin_args(spin, "--max-steps", "3000", flag), capsys)
    assert rc == 2 and len(err) == 1 and "step limit" in err[0]


# ---- Ctrl-C ---------------------------------------------------------------------------------------
def test_keyboard_interrupt_in_python_says_where(monkeypatch):
    monkeypatch.setattr(watch, "PROGRESS_SECONDS", 0.0)
    calls = [0]

    def progress(status):
        calls[0] += 1
        if calls[0] == 100:
            raise KeyboardInterrupt
    with pytest.raises(watch.Interrupted) as e:
        P.run(SPIN, "spin", 2, 64, [np.zeros(1, np.int32)], progress=progress)
    assert isinstance(e.value, KeyboardInterrupt)
    msg = str(e.value)
    assert msg.startswith("stopped after ") and "0 of 2 CTAs done" in msg and _names_the_loop(msg)


def test_ctrl_c_on_the_command_line_is_one_line_exit_130(spin, capsys, monkeypatch):
    monkeypatch.setattr(watch, "PROGRESS_SECONDS", 0.0)
    from layoutsim.commands import ptx as command
    calls = [0]

    def interrupting():
        def cb(status):
            calls[0] += 1
            if calls[0] == 50:
                raise KeyboardInterrupt
        return cb
    monkeypatch.setattr(command, "_progress", interrupting)
    rc, out, err = _cli(_spin_args(spin), capsys)
    assert rc == 130 and out == "" and len(err) == 1
    assert err[0].startswith("layoutsim: interrupted: stopped after ") and _names_the_loop(err[0])


def test_ctrl_c_elsewhere_is_one_line_exit_130(capsys, monkeypatch):
    from layoutsim.commands import banks
    monkeypatch.setattr(banks, "run", lambda args: (_ for _ in ()).throw(KeyboardInterrupt()))
    rc, out, err = _cli(["banks", "--op", "ld.shared.b32", "--addr", "lane*4"], capsys)
    assert rc == 130 and err == ["layoutsim: interrupted"]


def _children(pid):
    res = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True)
    return [int(p) for p in res.stdout.split()]


def _alive(pids):
    return [p for p in pids if os.path.exists(f"/proc/{p}") and
            open(f"/proc/{p}/stat").read().split(")")[1].split()[0] != "Z"]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_sigint_to_a_running_command(spin, jobs):
    """SIGINT, as Ctrl-C sends it: one line, exit 130, and no worker process left."""
    if sys.platform != "linux":
        pytest.skip("reads /proc")
    # a shell's background job starts with SIGINT ignored: give the child Python's own handler
    code = ("import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
            "from layoutsim.cli import main; sys.exit(main(sys.argv[1:]))")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    p = subprocess.Popen([sys.executable, "-c", code, *_spin_args(spin, "--grid", "4", "--jobs", jobs)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        # running once a progress line counts warp-instructions (every ~2 s)
        seen = []
        while True:
            line = p.stderr.readline()
            assert line, seen                        # the process ended before it ran
            seen.append(line)
            if line.startswith("ptx: ") and not line.split(" CTAs done, ")[1].startswith("0 "):
                break
        kids = _children(p.pid)
        assert len(kids) >= (3 if jobs == "2" else 0)     # the resource tracker and two workers
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 130, err
    lines = [ln for ln in err.strip().splitlines() if not ln.startswith("ptx: ")]
    assert len(lines) == 1 and lines[0].startswith("layoutsim: interrupted: stopped after "), err
    assert " of 4 CTAs done" in lines[0] and err.strip().splitlines()[-1] == lines[0]
    end = time.monotonic() + 20
    while _alive(kids) and time.monotonic() < end:
        time.sleep(0.2)
    assert not _alive(kids)


def test_jobs_stop_at_the_limit_of_the_whole_run(spin, capsys):
    t = time.monotonic()
    rc, out, err = _cli(_spin_args(spin, "--grid", "4", "--jobs", "2", "--max-steps", "4000", "--quiet"), capsys)
    assert rc == 2 and len(err) == 1
    steps = int(err[0].split("step limit, ")[1].split()[0])
    # each worker checks the sum every CHECK_EVERY steps: at most that much past the limit each
    assert 4000 <= steps <= 4000 + 2 * watch.CHECK_EVERY
    assert _names_the_loop(err[0]) and time.monotonic() - t < 120


# ---- the memory of --jobs ------------------------------------------------------------------------------
def test_workers_that_fit_hold_the_run_limit():
    heap, batch = 64 << 20, 16 << 20
    n, why = parallel.workers_that_fit(8, heap, batch)
    assert 2 <= n < 8 and f"jobs=8 reduced to {n}" in why
    assert parallel.parent_bytes(heap) + n * parallel.worker_bytes(heap, batch) <= parallel.RUN_BYTES
    assert parallel.parent_bytes(heap) + (n + 1) * parallel.worker_bytes(heap, batch) > parallel.RUN_BYTES
    assert parallel.workers_that_fit(4, 1 << 20, 1 << 20) == (4, "")
    # a 512 MiB argument: not even two workers fit beside the parent, so the run keeps one process
    n, why = parallel.workers_that_fit(4, 512 << 20, batch)
    assert n == 1 and f"needs about {parallel.worker_bytes(512 << 20, batch)} bytes" in why
    assert f"at most {parallel.RUN_BYTES} bytes" in why


def _transpose_args(n=64):
    return [np.arange(n * n, dtype=np.float32).reshape(n, n), np.zeros((n, n), np.float32), np.int32(n)]


def _transpose():
    return (ROOT / "docs" / "examples" / "transpose.sm_90.ptx").read_text()


def test_a_small_limit_reduces_the_workers_started(monkeypatch):
    started = []
    real = parallel.run_parallel

    def planned(*a):
        started.append(a[10])                     # jobs
        return real(*a)
    monkeypatch.setattr(parallel, "run_parallel", planned)
    monkeypatch.setattr(parallel, "RUN_BYTES", 1)
    r = P.run(_transpose(), "transpose_conflicts", (2, 2), (32, 8), _transpose_args(), jobs=4)
    assert started == [] and any("jobs=4 reduced to 1: each worker process needs about" in n for n in r.notes)
    assert np.array_equal(r.buffers[1], _transpose_args()[0].T)
    monkeypatch.setattr(parallel, "RUN_BYTES", 10**12)
    r = P.run(_transpose(), "transpose_conflicts", (2, 2), (32, 8), _transpose_args(), jobs=4)
    assert started == [4] and not any("reduced" in n for n in r.notes)


def test_changed_pages_rebuild_global_memory():
    rng = np.random.default_rng(1)
    before = rng.integers(0, 256, 3 * parallel.PAGE + 100, dtype=np.uint8)
    data = before.copy()
    data[5] ^= 1
    data[2 * parallel.PAGE + 7: 2 * parallel.PAGE + 9] = 0
    data[-1] ^= 0xFF
    pages, content, mask = parallel.changed_pages(data, before)
    assert list(pages) == [0, 2, 3] and content.shape == mask.shape == (3, parallel.PAGE)
    rebuilt = before.copy()
    for p, c, m in zip(pages, content, mask):
        lo = int(p) * parallel.PAGE
        hi = min(lo + parallel.PAGE, data.size)
        rebuilt[lo:hi] = np.where(m[:hi - lo], c[:hi - lo], rebuilt[lo:hi])
    assert np.array_equal(rebuilt, data) and int(mask.sum()) == int((data != before).sum())


def test_gpu_check_ctrl_c_is_exit_130(capsys, monkeypatch):
    from gpu_check import cli as gcli
    monkeypatch.setattr(gcli, "cmd_source", lambda args: (_ for _ in ()).throw(KeyboardInterrupt()))
    parser = gcli.parser
    monkeypatch.setattr(gcli, "parser", lambda: _with_run(parser(), "source", gcli.cmd_source))
    assert gcli.main(["source"]) == 130
    assert capsys.readouterr().err.strip().splitlines() == ["gpu-check: interrupted"]


def _with_run(p, name, fn):
    import argparse
    sub = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))
    sub.choices[name].set_defaults(run=fn)
    return p
