"""The corpus launches under Nsight Compute: whole-launch totals, and per-instruction source counters.

ncu's `.sum` of an l1tex or smsp counter adds it over every unit of the GPU during the profiled
launch, so a total covers all CTAs of the grid, whichever SM ran them: that is what the
executor's `Run.shared_wavefronts` reproduces (the sum over every warp-level shared access of the
launch). ncu replays a kernel once per pass and restores device memory in between, so the
buffers and the counts belong to the same single launch.

Metrics: the contract's six (BASE) always; more (shared wavefronts by op, bank conflicts, global
requests and sectors by op, instruction counts by memory op) when `ncu --query-metrics` lists
them on this GPU, since an unknown name makes ncu refuse the whole run.
"""
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from gpu_check.bank_probe import ncu_csv
from layoutsim.demangle import demangle

SHARED_LD = ncu_csv.LD
SHARED_ST = ncu_csv.ST
# global requests and sectors per op, as the executor's Run.global_totals splits them
GLOBAL_REQUESTS = {op: f"l1tex__t_requests_pipe_lsu_mem_global_op_{op}.sum" for op in ("ld", "st", "atom", "red")}
GLOBAL_SECTORS = {op: f"l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum" for op in ("ld", "st", "atom", "red")}
BASE = (SHARED_LD, SHARED_ST, GLOBAL_REQUESTS["ld"], GLOBAL_REQUESTS["st"], GLOBAL_SECTORS["ld"], GLOBAL_SECTORS["st"])
EXTRA = re.compile(r"^(l1tex__data_pipe_lsu_wavefronts_mem_shared(_op_\w+)?"
                   r"|l1tex__data_bank_(conflicts|reads|writes)_pipe_lsu_mem_shared(_op_\w+)?"
                   r"|l1tex__t_(requests|sectors)_pipe_lsu_mem_global_op_\w+"
                   r"|smsp__(sass_)?inst_executed_op_(shared|global|ldsm|stsm|ldgsts|generic|local)\w*"
                   r"|smsp__inst_executed|smsp__sass_thread_inst_executed)$")
MAX_METRICS = 32
SHARED_GMMA = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma.sum"
FIRST = ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_misc")


def ncu_path():
    from gpu_check.checks.banks import ncu_path as find
    return find()


def available_metrics(ncu, log=print):
    """(base metric names ncu lists for the GPU, raw query text), or (None, text) when the query fails."""
    try:
        r = subprocess.run([ncu, "--query-metrics"], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        log(f"ncu --query-metrics failed: {e}")
        return None, ""
    names = set(re.findall(r"^([a-z0-9]+__[a-z0-9_]+)", r.stdout, re.M))
    return (names or None), r.stdout


def choose_metrics(available):
    """BASE plus the EXTRA metrics ncu lists (as .sum), shared-memory ones first, at most MAX_METRICS
    (each metric group can cost ncu another replay pass of every launch)."""
    if not available:
        return list(BASE)
    # wgmma's operand reads (op_gmma) and the SYNCS-unit traffic of mbarriers (op_misc) first: the
    # wgmma/TMA cases compare them with the executor's Run.gmma_wavefronts
    extra = sorted((n not in FIRST, not n.startswith("l1tex__data"), n) for n in available
                   if EXTRA.match(n) and f"{n}.sum" not in BASE)
    extra = [(a, n) for _, a, n in extra]
    return list(BASE) + [f"{n}.sum" for _, n in extra][:MAX_METRICS - len(BASE)]


def _child(corpus_dir, plan_path):
    return [sys.executable, "-m", "gpu_check.kernel_corpus.launch", "--dir", str(corpus_dir), "--plan", str(plan_path)]


def _env():
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])          # the child imports gpu_check from here
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    return env


def write_plan(path, launches, cubin_paths):
    Path(path).write_text(json.dumps({"launches": launches,
                                      "cubins": {f"{s}|{v}": str(p) for (s, v), p in cubin_paths.items()}}))


