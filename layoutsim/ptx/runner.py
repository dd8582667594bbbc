"""layoutsim.ptx.run: load, link, launch, run the CTAs batch by batch, report."""
import hashlib
import time

import numpy as np

from .. import archs
from ..errors import LayoutsimError
from .costs import GLOBAL_MODEL_MISSING, Costs
from .launch import MAX_BATCH_THREADS, Launch
from .module import load
from .program import Program
from .racecheck import RaceCheck
from .report import InstructionStats, Run
from .scheduler import MAX_STEPS, Scheduler
from .state import Batch, PtxFault

_PROGRAMS = {}


def program(ptx, kernel, arch):
    """The linked Program of a kernel (cached per PTX text, kernel and arch)."""
    key = (hashlib.sha1(ptx.encode()).hexdigest() if isinstance(ptx, str) else None, kernel, arch)
    prog = _PROGRAMS.get(key) if key[0] else None
    if prog is None:
        prog = Program(load(ptx), kernel, arch)
        if key[0]:
            if len(_PROGRAMS) > 32:
                _PROGRAMS.clear()
            _PROGRAMS[key] = prog
    return prog


def select_ctas(n, ctas):
    """Linear CTA ids to run: all (None), an evenly spread sample of `ctas` (int), or a list."""
    if ctas is None:
        return np.arange(n, dtype=np.int64)
    if isinstance(ctas, (int, np.integer)) and not isinstance(ctas, bool):
        k = int(ctas)
        if k < 1:
            raise LayoutsimError(f"ctas={ctas}: give a number of CTAs to sample (>= 1)")
        if k >= n:
            return np.arange(n, dtype=np.int64)
        return np.unique(np.round(np.linspace(0, n - 1, k)).astype(np.int64))
    ids = np.unique(np.asarray(list(ctas), np.int64))
    if ids.size == 0 or ids.min() < 0 or ids.max() >= n:
        raise LayoutsimError(f"ctas={ctas!r}: CTA ids must lie in 0..{n - 1}")
    return ids


def run(ptx, kernel, grid, block, args, arch="sm_90", shared_bytes=0, *, ctas=None, jobs=1,
        racecheck=False, max_steps=MAX_STEPS, progress=None, batch_threads=MAX_BATCH_THREADS):
    """Execute one launch of `kernel` from PTX text; returns a Run (see layoutsim.ptx)."""
    t0 = time.perf_counter()
    arch = archs.normalize(arch)
    if arch is None or archs.vendor(arch) != "nvidia":
        raise LayoutsimError(f"arch {arch!r}: PTX runs on NVIDIA archs ({', '.join(archs.NVIDIA)})")
    prog = program(ptx, kernel, arch)
    launch = Launch(prog, grid, block, args, arch, shared_bytes)
    ids = select_ctas(launch.n_ctas, ctas)
    if not isinstance(jobs, (int, np.integer)) or isinstance(jobs, bool) or jobs < 1:
        raise LayoutsimError(f"jobs={jobs!r}: give a number of processes >= 1")
    if jobs > 1 and len(ids) > 1:
        from .parallel import has_global_atomics, run_parallel
        if has_global_atomics(prog):
            launch.notes.add(f"jobs={jobs} ignored: the kernel has global atomics, whose order across CTAs "
                           f"one process keeps")
            jobs = 1
    if jobs > 1 and len(ids) > 1:
        try:
            costs, hazards = run_parallel(ptx, kernel, grid, block, args, arch, shared_bytes, prog, launch,
                                          ids, jobs, racecheck, max_steps, batch_threads)
        except PtxFault as e:
            e.run = _report(prog, launch, ids, Costs(prog, arch), [], racecheck, t0, fault=str(e))
            raise
    else:
        costs, hazards = Costs(prog, arch), []
        try:
            _run_ctas(prog, launch, ids, costs, hazards, racecheck, max_steps, progress, batch_threads)
        except PtxFault as e:
            e.run = _report(prog, launch, ids, costs, hazards, racecheck, t0, fault=str(e))
            raise
    return _report(prog, launch, ids, costs, hazards, racecheck, t0)


