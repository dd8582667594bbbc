"""Triton kernels without a GPU: TRITON_INTERPRET=1 (Triton's CPU interpreter) against layoutsim,
on the Triton corpus (gpu_check/triton_corpus/cases.py), same kernels and inputs.

    python benchmarks/bench_triton.py [--cases vector_add,softmax_rows] [--wheels .triton-src] [--repeat 5] [--json]
                                      [--interpreter-python PATH]

For each case: the wall time of one launch in each, the least of --repeat launches after a
warm-up launch of the same case (the machine may be shared: the least is the launch's own cost)
(layoutsim: `layoutsim.ptx.run` of the committed PTX, its arguments made before the clock starts;
the interpreter: `kernel[grid](...)` on CPU torch tensors made before the clock starts, in a
process started with TRITON_INTERPRET=1 that runs each case right after layoutsim's, so that a
shared machine's load falls on both sides alike), and how many output elements of each differ, bit for bit, from the H200's
(tests/data/triton_corpus/h200/, every batch; for a case not measured yet, the interpreter is
compared with layoutsim).
The interpreter needs torch (a CPU build is enough) and the wheels of the registry kernels in
--wheels; without torch its column says so. Triton 3.6's interpreter fails on most cases under
numpy 2.4 ("only 0-dimensional arrays can be converted to Python scalars"): --interpreter-python
runs its process with another Python, e.g. a venv that shadows the system numpy with 2.3
(docs/triton.md shows the two commands); the numpy it ran with is printed. Target (issue 25):
layoutsim 0 differing words, and no slower than the interpreter on any case.
"""
import argparse
import ast
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
CORPUS = ROOT / "tests" / "data" / "triton_corpus"
CHILD = """
import sys, time, numpy as np, torch
sys.path.insert(0, {root!r})
import triton
from gpu_check.triton_corpus import cases as C
from gpu_check.triton_corpus.measure import torch_args, to_numpy, _owner, fill_addresses
from gpu_check.triton_corpus.inputs import ml_dtype
print("@@" + repr({{"numpy": np.__version__, "torch": torch.__version__, "triton": triton.__version__,
                  "python": sys.version.split()[0]}}), flush=True)


def run(case, path):
    out = {{}}
    try:
        k, _ = C.kernel(case, {wheels!r}, {root!r})
    except Exception as e:                 # a source not here (a tutorial file): that case only
        out["error"] = np.array((type(e).__name__ + ": " + str(e)).splitlines()[0][:300])
        return np.savez(path, **out)
    inputs = C.launch_inputs(case, descriptors=False)
    tables = C.addresses(case)             # tables of pointers: this process's addresses (measure.py)
    def once():
        args = torch_args(inputs, "cpu")
        fill_addresses(args, tables)
        t = time.perf_counter()
        k[C.grid(case)](*args, **C.meta(case))
        return time.perf_counter() - t, args
    try:
        once()
        dt, args = min((once() for _ in range({repeat!r})), key=lambda x: x[0])
    except Exception as e:
        out["error"] = np.array((type(e).__name__ + ": " + str(e)).splitlines()[0][:300])
        return np.savez(path, **out)
    out["seconds"] = np.array(dt)
    for i, a in enumerate(args):
        if hasattr(a, "numpy") or isinstance(inputs[i], C.DescInput):      # a descriptor: its whole array
            got = inputs[i] if i in tables else to_numpy(_owner(a, inputs[i]), C.output(inputs[i]))
            # an ml_dtypes array (bf16, fp8) as its bits: np.load cannot read float8_e5m2's "<f1"
            out["arg" + str(i)] = got.view("u" + str(got.dtype.itemsize)) if ml_dtype(got.dtype) else got
    np.savez(path, **out)


for line in sys.stdin:                     # one case a line, answered when its file is written
    case, path = line.split()
    run(case, path)
    print("@@done", flush=True)
"""


