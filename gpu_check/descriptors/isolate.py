"""Run tasks (tasks.py) in worker processes, so that a fault ends only the worker, and say which
task caused it.

A CUDA fault (an illegal address, a launch failure) poisons the process's context: every later
launch in it fails too (the first H200 run lost 198 cases to one faulting TMA box). So each phase
gets its own worker process; a worker writes a journal line before and after every task, and
exits as soon as its context is gone. The parent reads the journal: finished tasks are kept,
the task that was running when the worker died (or hung past TASK_SECONDS, or raised with the
context gone) is the culprit. A culprit of several descriptors is queued again as one task per
descriptor (the healthy ones all run in the next worker, each faulting one costs a worker); a
single one becomes a finding, with its decoded descriptor or TMA box. A fresh worker takes the
remaining tasks. A phase in which FAULTS_SYSTEMATIC of the planned tasks fault before any task
succeeds is abandoned as a systematic fault rather than retried box by box, and no phase gets
more than MAX_FAULTS_PER_PHASE worker restarts.

    python -m gpu_check.descriptors.isolate JOB.json     (the worker; the parent writes JOB.json)
"""
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import deque
from pathlib import Path

import numpy as np

from .tasks import Campaign, Task, execute, finding

TASK_SECONDS = 30          # one task (one launch group) never takes this long unless it hangs
FAULTS_SYSTEMATIC = 3
MAX_FAULTS_PER_PHASE = 20  # restarts stop here (each costs a worker start, 1-2 s)
START_SECONDS = 4          # no worker starts with less budget left than this


def _journal(path):
    out = []
    try:
        with open(path) as f:
            for line in f:
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass                       # a line cut short by a crash
    except FileNotFoundError:
        pass
    return out


def _tail(path, n=600):
    try:
        return Path(path).read_text(errors="replace")[-n:].strip()
    except OSError:
        return ""


def run(campaign, lab_spec, todo, work, log=print, seconds=None, python=sys.executable):
    """Run `todo` (in order) in workers; ({task key: part}, findings, the lab's environment as
    the first worker reported it)."""
    Path(work).mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="run", dir=work))       # each call its own journals
    plan_path = work / "plan.json"
    plan_path.write_text(json.dumps(campaign.to_json()))
    t0 = time.monotonic()
    deadline = None if seconds is None else t0 + seconds
    queue = deque(todo)
    parts, findings, env = {}, [], {}
    faults, done_in_phase, faulted_roots = {}, {}, {}
    root = {t.key: t.key for t in todo}        # the planned task a split-off task came from
    n_worker = 0
    while queue:
        phase = queue[0].phase
        if faults.get(phase, 0) >= MAX_FAULTS_PER_PHASE or (
                len(faulted_roots.get(phase, ())) >= FAULTS_SYSTEMATIC and not done_in_phase.get(phase)):
            why = ("systematic: every task of the phase so far faulted" if not done_in_phase.get(phase)
                   else f"{MAX_FAULTS_PER_PHASE} faults in the phase")
            while queue and queue[0].phase == phase:
                findings.append(finding(campaign, queue.popleft(), "not run", why))
            log(f"[isolate] {phase}: abandoned ({why})")
            continue
        if deadline is not None and deadline - time.monotonic() < START_SECONDS:
            findings += [finding(campaign, t, "not run", "time budget spent") for t in queue]
            log(f"[isolate] time budget spent: {len(queue)} tasks not run")
            break
        batch = []
        while queue and queue[0].phase == phase:
            batch.append(queue.popleft())
        n_worker += 1
        job = work / f"job{n_worker}.json"
        journal, err = work / f"journal{n_worker}.jsonl", work / f"stderr{n_worker}.txt"
        partdir = work / "parts"
        job.write_text(json.dumps({"plan": str(plan_path), "lab": lab_spec, "tasks": [t.to_json() for t in batch],
                                   "journal": str(journal), "parts": str(partdir)}))
        tw = time.monotonic()
        with open(err, "w") as ef:
            proc = subprocess.Popen([python, "-m", "gpu_check.descriptors.isolate", str(job)], stderr=ef,
                                    env=dict(os.environ, PYTHONUNBUFFERED="1"))
            killed = _watch(proc, journal, deadline)
        rc = proc.returncode
        ended, running, error = set(), None, {}
        for x in _journal(journal):
            if "env" in x:
                env = env or x["env"]
            elif "start" in x:
                running = x["start"]
            elif "done" in x:
                with np.load(x["part"]) as z:
                    parts[x["done"]] = {k: z[k] for k in z.files}
                ended.add(x["done"])
                done_in_phase[phase] = done_in_phase.get(phase, 0) + 1
                running = None
            elif "error" in x:
                error[x["error"]] = x
                ended.add(x["error"])
                running = None if not x.get("fatal") else x["error"]
        for key, x in error.items():
            if not x.get("fatal"):
                findings.append(finding(campaign, Task.from_key(key), "error", x["msg"]))
        rest = [t for t in batch if t.key not in ended and t.key != running]
        if not any("start" in x for x in _journal(journal)):    # it never began: nothing to retry with
            why = killed or f"the worker did not start (exit {rc}): {_tail(err) or 'no message'}"
            findings += [finding(campaign, t, "not run", why) for t in batch]
            log(f"[isolate] worker {n_worker} ({phase}): {why[:400]}")
            continue
        if killed == "time budget spent":
            findings += [finding(campaign, t, "not run", killed)
                         for t in ([Task.from_key(running)] if running else []) + rest + list(queue)]
            queue.clear()
            rest = []
        elif running is not None:
            task = Task.from_key(running)
            msg = error.get(running, {}).get("msg") or killed or (
                f"the worker died (exit {rc}): {_tail(err) or 'no message'}")
            faults[phase] = faults.get(phase, 0) + 1
            faulted_roots.setdefault(phase, set()).add(root.get(task.key, task.key))
            if len(task.cases) > 1:
                singles = task.singles()
                for t in singles:
                    root[t.key] = root.get(task.key, task.key)
                rest = rest + singles
                log(f"[isolate] {task.label(campaign)}: fault ({msg[:160]}); again one descriptor per task")
            else:
                findings.append(finding(campaign, task, "hang" if killed else "fault", msg))
                log(f"[isolate] FAULT {task.label(campaign)}: {msg[:300]}")
        elif rc and rest:                       # died between tasks: retried, but it counts
            faults[phase] = faults.get(phase, 0) + 1
            log(f"[isolate] worker {n_worker} exited {rc} between tasks: {_tail(err, 300)}")
        queue.extendleft(reversed(rest))
        log(f"[isolate] worker {n_worker} ({phase}): {len(ended)} of {len(batch)} tasks, exit {rc}, "
            f"{time.monotonic() - tw:.1f} s")
    return parts, findings, env


