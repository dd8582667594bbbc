"""layoutsim.ptx.run: load, link, launch, run the CTAs batch by batch, report."""
import gc
import hashlib
import itertools
import os
import time
from contextlib import contextmanager

import numpy as np

from .. import archs
from ..errors import LayoutsimError, integer
from . import cluster as CL
from . import contract, fidelity, parallel, sass, sinking
from .costs import Costs
from .events import Events, MmaLog
from .initcheck import InitCheck, merge as merge_initcheck
from .internal import guarded
from .launch import MAX_BATCH_THREADS, Launch
from .module import load
from .program import Program
from .racecheck import RaceCheck
from .report import InstructionStats, Run
from .scheduler import Scheduler
from .state import Batch, PtxFault
from .watch import Interrupted, Watch, max_steps_value, timeout_value

_PROGRAMS = {}


def program(ptx, kernel, arch):
    """The linked Program of a kernel (cached per PTX text, kernel and arch)."""
    if not isinstance(kernel, str):
        raise LayoutsimError(f"kernel: give the entry's name as a string, not {type(kernel).__name__}")
    # surrogatepass: a lone surrogate hashes here, and load refuses it with its line
    key = (hashlib.sha1(ptx.encode("utf-8", "surrogatepass")).hexdigest() if isinstance(ptx, str) else None,
           kernel, arch)
    prog = _PROGRAMS.get(key) if key[0] else None
    if prog is None:
        module = load(ptx)
        check_target(module.target, arch)
        started = sass.start(ptx, module, arch)          # ptxas runs while the program links
        try:
            prog = Program(module, kernel, arch)
            prog.lowered = sass.for_program(ptx, prog, arch)
            prog.contraction = contract.decide(prog, *sass.every_line(ptx, prog, arch))
            prog.sunk = sinking.decide(prog)
        finally:
            sass.drop(started)
        if key[0]:
            if len(_PROGRAMS) > 32:
                _PROGRAMS.clear()
            _PROGRAMS[key] = prog
    return prog


# What the CUDA driver refuses to load (which .target runs on which arch) lives in archs.py.
check_target = archs.check_ptx_target


# The threads one launch may run: the model executes ~5 million threads a second of a kernel that
# does nothing (a `ret`), so 2**24 threads of a real kernel already take minutes. Larger launches
# run a sample of their CTAs (ctas=K, `--ctas K`), each sampled CTA exactly.
MAX_THREADS = 1 << 24
MAX_SAMPLE = 1 << 16       # CTAs in a sample: their coordinates are listed in Run.sampled


