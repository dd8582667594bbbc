"""Thread-block cluster instructions: barrier.cluster.arrive / wait, mapa and getctarank (PTX ISA
9.0, 9.7.13.3 barrier.cluster, 9.7.9.23 mapa, 9.7.9.24 getctarank). The shared::cluster window,
the cluster shape and the CTA order are cluster.py's; ld/st/atom/red on .shared::cluster go
through access.locate, the cluster forms of mbarrier and cp.async.bulk through ops_async.

barrier.cluster (9.7.13.3): arrive marks the thread's arrival at the current phase; wait makes
the thread wait until every non-exited thread of the cluster has arrived at the phase the
waiting thread last arrived at (a thread that exits no longer holds the barrier up, 9.7.12.7).
Each thread arrives once per phase and waits after arriving: the model refuses a second arrive
before the wait, and a wait with no arrive, as the undefined behaviour they are. .relaxed,
.release, .acquire and .aligned change nothing here (memory operations take effect in program
order). A wait is a yield point like mbarrier.try_wait (scheduler.py, step kind "mbwait"): the
thread parks until the cluster's threads have arrived; if they never can, a deadlock.
"""
import numpy as np

from . import cluster as CL
from . import types as T
from .builders import exactly, unsupported
from .mbarrier import MBarriers
from .state import SHARED_WINDOW, WINDOW, Fault