def stderr_text(work):
    """Every worker's stderr that said something, labelled (for the job's output folder)."""
    out = []
    for path in sorted(Path(work).glob("run*/stderr*.txt")):
        text = path.read_text(errors="replace").strip()
        if text:
            out.append(f"== {path.parent.name}/{path.name}\n{text[-20000:]}")
    return "\n".join(out)


def _watch(proc, journal, deadline):
    """Wait for the worker; kill it when a task hangs, it never starts, or the budget is spent.
    Returns why it was killed (None: it ended by itself)."""
    size, moved = -1, time.monotonic()
    while proc.poll() is None:
        time.sleep(0.1)
        now = time.monotonic()
        try:
            s = os.path.getsize(journal)
        except OSError:
            s = 0
        if s != size:
            size, moved = s, now
        why = None
        if deadline is not None and now > deadline:
            why = "time budget spent"
        elif now - moved > TASK_SECONDS and "start" in (_journal(journal) or [{}])[-1]:
            why = f"hung: no progress for {TASK_SECONDS} s"
        elif now - moved > 2 * TASK_SECONDS:
            why = f"hung: the worker wrote nothing for {2 * TASK_SECONDS} s"
        if why:
            proc.kill()
            proc.wait()
            return why
    return None


# ---- the worker ------------------------------------------------------------------------------------
def make_lab(spec):
    """The lab a JSON spec names: the GPU (a cubin) or the fake (emulate.FakeLab.from_spec)."""
    if spec["kind"] == "fake":
        from .emulate import FakeLab
        return FakeLab.from_spec(spec)
    from ..backends.cuda import CudaBackend
    from .lab import CudaLab
    return CudaLab(CudaBackend(), Path(spec["cubin"]).read_bytes())


def _write(journal, **entry):
    journal.write(json.dumps(entry) + "\n")
    journal.flush()
    os.fsync(journal.fileno())


def worker(job_path):
    job = json.loads(Path(job_path).read_text())
    campaign = Campaign.from_json(json.loads(Path(job["plan"]).read_text()))
    parts = Path(job["parts"])
    parts.mkdir(parents=True, exist_ok=True)
    lab = make_lab(job["lab"])
    t0 = time.perf_counter()
    with open(job["journal"], "a") as journal:
        _write(journal, env=lab.environment())
        for x in job["tasks"]:
            task = Task.from_json(x)
            _write(journal, start=task.key)
            try:
                part = execute(lab, campaign, task)
            except Exception as e:   # noqa: BLE001 - reported to the parent, which decides
                fatal = not lab.healthy()
                _write(journal, error=task.key, fatal=fatal, msg=f"{type(e).__name__}: {str(e).strip()[:400]}")
                if fatal:
                    return 3
                continue
            path = parts / f"{task.key}.npz"
            tmp = path.with_suffix(".tmp.npz")
            np.savez(tmp, **part)
            os.replace(tmp, path)
            _write(journal, done=task.key, part=str(path))
    print(f"[worker] {len(job['tasks'])} tasks ({time.perf_counter() - t0:.1f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(worker(sys.argv[1]))
