"""The `kernels` check group: every corpus of the project (parts.PARTS) on this GPU, in one command.

The kernel corpus (tests/data/kernels) and the CuTe tutorials (tests/data/realworld) run through
check.run in this process (their buffers against the committed H200 run and layoutsim.ptx, their
ncu totals against both). Every other corpus runs through its own measure command
(`python -m <its module> --out TMP`, parts.Part.module, in a child process: each opens its own CUDA
context, and some run under ncu), and what it measured is compared with the committed measurement:
every output byte for byte, every ncu total inside the min..max of the committed runs. A corpus
whose prerequisite is missing on this machine (Triton, the carried binaries, pycuda) is reported as
skipped with the reason; without ncu its costs are. A progress line per corpus; the report's
groups.kernels.parts holds one summary per corpus (parts.new_summary's fields).
With --record DIR each child's folder is kept under DIR/<the corpus's folder under tests/data>.
"""
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from layoutsim.files import measured_data

from ..checks.common import Result
from . import check
from . import ncu as N
from . import parts as P
from .corpus import MANIFEST

NEEDS_KERNELS = False     # the corpora bring their own PTX
MEASURE_TIMEOUT = 300     # seconds one corpus's measure command may take (each takes 1-2 minutes on an H200)
IN_PROCESS = ("cute", "kernels")   # in this order: the kernel corpus's ncu run gives the context up


def measure_runner(part, out):
    """Runs the part's measure command into `out`: (exit code, the tail of its output). Tests
    replace it with a stand-in."""
    cmd = [sys.executable, "-m", part.module, "--out", str(out), *part.args]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=MEASURE_TIMEOUT, cwd=P.ROOT)
        return r.returncode, (r.stderr or r.stdout).strip()[-400:]
    except subprocess.TimeoutExpired:
        return 124, f"timed out after {MEASURE_TIMEOUT} s"


def _pad(name):
    return f"[kernels]  {name}:{' ' * max(1, 11 - len(name))}"


def run(session):
    out, summaries = [], []
    chosen = P.select(getattr(session, "corpora", None))
    for part in sorted(chosen, key=lambda p: IN_PROCESS.index(p.name) if p.name in IN_PROCESS else len(IN_PROCESS)):
        t0 = time.perf_counter()
        session.log(f"{_pad(part.name)}{part.what} ...")
        if part.name in IN_PROCESS:
            results, s = _in_process(part, session)
        else:
            results, s = _measured(part, session)
        out += results
        s["seconds"] = round(time.perf_counter() - t0, 1)
        summaries.append(s)
        session.log(f"{_pad(part.name)}{P.summary_line(s).split(']', 1)[1].strip()} ({s['seconds']:.0f} s)")
    session.group_info.setdefault("kernels", {})["parts"] = summaries
    return out


def _in_process(part, session):
    if part.name == "cute":
        folder = part.data
        if not (folder / MANIFEST).is_file():
            s = P.new_summary(part)
            s["skipped"] = f"{folder}/{MANIFEST} is missing"
            return [], s
        # without ncu: its totals over five ncu runs are gpu_check.realworld.measure's
        results = check.run(session.backend, folder, record=session.record, log=session.log, use_ncu=False)
    else:
        results = check.run(session.backend, part.data, record=session.record, log=session.log)
    return results, summary_of(part, results)


def summary_of(part, results):
    """parts' summary from check.run's results (its checks: recorded, model, recorded-ncu, ...)."""
    s = P.new_summary(part)
    skips = [r for r in results if r.status == "skip" and r.check in ("launch", "files")]
    if skips:
        s["skipped"] = skips[0].note
        return s
    launched = {r.entry for r in results if r.check in ("recorded", "model", "launch")}
    s["launches"] = len(launched)
    s["bit_identical"] = sum(r.status == "pass" for r in results if r.check == "recorded")
    s["not_measured"] = len(launched - {r.entry for r in results if r.check == "recorded"})
    ncu = [r for r in results if r.check == "recorded-ncu"]
    s["costs_compared"], s["costs_in_range"] = len(ncu), sum(r.status == "pass" for r in ncu)
    s["errors"] = sum(r.status == "error" for r in results)
    s["problems"] = [f"{r.entry} [{r.check}]: {r.note or f'{r.mismatches} of {r.compared} differ'}"
                     for r in results if r.status in ("fail", "error")][:10]
    skipped_ncu = [r.note for r in results if r.status == "skip" and r.check == "ncu"]
    if skipped_ncu:
        s["costs_skipped"] = skipped_ncu[0]
    return s


def _measured(part, session):
    s = P.new_summary(part)
    why = part.needs() if part.needs else None
    if why:
        s["skipped"] = why
        return [Result("kernels", part.name, "measure", status="skip", note=f"{part.name}: {why}")], s
    if part.costs and N.ncu_path() is None:
        s["costs_skipped"] = "ncu (Nsight Compute) not found: no totals measured"
    with tempfile.TemporaryDirectory(prefix=f"kernels_{part.name}_") as work:
        rc, tail = measure_runner(part, Path(work))
        try:
            fresh = part.read(work)
        except (OSError, ValueError, KeyError) as e:
            fresh, tail = {}, f"{tail}; its output cannot be read: {e}"
        if not fresh:
            s["errors"] += 1
            s["problems"].append(f"{part.command} exited {rc} and measured nothing: {tail}")
            return [Result("kernels", part.name, "measure", status="error", note=s["problems"][-1])], s
        if rc:
            s["problems"].append(f"{part.command} exited {rc}: {tail}")
        if session.record:
            shutil.copytree(work, Path(session.record) / _record_folder(part), dirs_exist_ok=True)
    return _compare(part, fresh, s), s


def _record_folder(part):
    """The part's folder under tests/data (e.g. realworld/cub), where --record puts its run."""
    data = part.data.resolve()
    top = measured_data("kernels").resolve().parent
    return data.relative_to(top) if data.is_relative_to(top) else Path(part.name)


def _compare(part, fresh, s):
    """Results (and the summary) of a fresh measurement against the committed one."""
    committed = part.read(part.data)
    results = []
    if not committed:
        s["problems"].append(f"nothing committed under {part.data} to compare with (--record keeps this run)")
    for name, launch in fresh.items():
        rec = committed.get(name)
        if rec is None:
            s["launches"] += 1
            s["not_measured"] += 1
            continue
        same, diff = P.identical(rec.outputs, launch.outputs)
        lines = [x for run in launch.ncu for x in (P.outside_range(rec.ncu, run) or [])]
        compared = any(P.outside_range(rec.ncu, run) is not None for run in launch.ncu)
        P.tally(s, name, same, diff, lines if compared else None)
        r = Result("kernels", f"{part.name}/{name}", "recorded", cases=1, compared=len(rec.outputs),
                   mismatches=0 if same else 1, note=diff or "")
        results.append(r.finish())
        if compared:
            results.append(Result("kernels", f"{part.name}/{name}", "recorded-ncu", cases=1, compared=len(launch.ncu),
                                  mismatches=len(lines), note="; ".join(lines)[:300]).finish())
    return results