def totals(ncu, corpus_dir, launches, cubin_paths, metrics, work, timeout):
    """Run the launches under ncu with `metrics`; returns (per-launch {metric: value} or None,
    problems, raw csv text, command)."""
    work = Path(work)
    plan = work / "plan_totals.json"
    write_plan(plan, launches, cubin_paths)
    log_file = work / "ncu_totals.csv"
    cmd = [ncu, "--csv", "--clock-control", "none", "--cache-control", "none", "--metrics", ",".join(metrics),
           "--log-file", str(log_file), *_child(corpus_dir, plan)]
    r = _run(cmd, timeout)
    text = log_file.read_text() if log_file.exists() else ""
    rows = ncu_csv.parse(text) or ncu_csv.parse(r["stdout"])
    problems = []
    if r["rc"] != 0:
        problems.append(f"ncu exited {r['rc']}: {(r['stderr'] or r['stdout'])[-600:]}")
    return assign(launches, rows, problems), problems, text + "\n" + r["stdout"][-4000:], " ".join(cmd)


def _base(name):
    """A kernel's function name without namespaces, template arguments or return type: ncu prints
    C++ kernels demangled in its own spelling ('void gemm_device<tuple<int, ...>>'), the plan
    names their PTX entry ('_Z11gemm_deviceIN4cute5tuple...')."""
    if name.startswith("_Z"):
        full = demangle(name)
        if full is None:                  # beyond the demangler: the mangled name's last source name
            i, last = 3 if name.startswith("_ZN") else 2, name
            while i < len(name) and name[i].isdigit():
                j = i
                while j < len(name) and name[j].isdigit():
                    j += 1
                n = int(name[i:j])
                last, i = name[j:j + n], j + n
            return last
        name = full
    return name.split("(")[0].split("<")[0].split()[-1].split("::")[-1] if name.strip() else name


def assign(launches, rows, problems):
    """ncu rows -> one {metric: value} per planned launch (None where ncu gave none); checks the
    kernel names."""
    out = [None] * len(launches)
    if len(rows) != len(launches):
        problems.append(f"ncu reported {len(rows)} launches for {len(launches)} planned")
    for i, (job, row) in enumerate(zip(launches, rows)):
        want = job.get("kernel")
        got = (row.get("kernel") or "").split("(")[0].strip()
        if want and got and got != want and _base(got) != _base(want):
            problems.append(f"launch {i}: ncu names kernel {got!r}, the plan {want!r}; later launches not assigned")
            break
        out[i] = row["metrics"]
    return out


def source_counters(ncu, corpus_dir, launches, cubin_paths, work, timeout):
    """The SourceCounters section for the launches, exported, then printed per SASS instruction
    (`--page source --csv --print-source sass` and `cuda,sass`). Returns ({name: text}, problems)."""
    work = Path(work)
    plan = work / "plan_source.json"
    write_plan(plan, launches, cubin_paths)
    rep = work / "source_counters.ncu-rep"
    cmd = [ncu, "--section", "SourceCounters", "--clock-control", "none", "--cache-control", "none",
           "--export", str(rep), "--force-overwrite", *_child(corpus_dir, plan)]
    r = _run(cmd, timeout)
    problems = [] if r["rc"] == 0 else [f"ncu SourceCounters exited {r['rc']}: {(r['stderr'] or r['stdout'])[-600:]}"]
    out = {"source_counters.log": " ".join(cmd) + "\n" + r["stdout"][-8000:] + r["stderr"][-4000:]}
    if not rep.exists():
        return out, problems + ["no SourceCounters report was written"]
    for name, extra in (("source_sass.csv", ["--print-source", "sass"]), ("source_cuda_sass.csv", ["--print-source", "cuda,sass"])):
        q = _run([ncu, "--import", str(rep), "--page", "source", "--csv", *extra], 120)
        out[name] = q["stdout"]
        if q["rc"] != 0:
            problems.append(f"ncu --import --page source {' '.join(extra)} exited {q['rc']}: {q['stderr'][-300:]}")
    d = _run([ncu, "--import", str(rep), "--page", "details", "--csv"], 120)
    out["source_details.csv"] = d["stdout"]
    return out, problems


def _run(cmd, timeout):
    t0 = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=_env())
        return {"rc": p.returncode, "stdout": p.stdout, "stderr": p.stderr, "seconds": time.time() - t0}
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        return {"rc": 124, "stdout": out, "stderr": f"timed out after {timeout} s", "seconds": time.time() - t0}
    except OSError as e:
        return {"rc": 127, "stdout": "", "stderr": str(e), "seconds": 0.0}
