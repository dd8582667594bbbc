"""Run the CTAs of a launch in several processes (`jobs=`).

Each worker process (started with "spawn": numba's thread pool does not survive fork) loads the
PTX, builds the same launch from the same arguments, runs its share of the CTAs (contiguous
ranges of the CTA list) and returns what changed in global memory plus its counters. The parent
applies the changes in CTA order. CTAs of one launch must not communicate through global memory
(the CUDA programming model gives no order between them); two workers writing different values
to the same byte is reported as an error, and kernels with global atomics run in one process.
"""
import multiprocessing as mp

import numpy as np

from ..errors import LayoutsimError
from .costs import Costs
from .state import PtxFault


def has_global_atomics(prog):
    from .access import space_of
    return any(st.ins is not None and st.ins.opcode in ("atom", "red") and space_of(st.ins.mods) in
               ("global", "generic") for st in prog.steps)


def run_parallel(text, kernel, grid, block, args, arch, shared_bytes, prog, launch, ids, jobs,
                 racecheck, max_steps, batch_threads):
    """(Costs, hazards) after running `ids` in `jobs` processes; launch.heap holds the result."""
    chunks = [c for c in np.array_split(ids, min(jobs, len(ids))) if len(c)]
    ctx = mp.get_context("spawn")
    work = [(text, kernel, grid, block, args, arch, shared_bytes, c, racecheck, max_steps, batch_threads)
            for c in chunks]
    with ctx.Pool(len(chunks)) as pool:
        results = pool.map(_worker, work)
    costs, hazards = Costs(prog, arch), []
    written = np.zeros(launch.heap.data.size, bool)
    fault = None
    for res in results:
        idx, vals = res["changed"]
        clash = written[idx] & (launch.heap.data[idx] != vals)
        if clash.any():
            from .state import GLOBAL_BASE
            addr = GLOBAL_BASE + int(idx[np.flatnonzero(clash)[0]])
            k = launch.heap.owner(addr)
            where = f" of {launch.heap.names[k]}" if k is not None else ""
            raise LayoutsimError(f"CTAs run in different processes wrote different values to global "
                                 f"address {addr:#x}{where}: they communicate through global memory; "
                                 f"run with jobs=1")
        launch.heap.data[idx] = vals
        written[idx] = True
        costs.merge(res["costs"])
        hazards.extend(res["hazards"])
        launch.notes.update(res["notes"])
        fault = fault or res["fault"]
    if fault:
        raise PtxFault(fault["message"], fault=fault)
    return costs, hazards


def _worker(job):
    from . import runner
    from .launch import Launch
    text, kernel, grid, block, args, arch, shared_bytes, ids, racecheck, max_steps, batch_threads = job
    prog = runner.program(text, kernel, arch)
    launch = Launch(prog, grid, block, args, arch, shared_bytes)
    before = launch.heap.data.copy()
    costs, hazards = Costs(prog, arch), []
    fault = None
    try:
        runner._run_ctas(prog, launch, ids, costs, hazards, racecheck, max_steps, None, batch_threads)
    except PtxFault as e:
        fault = e.fault
    idx = np.flatnonzero(launch.heap.data != before)
    return {"changed": (idx, launch.heap.data[idx]), "costs": costs, "hazards": hazards,
            "notes": launch.notes, "fault": fault}
