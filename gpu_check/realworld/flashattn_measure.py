"""Measure FlashAttention-2's forward kernel on the GPU (one command, well under two minutes):

    python -m gpu_check.realworld.flashattn_measure --out DIR [--ncu-runs 5]

loads the committed PTX (tests/data/realworld/flashattn/, gpu_check.realworld.flashattn_build)
through the driver (cuModuleLoadData JIT-compiles it), builds the same Flash_fwd_params bytes and
inputs as the replay (flashattn_case.py), launches it twice through pycuda (both runs' buffers must
agree), and then runs the same launch --ncu-runs times under Nsight Compute (a child process per
run: gpu_check.kernel_corpus.launch over a one-case corpus folder written to DIR/corpus), keeping
each run's shared ld/st wavefronts and global ld/st requests and sectors (ncu.BASE).

Writes DIR/flashattn.h200.npz (every buffer after the launch: q, k, v, o, softmax_lse) and
DIR/flashattn.h200.json (the GPU, the case, the inputs' and struct's sha256, whether the two
launches agreed, "ncu_runs": [{metric: value}] per run, problems). Copy both into
tests/data/realworld/flashattn/; tests/gpu_check/test_realworld_flashattn.py replays them. Exit 0
when the launch worked (ncu problems are listed in the json), 2 when it did not (one line).
"""
import argparse
import hashlib
import json
import shutil
import sys
import time
from pathlib import Path


from gpu_check.kernel_corpus import corpus as C, ncu as N
from gpu_check.needs import gpu_name

from . import flashattn_case as F

NPZ = "flashattn.h200.npz"
JSON = "flashattn.h200.json"


def corpus_folder(folder):
    """A one-case corpus folder (manifest.json, the PTX, the inputs) that kernel_corpus.launch reads."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    e = F.entry()
    C.write_atomic(folder / C.MANIFEST, json.dumps([e], indent=1) + "\n")
    C.write_atomic(folder / e["ptx"][F.ARCH], F.ptx_text())
    C.write_atomic(folder / e["inputs"], C.npz_bytes({f"arg{i}": a for i, a in enumerate(F.arrays()) if a is not None}))
    return e


def sha(data):
    return hashlib.sha256(data).hexdigest()


def launch_twice(e, folder, drv=None):
    """[[final array or None per argument]] of two launches through pycuda (or `drv`, a pycuda-like
    stand-in already in a context: tests)."""
    from gpu_check.kernel_corpus.device import Launcher, module_image
    ctx = None
    if drv is None:
        import pycuda.driver as drv
        drv.init()
        ctx = drv.Device(0).make_context()
    try:
        launcher = Launcher(drv)
        image = module_image(e, "sm_90", folder)
        return [launcher.run(image, e, C.load_inputs(e, folder)) for _ in range(2)]
    finally:
        if ctx is not None:
            ctx.pop()


def same(a, b):
    return all((x is None and y is None) or (x is not None and y is not None and x.tobytes() == y.tobytes())
               for x, y in zip(a, b))


def main(argv=None, drv=None):
    """drv: a pycuda-like stand-in (tests); default pycuda."""
    ap = argparse.ArgumentParser(prog="python -m gpu_check.realworld.flashattn_measure", description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help=f"the folder for {NPZ}, {JSON} and ncu's csv")
    ap.add_argument("--ncu-runs", type=int, default=5, help="runs under ncu (default 5; 0: none)")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds one ncu run may take (default 60)")
    args = ap.parse_args(argv)
    ok, why = F.available()
    if not ok:
        print(f"flashattn_measure: {why}", file=sys.stderr)
        return 2
    if not 0 <= args.ncu_runs <= 20:
        print(f"flashattn_measure: --ncu-runs {args.ncu_runs}: give 0 to 20", file=sys.stderr)
        return 2
    out = Path(args.out)
    t0 = time.time()
    folder = out / "corpus"
    try:
        e = corpus_folder(folder)
        first, second = launch_twice(e, folder, drv)
    except Exception as ex:   # noqa: BLE001 - pycuda/driver errors: one line
        print(f"flashattn_measure: the launch failed: {type(ex).__name__}: {str(ex).splitlines()[0] if str(ex) else ''}",
              file=sys.stderr)
        return 2
    print(f"launched twice in {time.time() - t0:.1f} s; the runs {'agree' if same(first, second) else 'DIFFER'}")
    ncu, runs, problems = N.ncu_path(), [], []
    if args.ncu_runs and ncu is None:
        problems.append("ncu not found")
    for k in range(args.ncu_runs if ncu else 0):
        work = out / f"ncu_{k}"
        work.mkdir(parents=True, exist_ok=True)
        t1 = time.time()
        vals, probs, _, _ = N.totals(ncu, folder, [{"case": e["name"], "variant": "sm_90", "kernel": e["kernel"]}],
                                     {}, list(N.BASE), work, args.timeout)
        runs.append(vals[0] if vals else None)
        problems += [f"ncu run {k}: {p}" for p in probs]
        print(f"ncu run {k}: {vals[0] if vals else None} ({time.time() - t1:.0f} s)")
    initial = F.arrays()
    names = ("params",) + F.ARRAYS
    doc = {"case": e["name"], "package": F.PACKAGE, "kernel": e["kernel"], "gpu": gpu_name(),
           "date": time.strftime("%Y-%m-%d", time.gmtime()), "grid": e["grid"], "block": e["block"],
           "shared_bytes": e["shared_bytes"], "struct_sha256": sha(bytes.fromhex(e["args"][0]["hex"])),
           "ptx_sha256": sha(F.ptx_text().encode()),
           "inputs_sha256": {n: sha(a.tobytes()) for n, a in zip(names, initial) if a is not None},
           "runs_agree": same(first, second), "metrics": list(N.BASE), "ncu_runs": runs, "problems": problems,
           "seconds": round(time.time() - t0, 1)}
    C.write_atomic(out / NPZ, C.npz_bytes({n: a for n, a in zip(names, first) if a is not None}))
    C.write_atomic(out / JSON, json.dumps(doc, indent=1) + "\n")
    shutil.rmtree(folder, ignore_errors=True)
    print(f"wrote {out / NPZ} and {out / JSON} in {time.time() - t0:.0f} s; {len(problems)} problems; "
          f"copy both into {F.DATA}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