BATCH_BYTES = 1 << 31      # the memory one batch of CTAs may take (registers, local, shared)


def _batch_ctas(prog, launch, batch_threads):
    """CTAs per batch: at most batch_threads threads, and at most BATCH_BYTES of state."""
    pad = -(-launch.threads_per_cta // 32) * 32
    per_thread = 8 * len(prog.reg_types) + prog.local_size + prog.param_size + 16
    per_cta = pad * per_thread + prog.smem_size(launch.shared_bytes)
    if per_cta > BATCH_BYTES:
        raise LayoutsimError(f"one CTA of {prog.fn.name} needs {per_cta} bytes of model state "
                             f"({len(prog.reg_types)} registers and {prog.local_size} bytes of local "
                             f"memory per thread): more than the {BATCH_BYTES} allowed")
    return max(1, min(int(batch_threads) // pad, BATCH_BYTES // per_cta))


def _run_ctas(prog, launch, ids, costs, hazards, racecheck, max_steps, progress, batch_threads):
    per = _batch_ctas(prog, launch, batch_threads)
    for k in range(0, len(ids), per):
        chunk = ids[k:k + per]
        bt = Batch(prog, launch, chunk)
        bt.costs = costs
        bt.race = RaceCheck(bt) if racecheck else None
        cb = None
        if progress is not None:
            done = k
            cb = lambda n, done=done, c=len(chunk): progress(done, c, len(ids), n)
        with np.errstate(all="ignore"):
            Scheduler(bt, costs, max_steps, cb).run()
        if bt.race is not None:
            hazards.extend(bt.race.report())


def _report(prog, launch, ids, costs, hazards, racecheck, t0, fault=None):
    factor = launch.n_ctas / len(ids)
    scale = (lambda v: int(round(v * factor))) if factor != 1 else int
    rows = []
    for i, site in enumerate(prog.sites):
        shared = costs.kind[i] is not None
        glob = costs.global_kind[i] is not None
        rows.append(InstructionStats(
            line=site.line, cuda=site.cuda, text=site.text, executions=scale(costs.executions[i]),
            wavefronts=scale(costs.wavefronts[i]) if shared else None,
            ideal=scale(costs.ideal[i]) if shared else None, kind=costs.kind[i], sass=costs.sass[i],
            requests=scale(costs.requests[i]) if glob else None,
            sectors=scale(costs.sectors[i]) if glob else None,
            note=_note(prog, i)))
    sw = {k: scale(v) for k, v in costs.shared_totals().items()}
    notes = sorted(prog.notes | launch.notes)
    if costs.global_costed is False:
        notes.append(GLOBAL_MODEL_MISSING)
    gt = None
    if costs.global_costed:
        gt = {"requests": scale(costs.requests.sum()), "sectors": scale(costs.sectors.sum())}
    sampled = None
    if len(ids) != launch.n_ctas:
        sampled = {"ctas": [launch.cta_coords(int(c)) for c in ids], "of": launch.n_ctas,
                   "factor": factor}
        notes.append(f"sampled {len(ids)} of {launch.n_ctas} CTAs: their outputs are exact, the other "
                     f"CTAs' outputs are not computed, and every count is extrapolated (x{factor:.3g})")
    hz = None
    if racecheck:
        hz = []
        for h in hazards:
            a, b = prog.sites[h["first"]], prog.sites[h["second"]]
            hz.append(dict(h, first_line=a.line, second_line=b.line, first_cuda=a.cuda, second_cuda=b.cuda,
                           first_text=a.text, second_text=b.text))
    return Run(kernel=prog.fn.name, arch=launch.arch, grid=launch.grid, block=launch.block,
               buffers=launch.buffers(), shared_wavefronts=sw, instructions=rows,
               warp_instructions=scale(costs.warp_instructions), notes=notes, hazards=hz,
               sampled=sampled, global_totals=gt, seconds=time.perf_counter() - t0, fault=fault)


def _note(prog, i):
    for st in prog.steps:
        if st.site == i and st.info.get("approx"):
            return st.info["approx"]
    return ""
