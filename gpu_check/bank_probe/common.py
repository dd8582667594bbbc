"""What the one-instruction probes share on the Python side: this package's bank probe and
gpu_check/coalesce_probe (their CUDA host side is probe_host.cuh). Running the tools, the
environment a corpus records, the order patterns are measured in, building a probe.cu and
reading its SASS, and the lines their summaries print about a corpus and a fit.
"""
import argparse
import datetime
import os
import platform
import re
import subprocess
from collections import Counter

from layoutsim import sass as SASS

HERE = os.path.dirname(os.path.abspath(__file__))


def log(msg):
    print(msg, flush=True)


def run_cmd(cmd, timeout=None, **kw):
    """(returncode, stdout, stderr); 127 when the program is missing, 124 when it timed out."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
        return p.returncode, p.stdout, p.stderr
    except FileNotFoundError as e:
        return 127, "", str(e)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        err = e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
        return 124, out, err + f"\n(timed out after {timeout} s)"


def measurement_order(patterns):
    """Round-robin over ops (stable within an op), so any prefix covers every op."""
    by_op = {}
    for p in patterns:
        by_op.setdefault(p["op"], []).append(p)
    queues = list(by_op.values())
    out = []
    while any(queues):
        for q in queues:
            if q:
                out.append(q.pop(0))
    return out


def environment(nvcc, ncu, dry_run):
    """Where a corpus was measured: date, host, versions of Python, numpy, layoutsim, the commit,
    CUDA (nvcc), and unless a dry run the GPU, driver and ncu."""
    env = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "dry_run": bool(dry_run), "host": platform.node(), "python": platform.python_version()}
    import numpy
    import layoutsim
    env["numpy"] = numpy.__version__
    env["layoutsim"] = layoutsim.__version__
    rc, out, _ = run_cmd(["git", "rev-parse", "HEAD"], timeout=10, cwd=HERE)
    if rc == 0:
        env["git_commit"] = out.strip()
    rc, out, _ = run_cmd([nvcc, "--version"], timeout=30)
    if rc == 0:
        m = re.search(r"release ([\d.]+), V([\d.]+)", out)
        env["cuda"] = m.group(1) if m else out.strip().splitlines()[-1]
        env["nvcc"] = m.group(2) if m else ""
    if not dry_run:
        rc, out, _ = run_cmd(["nvidia-smi", "--query-gpu=name,driver_version,compute_cap",
                              "--format=csv,noheader"], timeout=30)
        if rc == 0 and out.strip():
            parts = [s.strip() for s in out.strip().splitlines()[0].split(",")]
            env["gpu"], env["driver"] = parts[0], parts[1]
            if len(parts) > 2:
                env["compute_capability"] = parts[2]
        rc, out, _ = run_cmd([ncu, "--version"], timeout=60)
        if rc == 0:
            m = re.search(r"Version\s+([^\n]+)", out)
            env["ncu"] = m.group(1).strip() if m else " ".join(out.split())
    else:
        env.update(gpu="(dry run: no GPU; 'measured' values are the model's)", driver="", ncu="")
    return env


def driver_options(module, doc, corpus, simulate, chunk, chunk_help, max_seconds):
    """The options every probe driver takes, the first of its --help: the folder for `corpus` and
    the rest, a dry run (and the rules its fake GPU follows, as in `simulate`), the tools, ncu's
    chunks and time budget, and a limit on the patterns."""
    ap = argparse.ArgumentParser(prog=f"python -m {module}", description=doc.splitlines()[0])
    ap.add_argument("--out", required=True, help=f"directory for {corpus}, summary.txt, ncu.csv, sass.txt")
    ap.add_argument("--dry-run", action="store_true", help="no GPU, no ncu: the model supplies the numbers")
    ap.add_argument("--simulate", help=f"dry run: rules the fake GPU follows, e.g. {simulate}")
    ap.add_argument("--arch", default="sm_90", help="nvcc -arch (default sm_90)")
    ap.add_argument("--nvcc", default="nvcc")
    ap.add_argument("--ncu", default="ncu")
    ap.add_argument("--chunk", type=int, default=chunk, help=chunk_help)
    ap.add_argument("--max-seconds", type=float, default=max_seconds,
                    help=f"time budget under ncu (default {max_seconds:g})")
    ap.add_argument("--limit", type=int, help="measure only the first N patterns of the round-robin order")
    return ap


def compile_probe(nvcc, source, exe, arch):
    """nvcc -O3 -arch=ARCH -o EXE SOURCE (probe_host.cuh is found beside the source, so the
    probes build in place, installed or not); returns (returncode, exe, the command and its output)."""
    cmd = [nvcc, "-O3", f"-arch={arch}", "-o", exe, source]
    rc, out, err = run_cmd(cmd, timeout=300)
    return rc, exe, " ".join(cmd) + "\n" + out + err


# {function: [instruction text]} of `cuobjdump -sass` output (the parser: layoutsim/sass.py)
sass_functions = SASS.cuobjdump_functions


def per_op(patterns):
    """{op: number of patterns}, in corpus order."""
    return dict(Counter(p["op"] for p in patterns))


def per_op_lines(patterns, width):
    """A corpus printout's lines: each op and its number of patterns."""
    return [f"  {op:<{width}} {n}" for op, n in per_op(patterns).items()]


def setting(key):
    """A candidate setting ((knob, value), ...) as text; a None value is a knob that does not apply."""
    return " ".join(f"{k}={v}" for k, v in key if v is not None)


def verdict(table, fits, closest, ids):
    """The summary's words on one fit table ({setting: [mismatching pattern ids]}): `fits` filled
    with the settings that fit, else `closest` with the setting of fewest mismatches (`key`),
    their number (`n`) and the first `ids` of them (`ids`)."""
    good = [k for k, bad in table.items() if not bad]
    if good:
        return fits.format(" | ".join(setting(k) for k in good))
    k, bad = min(table.items(), key=lambda kv: len(kv[1]))
    return closest.format(key=setting(k), n=len(bad), ids=", #".join(map(str, bad[:ids])))
