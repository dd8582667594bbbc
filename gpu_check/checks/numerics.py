"""Numerics: the GPU's raw result bits against `layoutsim.mma` for the GPU's arch.

Cases come from `layoutsim.numerics.cases.generate(instr, n, seed)` (several distributions plus
the discriminating corpus of the numerics model); they are packed into registers through the
catalog, run, unpacked, and compared bit for bit with the model. `--record DIR` writes what the
GPU returned in the numerics corpus format (`layoutsim.numerics.corpus`), so the model's tests
replay the measurement in CI.
"""
import numpy as np

from ..values import WIDTH, show
from .common import MAX_DETAILS, Mismatch, Result


class NumericsUnavailable(Exception):
    pass


def _api():
    try:
        import layoutsim
        from layoutsim.numerics import cases
    except ImportError as e:
        raise NumericsUnavailable(f"layoutsim.numerics is not available ({e})") from None
    if not hasattr(layoutsim, "mma"):
        raise NumericsUnavailable("layoutsim.mma is not available")
    return layoutsim.mma, cases.generate


def generate(spec, n, seed):
    _, gen = _api()
    a, b, c = gen(spec.instr, n, seed)
    return np.asarray(a), np.asarray(b), np.asarray(c)


def model(spec, a, b, c, arch):
    return _model_bits(spec.instr, spec.fmt["d"], a, b, c, arch)


def _model_bits(instr, d_fmt, a, b, c, arch):
    mma, _ = _api()
    d = np.asarray(mma(instr, a, b, c, arch=arch))
    w = WIDTH[d_fmt]
    return d.view({16: np.uint16, 32: np.uint32, 64: np.uint64}[w]).astype(np.uint64)


def host_work(entry, n, seed, arch):
    """Cases and the model's answer for one instruction (runs in a worker process)."""
    import layoutsim
    _, gen = _api()
    instr = layoutsim.get(entry)
    a, b, c = (np.asarray(x) for x in gen(instr, n, seed))
    d_fmt = instr.operands["D"].fmt
    return entry, a, b, c, _model_bits(instr, d_fmt, a, b, c, arch)


def host_work_all(jobs, workers=None, log=None):
    """Yield host_work results for [(entry, n, seed, arch)], in parallel processes when possible.

    Case generation and the model are CPU work (seconds per instruction); the GPU part is
    milliseconds, so the pool keeps the group's wall time near (total CPU time) / cores. Jobs a
    broken pool leaves undone run serially here.
    """
    import concurrent.futures as cf
    import multiprocessing as mp
    import os
    import sys
    workers = workers or min(len(jobs), os.cpu_count() or 1)
    done = set()
    if workers > 1 and len(jobs) > 1:
        main = getattr(sys.modules.get("__main__"), "__file__", None)
        method = "spawn" if main and os.path.exists(main) else "fork"
        try:
            with cf.ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context(method)) as ex:
                futs = {ex.submit(host_work, *j): j for j in jobs}
                for f in cf.as_completed(futs):
                    try:
                        r = f.result()
                    except cf.process.BrokenProcessPool:
                        break
                    done.add(futs[f])
                    yield r
        except (OSError, ValueError, cf.process.BrokenProcessPool) as e:
            if log:
                log(f"[numerics] process pool unavailable ({e!r}); continuing serially")
    for j in jobs:
        if j not in done:
            yield host_work(*j)


def compare(spec, a, b, c, d_gpu, arch, d_model=None):
    """Result comparing GPU D bits (n, M, N) with the model's."""
    d_gpu = np.asarray(d_gpu).astype(np.uint64)
    d_model = model(spec, a, b, c, arch) if d_model is None else np.asarray(d_model).astype(np.uint64)
    bad = np.argwhere(d_gpu != d_model)
    fmt = spec.fmt["d"]
    fd = spec.fd
    details, explain = [], []
    for case, i, j in bad[:MAX_DETAILS]:
        h = fd.holders[0, i, j, 0]
        where = f"D[{i}][{j}] (lane {h[0]} {fd.name(h[1], h[2])})"
        details.append(Mismatch(int(case), where, fmt, int(d_model[case, i, j]), int(d_gpu[case, i, j]),
                                note="expected = layoutsim.mma, got = GPU"))
    if len(bad):
        case, i, j = (int(x) for x in bad[0])
        fc = spec.fmt["c"]
        explain.append(f"inputs of case {case}, D[{i}][{j}]: C = {show(fc, int(np.asarray(c)[case, i, j]))}")
        explain.append("  A row: " + " ".join(f"{int(v):#x}" for v in np.asarray(a)[case, i, :]))
        explain.append("  B col: " + " ".join(f"{int(v):#x}" for v in np.asarray(b)[case, :, j]))
    return Result("numerics", spec.entry, "random", cases=len(d_gpu), compared=int(d_gpu.size),
                  mismatches=len(bad), details=details, explain=explain).finish()


# ---- corpus recording ----------------------------------------------------------------------
def save_corpus(root, spec, a, b, c, d_gpu, env, arch, seed=None, notes=""):
    """Write one instruction's measured cases with layoutsim.numerics.corpus.save, at
    root/<arch>/<canonical name>.npz (root is the tests/data/numerics of a --record DIR)."""
    try:
        from layoutsim.numerics import corpus
    except ImportError as e:
        raise NumericsUnavailable(f"layoutsim.numerics.corpus is not available ({e})") from None
    from ..values import uint_dtype
    raw = {k: np.asarray(x).astype(uint_dtype(spec.fmt[k])) for k, x in zip("abcd", (a, b, c, d_gpu))}
    from layoutsim.files import make_dir
    path = corpus.path_for(spec.entry, arch, root=root)
    make_dir(path.parent, "--record folder")
    runtime = f"CUDA driver API {env.get('cuda_driver_api')}" if env.get("cuda_driver_api") else env.get("runtime", "")
    return corpus.save(path, spec.entry, arch, raw["a"], raw["b"], raw["c"], raw["d"],
                       gpu=env.get("gpu"), driver=env.get("driver"), runtime=runtime, seed=seed, n=len(raw["a"]),
                       date=env.get("date"), notes=notes, measured_with="gpu-check run",
                       compute_capability=env.get("compute_capability"), pycuda=env.get("pycuda"))