def differing(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return int((a.view(np.uint8).reshape(a.size, -1) != b.view(np.uint8).reshape(b.size, -1)).any(axis=1).sum())


class Interpreter:
    """TRITON_INTERPRET=1 in a process of its own (run by `python`, default this one) that runs
    one case when asked: the cases alternate with layoutsim's, so the load of a shared machine
    falls on both alike. `versions`: numpy, torch, Triton and Python there; `failed`: why it
    did not start or stopped, else None."""

    def __init__(self, wheels, repeat, python=None):
        self.failed, self.versions, self.proc = None, None, None
        if python is None:
            try:
                import torch  # noqa: F401
            except ImportError:
                self.failed = "torch is not installed (TRITON_INTERPRET=1 needs it; pip install torch)"
                return
        self.dir = tempfile.TemporaryDirectory()
        self.err = open(Path(self.dir.name) / "stderr.txt", "w+")
        env = dict(os.environ, TRITON_INTERPRET="1", PYTHONPATH=str(ROOT))
        self.proc = subprocess.Popen([python or sys.executable, "-c", CHILD.format(root=str(ROOT), wheels=wheels,
                                                                               repeat=repeat)],
                                     env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err,
                                     text=True)
        got = self._answer()
        if got is not None:
            self.versions = ast.literal_eval(got)

    def _answer(self):
        """The child's next "@@" line without its marker (its kernels may print), or None when it
        has stopped (self.failed says why)."""
        for line in self.proc.stdout:
            if line.startswith("@@"):
                return line[2:].strip()
        self.err.seek(0)
        self.failed = "the interpreter failed: " + (self.err.read().strip().splitlines() or ["?"])[-1]
        return None

    def run(self, case):
        """(seconds, {argN: array}) of one case, or the reason it did not run."""
        if self.failed:
            return self.failed
        path = str(Path(self.dir.name) / f"{case}.npz")
        self.proc.stdin.write(f"{case} {path}\n")
        self.proc.stdin.flush()
        if self._answer() is None:
            return self.failed
        with np.load(path) as z:
            if "error" in z.files:
                return str(z["error"])
            return float(z["seconds"]), {k: z[k] for k in z.files if k.startswith("arg")}

    def close(self):
        if self.proc is not None:
            self.proc.stdin.close()
            self.proc.wait(timeout=60)
            self.err.close()
            self.dir.cleanup()


def main():
    from gpu_check.triton_corpus import cases as C
    from gpu_check.triton_corpus import replay as R
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", help="comma-separated case names (default: all)")
    ap.add_argument("--wheels", default=str(ROOT / ".triton-src"))
    ap.add_argument("--repeat", type=int, default=5, help="timed launches per case and side (the least is kept)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--interpreter-python", metavar="PATH",
                    help="the Python that runs TRITON_INTERPRET=1 (with torch, Triton and a numpy it works "
                         "with: < 2.4 for Triton 3.6); default: this one")
    a = ap.parse_args()
    if a.repeat < 1:
        ap.error("--repeat: give at least 1")
    cases = a.cases.split(",") if a.cases else list(C.CASES)
    entries = {e["case"]: e for e in R.load_manifest(CORPUS)["cases"]}
    measured = R.measurements(CORPUS / "h200")
    rows = []
    ours, interp = {}, {}
    child = Interpreter(a.wheels, a.repeat, a.interpreter_python)
    try:
        for case in cases:                                  # case by case, layoutsim then the interpreter
            e = entries[case]
            R.run_case(CORPUS, e)                           # warm-up: numba compiles what the case uses
            best = None
            for _ in range(a.repeat):
                text, values = R.prepared(CORPUS, e)        # fresh inputs, made before the clock starts
                t = time.perf_counter()
                _, finals = R.launch(e, text, values)
                dt = time.perf_counter() - t
                best = (dt, finals) if best is None or dt < best[0] else best
            ours[case] = best
            interp[case] = child.run(case)
    finally:
        child.close()
    versions = child.versions
    if child.failed and not any(isinstance(v, tuple) for v in interp.values()):
        interp = child.failed
    for case in cases:
        sec, finals = ours[case]
        ref = None
        if case in measured:
            given = C.inputs(case)            # what the GPU left unchanged is recorded as the case's input (merge.py)
            with np.load(measured[case][1]) as z:
                ref = {k: z[f"{case}/{k}"] if f"{case}/{k}" in z.files else C.output(given[int(k[3:])])
                       for k in finals}
        row = {"case": case, "layoutsim_s": round(sec, 4),
               "layoutsim_differ": sum(differing(finals[k], ref[k]) for k in finals) if ref else None}
        if isinstance(interp, dict):
            got = interp[case]
            base = ref or finals
            if isinstance(got, str):
                row.update(interpreter_error=got)
            else:
                isec, iout = got
                row.update(interpreter_s=round(isec, 4), compared_with="H200" if ref else "layoutsim",
                           interpreter_differ=sum(differing(iout[k], base[k]) for k in finals))
        rows.append(row)
    if a.json:
        print(json.dumps({"rows": rows, "interpreter": interp if isinstance(interp, str) else "ran",
                          "interpreter_versions": versions}, indent=1))
        return
    if isinstance(interp, str):
        print(f"TRITON_INTERPRET=1: not run: {interp}")
    else:
        print("TRITON_INTERPRET=1 ran with " + ", ".join(f"{k} {v}" for k, v in versions.items()))
    print(f"{'case':24s} {'layoutsim s':>12s} {'differ':>7s} {'interp s':>9s} {'differ':>7s}  (vs)")
    for r in rows:
        print(f"{r['case']:24s} {r['layoutsim_s']:12.4f} {str(r['layoutsim_differ']):>7s} "
              f"{str(r.get('interpreter_s', '-')):>9s} {str(r.get('interpreter_differ', '-')):>7s}  "
              f"({r.get('compared_with', 'H200' if r['layoutsim_differ'] is not None else '-')})"
              + (f"  interpreter: {r['interpreter_error']}" if "interpreter_error" in r else ""))

    if isinstance(interp, dict):
        both = [r for r in rows if "interpreter_s" in r]
        slower = [r for r in both if r["layoutsim_s"] > r["interpreter_s"]]
        print(f"the interpreter ran {len(both)} of {len(rows)} cases; layoutsim slower on {len(slower)}"
              + "".join(f"; {r['case']} {r['layoutsim_s'] / r['interpreter_s']:.2f}x" for r in slower))


if __name__ == "__main__":
    main()
