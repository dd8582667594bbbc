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


def measure(out_dir, max_seconds=None, extra=(), timeout=600):
    """Run the probe; returns (returncode, seconds, log tail)."""
    import time
    env = dict(os.environ)
    ncu = ncu_path()
    cmd = [sys.executable, "-m", "gpu_check.bank_probe.measure", "--out", str(out_dir)]
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
    by_op = {}
    for p, model in zip(done, pred):
        by_op.setdefault(p["op"], []).append((p, model))
    missing = {}
    for p in pats:
        if p.get("measured") is None:
            missing[p["op"]] = missing.get(p["op"], 0) + 1
    results = []
    for op in dict.fromkeys(p["op"] for p in pats):
        rows = by_op.get(op, [])
        bad = [(p, m) for p, m in rows if int(p["measured"]) != int(m)]
        details = [Mismatch(int(p["id"]), f"pattern #{p['id']} {p.get('tag', '')!r}"
                            + ("" if p.get("active", corpus.FULL) == corpus.FULL else f" active={p['active']:#010x}"),
                            "s32", int(m), int(p["measured"]),
                            note="expected = bank model wavefronts, got = ncu; offsets "
                                 + ",".join(map(str, p["offsets"])))
                   for p, m in bad[:MAX_DETAILS]]
        note = f"{missing[op]} patterns not measured (ncu time budget)" if missing.get(op) else ""
        r = Result("banks", op, "ncu", cases=len(rows), compared=len(rows), mismatches=len(bad), details=details,
                   note=note)
        if not rows:
            r.status = "skip"
        results.append(r.finish())
    return results, data.get("environment", {})


def run(session):
    """The probe under ncu, in its own process: the session gives the GPU up first."""
    release = getattr(session.backend, "release", None)
    if release:
        release()
    return measure_and_compare(session.record / "banks" if session.record else None, session.bank_seconds)


def measure_and_compare(keep_dir=None, max_seconds=None):
    reason = skip_reason()
    if reason:
        return [Result("banks", "bank corpus", "ncu", status="skip", note=reason)]
    from layoutsim.files import make_dir
    out_dir = Path(make_dir(keep_dir, "--record folder")) if keep_dir else Path(tempfile.mkdtemp(prefix="gpu_check_banks_"))
    try:
        rc, secs, tail = measure(out_dir, max_seconds)
    except subprocess.TimeoutExpired:
        return [Result("banks", "bank corpus", "ncu", status="error", note="the bank probe timed out")]
    if rc != 0 or not (out_dir / "bank_corpus.json").exists():
        return [Result("banks", "bank corpus", "ncu", status="error",
                       note=f"bank probe exited {rc}: " + " | ".join(tail))]
    try:
        res, _ = compare(out_dir)
    except Exception as e:   # noqa: BLE001 - reported, not hidden
        return [Result("banks", "bank corpus", "ncu", status="error", note=f"cannot compare the probe's output: {e!r}")]
    return res
