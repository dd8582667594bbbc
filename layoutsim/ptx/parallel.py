"""Run the CTAs of a launch in several processes (`jobs=`).

Each worker process (started with "spawn": numba's thread pool does not survive fork) loads the
PTX, builds the same launch from the same arguments, runs its share of the CTAs (contiguous
ranges of the CTA list) and returns what changed in global memory (the changed pages) plus its
counters. The parent applies the changes in CTA order. CTAs of one launch must not communicate
through global memory (the CUDA programming model gives no order between them); two workers
writing different values to the same byte is reported as an error, and kernels with global
atomics run in one process.

Memory: every worker holds its own copies of the global buffers, so the run's bound
(RUN_BYTES, what one process may take) is shared among them: `workers_that_fit` says how many
fit, and the run uses no more. Limits and progress: the workers publish their counters in a
shared array (watch.py), check max_steps and the deadline against the whole run, and ignore
SIGINT: Ctrl-C reaches the parent, which stops the pool (no worker outlives it) and says where
the run was.

multiprocessing is imported by run_parallel, the one place that starts processes: only a run with
jobs > 1 pays its import (~14 ms of every `import layoutsim.ptx` otherwise; the one import inside
a function tests/test_structure_table.py allows a ptx/ module beside the optional dependencies).
"""
import signal

import numpy as np

from ..errors import LayoutsimError
from .costs import Costs
from .access import space_of
from .launch import MAX_GLOBAL_BYTES, Launch
from .state import GLOBAL_BASE, PtxFault
from .watch import FIELDS, Interrupted, Watch

# what a whole run may hold, however many processes it uses: one process's bound (the global
# buffers three times, launch.MAX_GLOBAL_BYTES, and a batch of CTAs, runner.BATCH_BYTES)
RUN_BYTES = 3 * MAX_GLOBAL_BYTES + (1 << 30)
PAGE = 4096                # global memory goes back to the parent in pages that changed
POLL_SECONDS = 0.25        # the parent's look at the workers' counters


HEAP_COPIES = 10           # per worker, in bytes of its global memory (worker_bytes)


def worker_bytes(heap_bytes, batch_bytes):
    """Bytes one worker needs at most: in the worker, the arguments it receives, its global
    memory, the copy it compares against, the difference mask, the changed pages it returns
    (contents and mask) and their pickled bytes (8 copies); in the parent, that result (2); plus
    one batch of CTA state."""
    return HEAP_COPIES * heap_bytes + batch_bytes


def parent_bytes(heap_bytes):
    """The parent's own: the caller's arrays, the launch's global memory, the written mask and
    the task it is sending."""
    return 4 * heap_bytes