class ClusterBarrier:
    """Per thread: arrivals made and waits completed (phase numbers)."""

    def __init__(self, bt):
        self.arrived = np.zeros(bt.T, np.int64)
        self.waited = np.zeros(bt.T, np.int64)
        self.completed = np.zeros(bt.n_cta // bt.cluster_size, np.int64)    # phases done per cluster


def _state(bt):
    if bt.cluster_barrier is None:
        bt.cluster_barrier = ClusterBarrier(bt)
    if bt.mbarriers is None:              # its epoch tells the scheduler a waiter may now pass
        bt.mbarriers = MBarriers()
    return bt.cluster_barrier


def barrier_cluster(ins, b, prog):
    mods = [m for m in ins.mods[1:] if m not in ("aligned", "relaxed", "release", "acquire")]
    if mods not in (["arrive"], ["wait"]):
        raise unsupported(ins, "barrier.cluster takes .arrive or .wait")
    exactly(ins, 0)
    if mods == ["arrive"]:
        if "acquire" in ins.mods:
            raise unsupported(ins, "barrier.cluster.arrive takes .release or .relaxed (PTX ISA 9.7.13.3)")

        def arrive(bt, g, full):
            thr = np.flatnonzero(g)
            if len(thr) == 0:
                return
            cb = _state(bt)
            twice = cb.arrived[thr] > cb.waited[thr]
            if twice.any():
                t = int(thr[np.flatnonzero(twice)[0]])
                raise Fault(t, 0, f"{ins.name}: the thread arrives again before its barrier.cluster.wait "
                                  f"(one arrival per phase, PTX ISA 9.7.13.3; undefined behaviour)",
                            "cluster_barrier")
            cb.arrived[thr] += 1
            bt.mbarriers.epoch += 1
        return {"fn": arrive}
    if any(m in ins.mods for m in ("release", "relaxed")):
        raise unsupported(ins, "barrier.cluster.wait takes .acquire (PTX ISA 9.7.13.3)")

    def wait(bt, g, full, forced):
        parked = np.zeros(bt.T, bool)
        thr = np.flatnonzero(g)
        if len(thr) == 0:
            return parked
        cb = _state(bt)
        missing = cb.arrived[thr] <= cb.waited[thr]
        if missing.any():
            t = int(thr[np.flatnonzero(missing)[0]])
            raise Fault(t, 0, f"{ins.name} with no barrier.cluster.arrive of the thread before it (PTX ISA "
                              f"9.7.13.3; undefined behaviour)", "cluster_barrier")
        n = bt.cluster_size
        cl = bt.cta_index // n
        live = bt.live
        least = np.full(len(cb.completed), np.iinfo(np.int64).max)
        np.minimum.at(least, cl[live], cb.arrived[live])
        new = np.flatnonzero(least > cb.completed)
        if len(new):                       # a phase completed: a barrier for every CTA of the cluster
            cb.completed[new] = least[new]
            bt.events.sync("bar", (new[:, None] * n + np.arange(n)).reshape(-1))
        ok = least[cl[thr]] > cb.waited[thr]
        cb.waited[thr[ok]] += 1
        parked[thr[~ok]] = True
        return parked
    return {"kind": "mbwait", "fn": wait, "info": {"waits_on": "cluster barrier"}}


# ---- addresses -----------------------------------------------------------------------------------
def _rank(bt, thr, read, what):
    r = np.broadcast_to(np.asarray(read(bt)), (bt.T,))[thr].astype(np.int64)
    bad = r >= bt.cluster_size
    if bad.any():
        j = int(np.flatnonzero(bad)[0])
        raise Fault(thr[j], 0, f"{what}: CTA rank {int(r[j])} is outside the cluster of {bt.cluster_size} "
                               f"CTA(s) (undefined behaviour)", "invalid_operand", "shared::cluster")
    return r


def _source(ins, b, prog, op, typ):
    """function(bt) -> the address operand `a` of mapa/getctarank: a register, a variable or var+imm."""
    if op.kind == "addr" and op.base is not None and op.base.kind == "sym":
        a, _ = b.address(op, ins)          # the variable in the thread's own CTA (its rank at bit 24)
        return lambda bt: np.asarray(a(bt), np.int64)
    if op.kind == "addr":
        raise unsupported(ins, f"address operand {op}: give a register, a variable or variable+offset")
    r = b.read(op, typ, ins)
    return lambda bt: np.asarray(r(bt)).astype(np.int64)


def _window(bt, thr, a, generic, what):
    """(shared address in the cluster window) of generic or shared addresses `a` of threads thr."""
    if not generic:
        return a
    bad = (a & ~np.int64(WINDOW - 1)) != SHARED_WINDOW
    if bad.any():
        j = int(np.flatnonzero(bad)[0])
        raise Fault(thr[j], a[j], f"{what}: generic address {int(a[j]):#x} is not in shared memory "
                                  f"(undefined behaviour)", "invalid_address", "shared::cluster")
    return a - SHARED_WINDOW


def _address_op(ins, b, prog, t, compute):
    """The step of mapa/getctarank: compute(bt, thr, batch CTA, offset) -> values of the threads
    for the address operand a (operand 1), written to operand 0 as `t`."""
    generic = "shared::cluster" not in ins.mods
    w = b.write(ins.operands[0], t, ins)
    a = _source(ins, b, prog, ins.operands[1], T.instr_type(ins.mods, ins.line))

    def fn(bt, g, full):
        thr = np.flatnonzero(g)
        if len(thr) == 0:
            return
        av = _window(bt, thr, np.broadcast_to(a(bt), (bt.T,))[thr], generic, ins.name)
        cta, off, _ = CL.resolve(bt, av, thr, 1, ins.name)
        out = np.zeros(bt.T, t.dtype)
        out[thr] = compute(bt, thr, cta, off, generic).astype(t.dtype)
        w(bt, out, g, full)
    return {"fn": fn}


def mapa(ins, b, prog):
    """mapa{.shared::cluster}.u32/.u64 d, a, rank: the address in CTA `rank` of the cluster that
    corresponds to shared address a (generic addresses without .shared::cluster)."""
    exactly(ins, 3)
    t = T.instr_type(ins.mods, ins.line)
    if t.name not in ("u32", "u64"):
        raise unsupported(ins, "mapa takes .u32 or .u64")
    r = b.read(ins.operands[2], T.get("u32"), ins)
    return _address_op(ins, b, prog, t, lambda bt, thr, cta, off, generic: CL.encode(
        _rank(bt, thr, r, ins.name), off) + (SHARED_WINDOW if generic else 0))


def getctarank(ins, b, prog):
    """getctarank{.shared::cluster}.u32/.u64 d, a: the cluster rank of the CTA holding address a."""
    exactly(ins, 2)
    return _address_op(ins, b, prog, T.get("u32"), lambda bt, thr, cta, off, generic: cta % bt.cluster_size)