def select_ctas(n, ctas, threads_per_cta=1):
    """Linear CTA ids to run: all (None), an evenly spread sample of `ctas` (int), or a list.
    Checked before any per-CTA array exists: at most MAX_THREADS threads and MAX_SAMPLE sampled
    CTAs, so a grid of 2**62 CTAs costs no more than its sample."""
    most = max(1, min(MAX_SAMPLE, MAX_THREADS // threads_per_cta))
    number = isinstance(ctas, (int, np.integer)) and not isinstance(ctas, bool)
    if ctas is None or (number and ctas >= n):
        if n * threads_per_cta > MAX_THREADS:
            raise LayoutsimError(f"launch of {n} CTAs x {threads_per_cta} threads = {n * threads_per_cta} "
                                 f"threads: the model runs at most {MAX_THREADS} threads in one launch; run a "
                                 f"sample of the CTAs with --ctas K (ctas=K in Python), K at most {most}")
        return np.arange(n, dtype=np.int64)
    if number:
        k = int(ctas)
        if k < 1:
            raise LayoutsimError(f"ctas={ctas}: give a number of CTAs to sample (>= 1)")
        _check_sample(k, threads_per_cta, most)
        if k == 1:
            return np.zeros(1, np.int64)
        # k ids spread evenly over 0..n-1 in exact integer arithmetic (floats lose ids past 2**53,
        # and i * (n - 1) would overflow int64): id_i = i*q + (i*r) // (k-1), q, r = divmod(n-1, k-1)
        q, r = divmod(n - 1, k - 1)
        i = np.arange(k, dtype=np.int64)
        return i * q + (i * r) // (k - 1)
    try:
        ids = list(itertools.islice(ctas, MAX_SAMPLE + 1))      # a generator may be endless
    except TypeError:
        raise LayoutsimError(f"ctas={ctas!r}: give None, a number of CTAs or a list of CTA ids") from None
    if not ids or not all(isinstance(c, (int, np.integer)) and not isinstance(c, bool) for c in ids):
        raise LayoutsimError(f"ctas={ids[:8]!r}: give CTA ids (integers in 0..{n - 1})")
    _check_sample(len(ids), threads_per_cta, most)
    if min(ids) < 0 or max(ids) >= n:
        raise LayoutsimError(f"ctas={ids[:8]!r}: CTA ids must lie in 0..{n - 1}")
    return np.unique(np.asarray(ids, np.int64))


def _check_sample(k, threads_per_cta, most):
    if k > most:
        raise LayoutsimError(f"ctas={k}: a sample of at most {most} CTAs of {threads_per_cta} threads "
                             f"(at most {MAX_SAMPLE} CTAs and {MAX_THREADS} threads)")


@guarded("running the kernel")
def run(ptx, kernel, grid, block, args, arch="sm_90", shared_bytes=0, *, ctas=None, jobs=1,
        racecheck=False, initcheck=False, max_steps=None, timeout=None, progress=None,
        batch_threads=MAX_BATCH_THREADS, cluster=None, record_mmas=False, symbols=None):
    """Execute one launch of `kernel` from PTX text; returns a Run (see layoutsim.ptx).
    initcheck=True: reads of shared memory never written, in Run.initcheck (initcheck.py).
    max_steps (default watch.MAX_STEPS) and timeout (seconds, default none) bound the run: reaching
    one raises watch.RunLimit naming the PTX lines the warps were running; Ctrl-C raises
    watch.Interrupted (a KeyboardInterrupt) saying where the run stopped. progress: called with a
    watch.Progress every ~2 s of wall time. cluster: the thread-block cluster shape (x, y, z) of the
    launch (cluster.py; default: the kernel's .reqnctapercluster, else clusters of one CTA); a
    sample of CTAs (ctas=) runs the whole clusters of the CTAs it names. record_mmas=True: every
    tensor-core MMA the launch executed (tcgen05.mma: operands and D, raw bits), in Run.mmas
    (events.Mma, in execution order; one process). symbols: {variable: numpy array or bytes}, what
    the host copied into the module's .global/.const variables before the launch
    (cudaMemcpyToSymbol: from byte 0, at most the variable's size)."""
    t0 = time.perf_counter()
    max_steps_value(max_steps), timeout_value(timeout)      # checked before anything is loaded
    arch = archs.nvidia_only(arch, "layoutsim.ptx.run")
    batch_threads = integer(batch_threads, "batch_threads", 1)
    prog = program(ptx, kernel, arch)
    launch = Launch(prog, grid, block, args, arch, shared_bytes, cluster, symbols)
    ids = CL.order(launch.cluster, launch.grid, select_ctas(launch.n_ctas, ctas, launch.threads_per_cta))
    if len(ids) * launch.threads_per_cta > MAX_THREADS:
        raise LayoutsimError(f"ctas={ctas}: the whole clusters of the sampled CTAs hold {len(ids)} CTAs x "
                             f"{launch.threads_per_cta} threads, more than the {MAX_THREADS} threads a run may "
                             f"have: sample fewer CTAs")
    most = max(4, os.cpu_count() or 1)
    if not isinstance(jobs, (int, np.integer)) or isinstance(jobs, bool) or not 1 <= jobs <= most:
        # one process per job, each with its own copy of the launch: more than the CPUs only costs memory
        raise LayoutsimError(f"jobs={jobs!r}: give a number of processes from 1 to {most} (the CPUs here, "
                             f"at least 4)")
    if initcheck:
        launch.initcheck = []
        if jobs > 1 and len(ids) > 1:
            launch.notes.add(f"jobs={jobs} ignored: initcheck runs in one process")
            jobs = 1
    if record_mmas:
        launch.mmas = MmaLog()
    if jobs > 1 and len(ids) > 1:
        why_one = ("the MMA records (record_mmas) are kept in one process" if record_mmas
                   else _one_process(prog, launch))
        if why_one:
            launch.notes.add(f"jobs={jobs} ignored: {why_one}")
            jobs = 1
        else:                  # every worker copies the launch: the run's memory bound holds for all
            batch = min(len(ids), _batch_ctas(prog, launch, batch_threads)) * _cta_bytes(prog, launch)[1]
            jobs, why = parallel.workers_that_fit(jobs, launch.heap.data.size, batch)
            if why:
                launch.notes.add(why)
    watch = Watch(prog, len(ids), max_steps, timeout, progress)
    if jobs > 1 and len(ids) > 1:
        try:
            costs, hazards = parallel.run_parallel(ptx, kernel, grid, block, args, arch, shared_bytes, prog,
                                                   launch, ids, jobs, racecheck, watch, batch_threads,
                                                   (program, _run_ctas), symbols)
        except PtxFault as e:
            e.run = _report(prog, launch, ids, Costs(prog, arch), [], racecheck, t0, fault=e.fault)
            raise
    else:
        costs, hazards = Costs(prog, arch), []
        try:
            _run_ctas(prog, launch, ids, costs, hazards, racecheck, watch, batch_threads)
        except KeyboardInterrupt as e:
            if isinstance(e, Interrupted):
                raise
            raise Interrupted(watch.stop_line(f"stopped after {watch.steps} steps")) from None
        except PtxFault as e:
            e.run = _report(prog, launch, ids, costs, hazards, racecheck, t0, fault=e.fault)
            raise
    return _report(prog, launch, ids, costs, hazards, racecheck, t0)


# the memory one batch of CTAs may take (registers, local, shared): with the launch's global
# buffers (launch.MAX_GLOBAL_BYTES, held twice while it runs) a run stays within ~2.5 GB
BATCH_BYTES = 1 << 30


def _cta_bytes(prog, launch):
    """(thread slots, bytes of model state) of one CTA."""
    pad = -(-launch.threads_per_cta // 32) * 32
    per_thread = 8 * len(prog.reg_types) + prog.local_size + prog.param_size + 16
    return pad, pad * per_thread + prog.smem_size(launch.shared_bytes)


def _batch_ctas(prog, launch, batch_threads):
    """CTAs per batch: at most batch_threads threads, and at most BATCH_BYTES of state."""
    pad, per_cta = _cta_bytes(prog, launch)
    if per_cta > BATCH_BYTES:
        raise LayoutsimError(f"one CTA of {prog.fn.name} needs {per_cta} bytes of model state "
                             f"({len(prog.reg_types)} registers and {prog.local_size} bytes of local "
                             f"memory per thread): more than the {BATCH_BYTES} allowed")
    n = launch.cluster.size                     # whole clusters in every batch (cluster.py)
    if n * per_cta > BATCH_BYTES:
        raise LayoutsimError(f"a cluster of {n} CTAs of {prog.fn.name} needs {n * per_cta} bytes of model "
                             f"state: more than the {BATCH_BYTES} allowed")
    return max(1, min(int(batch_threads) // pad, BATCH_BYTES // per_cta) // n) * n


def _run_ctas(prog, launch, ids, costs, hazards, racecheck, watch, batch_threads):
    per = _batch_ctas(prog, launch, batch_threads)
    for k in range(0, len(ids), per):
        chunk = ids[k:k + per]
        bt = Batch(prog, launch, chunk)
        race = RaceCheck(bt) if racecheck else None
        init = InitCheck(bt) if launch.initcheck is not None else None
        # handlers emit, these account (events.py); the samples keep what costs costed
        bt.events = Events(costs.begin(bt), launch.samples.begin(bt), race, init, launch.mmas)
        watch.batch(costs)
        with np.errstate(all="ignore"), _collector_paused():
            steps = Scheduler(bt, costs, watch).run()
        watch.batch_done(len(chunk), steps)
        if bt.tmem is not None:                 # tcgen05 (tmem.py): allocations a CTA did not release
            launch.notes.update(bt.tmem.exit_notes(lambda c: f"CTA {launch.cta_coords(int(bt.ctas[c]))}"))
        if race is not None:
            hazards.extend(race.report())
        if init is not None:
            launch.initcheck.extend(init.report())


@contextmanager
def _collector_paused():
    """Python's cyclic garbage collector off while a batch's steps run: the steps make few
    cycles (a launch leaves a few thousand objects to it, whatever its length), but their
    many short-lived containers set it off again and again, and each full pass walks every
    object of the process (the parsed programs, the lowering data): a fifth of a small Triton
    launch's time (issue 25). It runs again as usual after the batch."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _one_process(prog, launch):
    """Why a launch must run its CTAs in one process (state that workers cannot merge), or None."""
    if launch.cluster.size > 1:
        return "a cluster launch runs in one process"
    if launch.surfaces:
        return "surface writes stay in one process"
    if any(st.ins is not None and st.ins.opcode in ("vprintf", "assertfail") for st in prog.steps):
        return "the kernel prints (printf/assert), in an order one process keeps"
    if launch.device_heap is not None:
        return "the kernel calls malloc/free, whose device heap one process keeps"
    if parallel.has_global_atomics(prog):
        return "the kernel has global atomics, whose order across CTAs one process keeps"
    return None


def _report(prog, launch, ids, costs, hazards, racecheck, t0, fault=None):
    factor = launch.n_ctas / len(ids)
    scale = (lambda v: int(round(v * factor))) if factor != 1 else int
    rows = []
    approx = {}                          # site -> the first of its steps' approximation notes
    for st in prog.marked:
        if st.info.get("approx"):
            approx.setdefault(st.site, st.info["approx"])
    # the counters as Python ints, each array converted once (not one numpy scalar per site and field)
    executions = [scale(v) for v in np.asarray(costs.executions).tolist()]
    wavefronts, ideal, requests, sectors, ideal_sectors = (
        np.asarray(a).tolist() for a in (costs.wavefronts, costs.ideal, costs.requests, costs.sectors,
                                         costs.ideal_sectors))
    # the sites with a cost or a note; every other row is its line, text and executions
    costed = set(costs.notes).union(approx)
    costed.update(i for seq in (costs.kind, costs.global_kind) for i, k in enumerate(seq) if k is not None)
    costed.update(i for i, k in enumerate(costs.sass) if k)
    for i, site in enumerate(prog.sites):
        if i not in costed:
            rows.append(InstructionStats(site.line, site.cuda, site.text, executions[i]))
            continue
        shared = costs.kind[i] is not None
        glob = costs.global_kind[i] is not None
        rows.append(InstructionStats(
            line=site.line, cuda=site.cuda, text=site.text, executions=executions[i],
            wavefronts=scale(wavefronts[i]) if shared else None,
            ideal=scale(ideal[i]) if shared else None, kind=costs.kind[i], sass=costs.sass[i],
            requests=scale(requests[i]) if glob else None,
            sectors=scale(sectors[i]) if glob else None,
            ideal_sectors=scale(ideal_sectors[i]) if glob else None,
            global_kind=costs.global_kind[i], note=_note(costs, approx, i)))
    sw = {k: scale(v) for k, v in costs.shared_totals().items()}
    notes = sorted(prog.notes | launch.notes)
    if prog.lowered.note:
        notes.append(prog.lowered.note)
    remote = int(costs.dsmem.sum())
    if remote:
        lines_ = sorted({prog.sites[i].line for i in np.flatnonzero(costs.dsmem)})
        notes.append(f"{scale(remote)} distributed shared memory (shared::cluster) thread accesses on PTX "
                     f"line(s) {', '.join(map(str, lines_[:8]))}: their own class, not costed")
    carried = archs.extrapolated(prog.arch, "the bank and coalescing rules of these costs")
    if carried:
        notes.append(carried)
    gt = costs.global_totals(scale)
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
               sampled=sampled, global_totals=gt, sass_source=prog.lowered.source,
               gmma_wavefronts=scale(sum(int(w) for k, w in zip(costs.kind, costs.wavefronts) if k == "gmma")),
               tensor_maps=[dict(arg=m.index, **m.to_json()) for m in launch.tensor_maps] or None,
               seconds=time.perf_counter() - t0, fault=fault, samples=launch.samples.end(),
               initcheck=merge_initcheck(launch.initcheck, prog) if launch.initcheck is not None else None,
               mmas=list(launch.mmas) if launch.mmas is not None else None,
               cluster=launch.cluster.dims if launch.cluster.explicit else None,
               fidelity=fidelity.compute(prog, executions, scale(costs.warp_instructions)),
               printf=bytes(launch.printed).decode("utf-8", "backslashreplace"),
               assertions=list(launch.assertions),
               graph_conditionals=[{"handle": h, "value": v} for h, (v, _) in launch.conditionals.items()])


def _note(costs, approx, i):
    notes = [costs.notes[i]] if i in costs.notes else []
    if i in approx:
        notes.append(approx[i])
    return "; ".join(notes)