def workers_that_fit(jobs, heap_bytes, batch_bytes, limit=None):
    """(workers, why): at most `jobs` workers whose memory with the parent's stays within the
    run's limit; why is '' when all of them fit, else the note saying how many did and why."""
    limit = RUN_BYTES if limit is None else limit
    each = worker_bytes(heap_bytes, batch_bytes)
    fit = max(0, (limit - parent_bytes(heap_bytes)) // each)
    if fit >= jobs:
        return jobs, ""
    n = int(fit) if fit >= 2 else 1
    return n, (f"jobs={jobs} reduced to {n}: each worker process needs about {each} bytes ({heap_bytes} "
               f"bytes of global buffers, held {HEAP_COPIES} times, and {batch_bytes} of CTA state) and the "
               f"run may hold at most {limit} bytes in all")


def has_global_atomics(prog):
    return any(st.ins is not None and st.ins.opcode in ("atom", "red") and space_of(st.ins.mods) in
               ("global", "generic") for st in prog.steps)


def run_parallel(text, kernel, grid, block, args, arch, shared_bytes, prog, launch, ids, jobs,
                 racecheck, watch, batch_threads, runner, symbols=None):
    """(Costs, hazards) after running `ids` in `jobs` processes; launch.heap holds the result.
    runner: (program, run_ctas) of runner.py, which the workers call (passed, not imported: runner
    imports this module)."""
    import multiprocessing as mp        # here, not at the top: see the module's docstring
    chunks = [c for c in np.array_split(ids, min(jobs, len(ids))) if len(c)]
    ctx = mp.get_context("spawn")
    shared = ctx.Array("q", len(chunks) * FIELDS, lock=False)
    watch.shared = shared
    work = [(text, kernel, grid, block, args, arch, shared_bytes, c, len(ids), racecheck, watch.max_steps,
             watch.timeout, watch.deadline, k, batch_threads, runner, symbols) for k, c in enumerate(chunks)]
    with ctx.Pool(len(chunks), initializer=_start_worker, initargs=(shared,)) as pool:
        pending = pool.map_async(_worker, work)
        try:
            while not pending.ready():
                pending.wait(POLL_SECONDS)
                watch.poll()
            results = pending.get()
        except KeyboardInterrupt:      # leaving the with-block terminates every worker
            raise Interrupted(watch.stop_line(f"stopped after {watch.total_steps()} steps",
                                              watch.worker_sites())) from None
    costs, hazards = Costs(prog, arch), []
    written = np.zeros(launch.heap.data.size, bool)
    fault = None
    data = launch.heap.data
    for res in results:
        pages, content, mask = res["changed"]
        for p, vals, m in zip(pages, content, mask):
            lo = int(p) * PAGE
            hi = min(lo + PAGE, data.size)
            vals, m = vals[:hi - lo], m[:hi - lo]
            clash = m & written[lo:hi] & (data[lo:hi] != vals)
            if clash.any():
                _clash(launch, lo + int(np.flatnonzero(clash)[0]))
            data[lo:hi] = np.where(m, vals, data[lo:hi])
            written[lo:hi] |= m
        costs.merge(res["costs"])
        launch.samples.merge(res["samples"])
        hazards.extend(res["hazards"])
        launch.notes.update(res["notes"])
        fault = fault or res["fault"]
    if fault:
        raise PtxFault(fault["message"], fault=fault)
    return costs, hazards


def _clash(launch, offset):
    addr = GLOBAL_BASE + offset
    k = launch.heap.owner(addr)
    where = f" of {launch.heap.names[k]}" if k is not None else ""
    raise LayoutsimError(f"CTAs run in different processes wrote different values to global "
                         f"address {addr:#x}{where}: they communicate through global memory; "
                         f"run with jobs=1")


_SHARED = None


def _start_worker(shared):
    """Pool initializer: the counters array; SIGINT is the parent's to handle."""
    global _SHARED
    _SHARED = shared
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def changed_pages(data, before):
    """(page numbers, their contents, which bytes changed) of the pages of `data` that differ
    from `before`: at most twice the changed pages' bytes go back, never an index per byte."""
    diff = data != before
    whole = data.size // PAGE
    hit = diff[:whole * PAGE].reshape(whole, PAGE).any(1)
    if data.size > whole * PAGE:
        hit = np.append(hit, diff[whole * PAGE:].any())
    pages = np.flatnonzero(hit)
    content = np.zeros((len(pages), PAGE), np.uint8)
    mask = np.zeros((len(pages), PAGE), bool)
    for i, p in enumerate(pages):
        lo, hi = int(p) * PAGE, min(int(p) * PAGE + PAGE, data.size)
        content[i, :hi - lo] = data[lo:hi]
        mask[i, :hi - lo] = diff[lo:hi]
    return pages, content, mask


def _worker(job):
    (text, kernel, grid, block, args, arch, shared_bytes, ids, n_total, racecheck, max_steps, timeout,
     deadline, slot, batch_threads, (program, run_ctas), symbols) = job
    prog = program(text, kernel, arch)
    launch = Launch(prog, grid, block, args, arch, shared_bytes, symbols=symbols)
    before = launch.heap.data.copy()
    costs, hazards = Costs(prog, arch), []
    watch = Watch(prog, n_total, max_steps, timeout, deadline=deadline, shared=_SHARED, slot=slot)
    fault = None
    try:
        run_ctas(prog, launch, ids, costs, hazards, racecheck, watch, batch_threads)
    except PtxFault as e:
        fault = e.fault
    return {"changed": changed_pages(launch.heap.data, before), "costs": costs, "hazards": hazards,
            "samples": launch.samples,
            "notes": launch.notes, "fault": fault}
