"""gpu-check group `kernels`: run the kernel corpus on the GPU and compare, bit for bit.

Every case's sm_90 PTX is JIT-compiled by the driver and launched on its stored inputs
(measure.run_plain). Each case gives up to three results:
  model     every final buffer against `layoutsim.ptx.run` on the same PTX and inputs, and the
            launch's shared wavefront totals against ncu's (when the executor is in this checkout)
  recorded  every final buffer against the committed H200 run (<case>.h200.npz), and the ncu
            totals against h200.json's: the GPU, driver or JIT changed if these differ
  ncu       (only with ncu) the launches under Nsight Compute; a missing value is an error
With --record DIR the run is written to DIR/kernels/ the way tests/data/kernels/ keeps it.
"""
import json
import time
from pathlib import Path

import numpy as np

from layoutsim.formats import dtype_format, numpy_dtype

from ..checks.common import MAX_DETAILS, Mismatch, Result
from . import corpus as C
from . import measure as M
from . import ncu as N


def _where(name, i, shape, flat):
    idx = np.unravel_index(int(flat), shape) if shape else ()
    return f"{name} arg{i}[{']['.join(map(str, idx))}]"


def diff_buffers(entry, expected, got, check):
    """One Result: every element of every array argument, compared as raw bits."""
    r = Result("kernels", entry["name"], check, cases=1)
    for i, (a, e, g) in enumerate(zip(entry["args"], expected, got)):
        if a["kind"] != "array":
            continue
        raw = np.dtype(f"u{e.dtype.itemsize}")
        ev, gv = np.ascontiguousarray(e).view(raw).reshape(-1), np.ascontiguousarray(g).view(raw).reshape(-1)
        bad = np.flatnonzero(ev != gv)
        r.compared += ev.size
        r.mismatches += bad.size
        for k in bad[:MAX_DETAILS - len(r.details)]:
            r.details.append(Mismatch(0, _where(entry["name"], i, a["shape"], k), dtype_format(numpy_dtype(a["dtype"])),
                                      int(ev[k]), int(gv[k])))
    return r.finish()


# case -> {ncu total: (the model's count, the H200's)}: measured differences the model does not
# explain, compared as these two numbers (a change of either is a mismatch). wgmma_rs_bf16 (A from
# registers, loaded by ldmatrix.x4 between the HGMMAs of one warpgroup): ncu counts 616 op_ld
# wavefronts, 104 more than its LDSMs' 512, in every launch measured (the sm_90 PTX, the ptxas
# cubin, a gpu-check run; 2026-12-01), while the SourceCounters give each LDSM its ideal 128
# (4 x 32 executions) and no other instruction an op_ld wavefront: the excess is not attributed
# to any instruction, and the model counts the LDSMs' 512. It comes with ldmatrix issued while a
# wgmma of the warpgroup is in flight: the same kernel with the loads first, a wait after each
# wgmma, or no wgmma counts 512 on the H200 too (tests/data/kernels/wgmma_rs_overlap.cu and
# .h200.json, 2026-12-02; tests/ptx/test_wgmma_rs_overlap.py).
UNMODELLED = {"wgmma_rs_bf16": {N.SHARED_LD: (512, 616)}}


def diff_totals(name, expected, got, check, keys=(N.SHARED_LD, N.SHARED_ST)):
    """expected: the model's totals (check "model-ncu") or the recorded ones; got: ncu's."""
    r = Result("kernels", name, check, cases=1)
    known = UNMODELLED.get(name, {}) if check == "model-ncu" else {}
    for k in keys:
        if expected.get(k) is None or got.get(k) is None:
            continue
        r.compared += 1
        if k in known and (int(expected[k]), int(got[k])) == known[k]:
            r.explain.append(f"{k}: model {expected[k]}, ncu {got[k]}: the documented unmodelled difference")
            continue
        if int(expected[k]) != int(got[k]):
            r.mismatches += 1
            r.details.append(Mismatch(0, f"{name}: {k}", "s32", int(expected[k]), int(got[k])))
    return r.finish()


def model_runner():
    """The model the GPU's buffers are compared with: layoutsim.ptx.run (tests replace it, or set
    it to None to compare with the recorded run only)."""
    from layoutsim.ptx import run
    return run


