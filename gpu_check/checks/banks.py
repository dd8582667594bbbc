"""Banks: the bank probe measured under ncu, compared with the bank model.

The measurement is the bank-model author's program, `python -m gpu_check.bank_probe.measure
--out DIR`, which runs every pattern of the bank corpus under Nsight Compute and writes
DIR/bank_corpus.json (the patterns, their measured wavefronts, the environment). This group runs
it, reads that file, and compares every measured pattern with the bank model's current rules
(`layoutsim.banks.nvidia.DEFAULT`, through the probe's prediction code, which honours active-lane
masks): one result per op. Without ncu the group is skipped with a note; nothing else is affected.
With `--record DIR` the probe writes into DIR/banks/ (bank_corpus.json is what tests/data/banks/
keeps).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from .common import MAX_DETAILS, Mismatch, Result


def ncu_path():
    p = shutil.which("ncu")
    if p:
        return p
    for cand in ("/usr/local/cuda/bin/ncu",):
        if os.path.exists(cand):
            return cand
    return None


NEEDS_KERNELS = False


def skip_reason():
    """Why the group cannot run here (one line), or None."""
    if ncu_path() is None:
        return "ncu (Nsight Compute) not found on PATH or in /usr/local/cuda/bin: bank checks skipped"
    return None


def measure(out_dir, max_seconds=None, extra=(), timeout=600, module="gpu_check.bank_probe.measure"):
    """Run a probe (the bank probe unless `module` names another); returns (returncode, seconds,
    log tail)."""
    import time
    env = dict(os.environ)
    ncu = ncu_path()
    cmd = [sys.executable, "-m", module, "--out", str(out_dir)]
    if ncu:
        env["PATH"] = os.path.dirname(ncu) + os.pathsep + env.get("PATH", "")
        cmd += ["--ncu", ncu]
    if max_seconds is not None:
        cmd += ["--max-seconds", str(max_seconds)]
    cmd += list(extra)
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    tail = (r.stdout + r.stderr).strip().splitlines()[-8:]
    return r.returncode, time.perf_counter() - t0, tail


def compare(out_dir, arch="sm_90"):
    """One Result per op: the probe's measured wavefronts (bank_corpus.json) against the bank
    model's current rules, through the probe's own prediction code (which honours active masks)."""
    from layoutsim.banks import nvidia
    from gpu_check.bank_probe import corpus
    data = json.loads((Path(out_dir) / "bank_corpus.json").read_text())
    pats = data["patterns"]
    done = [p for p in pats if p.get("measured") is not None]
    pred = corpus.predictions(done, nvidia.DEFAULT, arch) if done else []

    def check(i, p):                            # one value: the pattern's wavefronts
        if int(p["measured"]) == int(pred[i]):
            return 1, [], ()
        where = f"pattern #{p['id']} {p.get('tag', '')!r}" + \
            ("" if p.get("active", corpus.FULL) == corpus.FULL else f" active={p['active']:#010x}")
        return 1, [Mismatch(int(p["id"]), where, "s32", int(pred[i]), int(p["measured"]),
                            note="expected = bank model wavefronts, got = ncu; offsets "
                                 + ",".join(map(str, p["offsets"])))], ()
    return results_per_op("banks", pats, done, check), data.get("environment", {})


def results_per_op(group, patterns, done, check):
    """What the banks and coalescing groups share: one Result per op (in corpus order) over the
    op's measured patterns, `done`. check(i, done[i]) -> (values compared, [Mismatch], notes).
    An op with nothing measured is skipped; unmeasured patterns (the ncu time budget) are noted."""
    results = []
    for op in dict.fromkeys(p["op"] for p in patterns):
        cases, compared, bad, notes = 0, 0, [], set()
        for i, p in enumerate(done):
            if p["op"] == op:
                n, mismatches, why = check(i, p)
                cases += 1
                compared += n
                bad += mismatches
                notes.update(why)
        missing = sum(1 for p in patterns if p["op"] == op) - cases
        head = [f"{missing} patterns not measured (ncu time budget)"] if missing else []
        r = Result(group, op, "ncu", cases=cases, compared=compared, mismatches=len(bad), details=bad[:MAX_DETAILS],
                   note="; ".join(head + sorted(notes)))
        if not cases:
            r.status = "skip"
        results.append(r.finish())
    return results


def run(session):
    """The probe under ncu, in its own process: the session gives the GPU up first."""
    return run_probe(session, "banks", measure_and_compare)


def run_probe(session, group, measure_and_compare):
    """What the banks and coalescing groups share: release the session's GPU (the probe runs in
    its own process, under ncu), then measure into the record folder (if any) and compare."""
    release = getattr(session.backend, "release", None)
    if release:
        release()
    return measure_and_compare(session.record / group if session.record else None, session.bank_seconds)


def measure_and_compare(keep_dir=None, max_seconds=None):
    return probe_and_compare("banks", "bank corpus", "gpu_check.bank_probe.measure", "bank_corpus.json", compare,
                             skip_reason(), keep_dir, max_seconds)


def probe_and_compare(group, what, module, corpus, compare, reason, keep_dir=None, max_seconds=None, timeout=600):
    """Run a probe under ncu into keep_dir (or a temporary folder), then compare(folder).
    Failures are one error result."""
    if reason:
        return [Result(group, what, "ncu", status="skip", note=reason)]
    from layoutsim.files import make_dir
    out_dir = (Path(make_dir(keep_dir, "--record folder", parents=True)) if keep_dir
               else Path(tempfile.mkdtemp(prefix=f"gpu_check_{group}_")))
    try:
        rc, secs, tail = measure(out_dir, max_seconds, timeout=timeout, module=module)
    except subprocess.TimeoutExpired:
        return [Result(group, what, "ncu", status="error", note=f"{module} timed out")]
    if rc != 0 or not (out_dir / corpus).exists():
        return [Result(group, what, "ncu", status="error", note=f"{module} exited {rc}: " + " | ".join(tail))]
    try:
        res, _ = compare(out_dir)
    except Exception as e:   # noqa: BLE001 - reported, not hidden
        return [Result(group, what, "ncu", status="error", note=f"cannot compare the probe's output: {e!r}")]
    return res
