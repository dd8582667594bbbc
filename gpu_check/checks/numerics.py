"""Numerics: the GPU's raw result bits against `layoutsim.mma` for the GPU's arch.

Cases come from `layoutsim.numerics.cases.generate(instr, n, seed)` (several distributions plus
the discriminating corpus of the numerics model; one per block of a multi-block MFMA; a SWMMAC's
A made 2:4 sparse by a random IDX operand); they are packed into registers through the catalog,
run, unpacked, and compared bit for bit with the model. `--record DIR` writes what the
GPU returned in the numerics corpus format (`layoutsim.numerics.corpus`), so the model's tests
replay the measurement in CI.
"""
import numpy as np

import layoutsim
from layoutsim.formats import raw_dtype, show
from layoutsim.numerics import cases, corpus, sparse

from .common import MAX_DETAILS, Mismatch, Result

NEEDS_KERNELS = True
ELEMENT_BUDGET = 1 << 20      # D elements per launch
DEFAULT_CASES = 512


def numeric_cases(spec, wanted=None, arch="sm_90"):
    """Cases for one instruction: --cases when given, else the numerics corpus budget
    (layoutsim.numerics.corpus.suggested_cases); capped for the widest wgmma N."""
    if wanted is None:
        wanted = corpus.suggested_cases(spec.entry, arch) if corpus.in_corpus(spec.instr) else DEFAULT_CASES
    m, n, _ = spec.instr.shape
    return int(min(wanted, max(1, ELEMENT_BUDGET // (m * n * spec.fd.shape[0]))))


def model_bits(instr, a, b, c, arch):
    """D's raw bits (uint64) as layoutsim.mma computes them."""
    return np.asarray(layoutsim.mma(instr, a, b, c, arch=arch, raw=True)).astype(np.uint64)


def no_model(instr, arch):
    """Why layoutsim.mma has no arithmetic for this instruction on `arch` (one line), or None."""
    from layoutsim.errors import LayoutsimError
    from layoutsim.numerics.api import resolve
    from layoutsim.numerics.plan import make_plan
    try:
        make_plan(*resolve(instr, arch))
    except LayoutsimError as e:
        return str(e)
    return None


def draw_cases(instr, n, seed, arch):
    """(a, b, c, extra) raw bits of n cases: `cases.generate` for each block (a multi-block MFMA
    gets [n, blocks, rows, cols]); a SWMMAC's logical A is made 2:4 sparse by a random IDX,
    keeping the values at the positions it names, and extra = {"IDX": fields}; else None."""
    blocks = instr.operands["D"].fragment.shape[0]
    a, b, c = (np.asarray(x) for x in cases.generate(instr, n * blocks, seed, arch=arch))
    if blocks > 1:
        a, b, c = (x.reshape((n, blocks) + x.shape[1:]) for x in (a, b, c))
    if "IDX" not in instr.operands:
        return a, b, c, None
    idx = sparse.random_index(np.random.Generator(np.random.PCG64(int(seed))), a.shape[:-1] + (a.shape[-1] // 4,))
    return sparse.expand(sparse.select(a, idx), idx, a.shape[-1]), b, c, {"IDX": idx}


def kernel_inputs(spec, a, b, c, extra):
    """The input words of one launch: A as the kernel holds it (a SWMMAC's compressed values)."""
    if extra is not None and "IDX" in extra:
        a = sparse.select(a, extra["IDX"])
    return spec.pack_inputs(a, b, c, extra)


def host_work(entry, n, seed, arch):
    """Cases and the model's answer for one instruction (runs in a worker process)."""
    instr = layoutsim.get(entry, arch=arch)
    a, b, c, extra = draw_cases(instr, n, seed, arch)
    return entry, a, b, c, extra, model_bits(instr, a, b, c, arch)


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


def run(session):
    """Every built kernel the group checks, on its cases; the kept ones recorded with --record."""
    results = []
    specs = {}
    for s in session.specs_checked_by("numerics"):
        why = no_model(s.instr, session.arch)
        if why:                       # e.g. gfx950's float MFMAs: nothing published to compare with
            results.append(Result("numerics", s.entry, "random", status="skip", note=why))
        else:
            specs[s.entry] = s
    # biggest first, so the pool's tail is short
    jobs = sorted(((e, numeric_cases(s, session.cases, session.arch), session.seed, session.arch)
                   for e, s in specs.items()),
                  key=lambda j: -(j[1] * specs[j[0]].instr.shape[0] * specs[j[0]].instr.shape[1]))
    work = host_work_all(jobs, log=session.log)
    while True:
        try:
            entry, a, b, c, extra, d_model = next(work)
        except StopIteration:
            break
        except Exception as e:   # noqa: BLE001 - the model or the generator failed: say so, go on
            results.append(Result("numerics", "layoutsim.numerics", "random", status="error",
                                  note=f"case generation / model failed: {e!r}"))
            continue
        spec = specs[entry]
        n = len(a)
        try:
            out = session.backend.launch(session.module_of(spec), spec, kernel_inputs(spec, a, b, c, extra), n)
        except Exception as e:   # noqa: BLE001
            results.append(Result("numerics", spec.entry, "random", cases=n, status="error",
                                  note=f"launch failed: {e}"))
            continue
        d = spec.unpack_d(out.reshape(n, spec.out_words))
        results.append(compare(spec, a, b, c, d, session.arch, d_model=d_model))
        if session.record and corpus.in_corpus(spec.instr):
            try:
                ops = session.sass.get(spec.name)
                save_corpus(session.record / "numerics", spec, a, b, c, d, session.env, session.arch,
                            seed=session.seed, notes=f"cuobjdump -sass: {' '.join(ops)}" if ops else "")
            except Exception as e:   # noqa: BLE001
                session.group_info.setdefault("numerics", {}).setdefault("record_errors", []).append(
                    f"{spec.entry}: {e}")
    order = {e: i for i, e in enumerate(specs)}
    results.sort(key=lambda r: order.get(r.entry, -1))
    return results


def compare(spec, a, b, c, d_gpu, arch, d_model=None):
    """Result comparing GPU D bits (n, [blocks,] M, N) with the model's (a SWMMAC's `a` is its
    logical A)."""
    blocked = np.asarray(d_gpu).ndim == 4                    # a multi-block MFMA
    lift = (lambda x: np.asarray(x)) if blocked else (lambda x: np.asarray(x)[:, None])   # noqa: E731
    d_gpu = lift(d_gpu).astype(np.uint64)
    d_model = lift(model_bits(spec.instr, a, b, c, arch) if d_model is None else d_model).astype(np.uint64)
    a, b, c = lift(a), lift(b), lift(c)
    bad = np.argwhere(d_gpu != d_model)
    fmt = spec.fmt["d"]
    fd = spec.fd
    details, explain = [], []
    name = (lambda blk, i, j: f"D{blk}[{i}][{j}]") if blocked else (lambda blk, i, j: f"D[{i}][{j}]")  # noqa: E731
    for case, blk, i, j in bad[:MAX_DETAILS]:
        h = fd.holders[blk, i, j, 0]
        where = f"{name(blk, i, j)} (lane {h[0]} {fd.name(h[1], h[2])})"
        details.append(Mismatch(int(case), where, fmt, int(d_model[case, blk, i, j]), int(d_gpu[case, blk, i, j]),
                                note="expected = layoutsim.mma, got = GPU"))
    if len(bad):
        case, blk, i, j = (int(x) for x in bad[0])
        fc = spec.fmt["c"]
        explain.append(f"inputs of case {case}, {name(blk, i, j)}: C = {show(fc, int(c[case, blk, i, j]))}")
        explain.append("  A row: " + " ".join(f"{int(v):#x}" for v in a[case, blk, i, :]))
        explain.append("  B col: " + " ".join(f"{int(v):#x}" for v in b[case, blk, :, j]))
    return Result("numerics", spec.entry, "random", cases=len(d_gpu), compared=int(d_gpu.size),
                  mismatches=len(bad), details=details, explain=explain).finish()


# ---- corpus recording ----------------------------------------------------------------------
def save_corpus(root, spec, a, b, c, d_gpu, env, arch, seed=None, notes=""):
    """Write one instruction's measured cases with layoutsim.numerics.corpus.save, at
    root/<arch>/<canonical name>.npz (root is the tests/data/numerics of a --record DIR)."""
    from layoutsim.files import make_dir
    raw = {k: np.asarray(x).astype(raw_dtype(spec.fmt[k])) for k, x in zip("abcd", (a, b, c, d_gpu))}
    path = corpus.path_for(spec.entry, arch, root=root)
    make_dir(path.parent, "--record folder", parents=True)      # inside the --record tree
    runtime = (f"CUDA driver API {env.get('cuda_driver_api')}" if env.get("cuda_driver_api") else
               f"HIP runtime {env['hip_runtime']}" if env.get("hip_runtime") else env.get("runtime", ""))
    return corpus.save(path, spec.entry, arch, raw["a"], raw["b"], raw["c"], raw["d"],
                       gpu=env.get("gpu"), driver=env.get("driver"), runtime=runtime, seed=seed, n=len(raw["a"]),
                       date=env.get("date"), notes=notes, measured_with="gpu-check run",
                       compute_capability=env.get("compute_capability"), pycuda=env.get("pycuda"))