def _model_check(run, entry, directory, got):
    ptx = (Path(directory) / C.run_ptx(entry)).read_text()
    inputs = C.load_inputs(entry, directory)
    res = run(ptx, entry["kernel"], tuple(entry["grid"]), tuple(entry["block"]), C.launch_args(entry, inputs),
              **C.run_options(entry, inputs))
    expected = C.buffers_by_arg(entry, res.buffers)
    return diff_buffers(entry, expected, got, "model"), res.shared_wavefronts


def run(backend, directory=C.DATA, record=None, log=print, use_ncu=True):
    problems = C.validate(directory)
    if problems:
        return [Result("kernels", "kernel corpus", "files", status="error", note=problems[0])]
    drv = getattr(backend, "drv", None)
    if drv is None:
        return [Result("kernels", "kernel corpus", "launch", status="skip",
                       note="this backend cannot launch PTX kernels (the corpus needs pycuda)")]
    manifest = C.load_manifest(directory)
    problems = []
    runs = M.run_plain(drv, directory, manifest, ["sm_90"], {}, problems, log=lambda s: None)
    committed = _committed(directory)
    model = model_runner()
    results, model_waves = [], {}
    for e in manifest:
        r = runs.get(e["name"], {}).get("sm_90", {})
        if "buffers" not in r:
            results.append(Result("kernels", e["name"], "launch", status="error", note=r.get("error", "not run")))
            continue
        ref = Path(directory) / C.h200_file(e["name"])
        if ref.is_file():
            results.append(diff_buffers(e, C.load_arrays(ref, e), r["buffers"], "recorded"))
        if model is not None:
            try:
                res, model_waves[e["name"]] = _model_check(model, e, directory, r["buffers"])
                results.append(res)
            except Exception as err:   # noqa: BLE001 - the model failed on this case: reported
                results.append(Result("kernels", e["name"], "model", status="error", note=f"layoutsim.ptx: {err}"))
    if model is None:
        results.append(Result("kernels", "layoutsim.ptx", "model", status="skip",
                              note="the model comparison is off: buffers compared with the recorded run only"))
    rows = _ncu(backend, directory, manifest, runs, use_ncu, results, committed, model_waves)
    if record:
        out = Path(record) / Path(directory).name
        out.mkdir(parents=True, exist_ok=True)
        env = dict(backend.environment(), date=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
        M.record(out, manifest, runs, ["sm_90"], {(c, "sm_90"): v for c, v in (rows or {}).items()}, env,
                 list(N.BASE), problems, {})
    return results


def _committed(directory):
    p = Path(directory) / "h200.json"
    return json.loads(p.read_text())["cases"] if p.is_file() else {}


def _ncu(backend, directory, manifest, runs, use_ncu, results, committed, model_waves):
    ncu = N.ncu_path() if use_ncu else None
    if ncu is None:
        results.append(Result("kernels", "ncu totals", "ncu", status="skip",
                              note=f"ncu not run for {Path(directory).name} (its totals are its measure's)" if not use_ncu
                              else "ncu (Nsight Compute) not found: wavefront totals not measured"))
        return None
    release = getattr(backend, "release", None)
    if release:
        release()                     # the launches run again in a child process, under ncu
    launches = [{"case": e["name"], "variant": "sm_90", "kernel": e["kernel"]} for e in manifest
                if "buffers" in runs.get(e["name"], {}).get("sm_90", {})]
    import tempfile
    with tempfile.TemporaryDirectory(prefix="kernels_ncu_") as work:
        rows, problems, _, _ = N.totals(ncu, directory, launches, {}, list(N.BASE), work, 600)
    by_case = {j["case"]: row for j, row in zip(launches, rows)}
    for p in problems:
        results.append(Result("kernels", "ncu totals", "ncu", status="error", note=p))
    for e in manifest:
        got = by_case.get(e["name"])
        if got is None:
            continue
        if committed.get(e["name"], {}).get("ncu"):
            results.append(diff_totals(e["name"], committed[e["name"]]["ncu"], got, "recorded-ncu", N.BASE))
        if e["name"] in model_waves:
            w = model_waves[e["name"]]
            results.append(diff_totals(e["name"], {N.SHARED_LD: w["ld"], N.SHARED_ST: w["st"]}, got, "model-ncu"))
    return by_case
