"""Cluster launch control (sm_100+, PTX ISA 8.6): a running cluster asks to cancel the launch of a
cluster that has not started, to do its work itself (CUTLASS 4.2's sm100 persistent tile scheduler,
cutlass/gemm/kernel/sm100_tile_scheduler.hpp). PTX ISA 9.x 9.7.13.17
'clusterlaunchcontrol.try_cancel' and 9.7.13.18 'clusterlaunchcontrol.query_cancel'.

  clusterlaunchcontrol.try_cancel.async{.shared::cta}.mbarrier::complete_tx::bytes
      {.multicast::cluster::all}.b128 [addr], [mbar]
  Each issuing thread's request fails, and the model writes the failed response at once: 16 bytes
  at addr, then a complete-tx of 16 bytes on the mbarrier at mbar (.multicast::cluster::all: at
  the same CTA-relative addr and mbar of every CTA of the issuing thread's cluster, undefined when
  one of them has exited: a fault). Assumed, and said in the fidelity line: a failed request is a
  valid response of the hardware (the ISA promises no success; the request fails when no cluster
  is left unstarted, and a GPU may start every cluster of a grid before the request is served), so
  the model never cancels a cluster and every CTA of the grid runs its own work. The response is
  opaque (the ISA): the model's failed one is 16 zero bytes, written through the async proxy (as
  TMA's bytes: the writes are events of op "bulk").
  clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 p, resp: false (the model's responses all
  fail), and the CTA has then observed a failure: a later try_cancel of the CTA is undefined (a
  fault). .get_first_ctaid{.v4, ::x/y/z}.b32.b128 of a failed response is undefined (a fault). A
  .b128 register holds the 16 bytes (ld/st/mov of .b128 move them between .b128 registers).
"""
import numpy as np

from .. import archs
from . import cluster as CL
from .access import locate, space_of
from .builders import need, unsupported
from .events import Access
from .mbarrier_operand import batch_mbarriers
from . import types as T
from .state import Fault

ARCH = "sm_100"
RESPONSE = 16                                   # bytes of a try_cancel response (9.7.13.17)
DOCUMENTED = ("clusterlaunchcontrol per PTX ISA 9.7.13.17-18; assumed: every try_cancel fails (a valid "
              "response: every cluster of the grid had started), no cluster is cancelled")


def _arch(ins, prog):
    if not archs.nvidia_at_least(prog.arch, ARCH):
        raise unsupported(ins, f"clusterlaunchcontrol needs sm_100 or later (PTX ISA 9.7.13.17); this run's arch "
                               f"is {prog.arch}")


def try_cancel(ins, b, prog):
    _arch(ins, prog)
    need(ins, 2)
    space = space_of(ins.mods)
    multicast = "multicast::cluster::all" in ins.mods
    resp, _ = b.address(ins.operands[0], ins)
    mbar, _ = b.address(ins.operands[1], ins)

    def fn(bt, g, full):
        thr = np.flatnonzero(g)
        if not len(thr):
            return
        seen = bt.clc_failed[bt.cta_index[thr]]
        if seen.any():
            raise Fault(int(thr[np.flatnonzero(seen)[0]]), 0, f"{ins.name} after the CTA observed a try_cancel fail "
                        f"(.is_canceled false; PTX ISA 9.7.13.17: undefined)", "invalid_operand")
        bt.events.sync("async")
        at = lambda r: np.broadcast_to(np.asarray(r(bt)), (bt.T,))[thr].astype(np.int64)    # noqa: E731
        ra = _own(bt, locate(bt, space, at(resp), thr, RESPONSE, ins.name), thr, ins, "response address")
        ma = _own(bt, locate(bt, space, at(mbar), thr, 8, ins.name), thr, ins, "mbarrier")
        mb = batch_mbarriers(bt)
        for j, t in enumerate(thr.tolist()):
            ctas = _cluster(bt, t, ins) if multicast else [int(bt.cta_index[t])]
            for c in ctas:
                flat = c * bt.S + int(ra[j])
                bt.smem[flat:flat + RESPONSE] = 0                      # the failed response
                bt.events.access(Access("bulk", "shared", ins.extra["site"], RESPONSE, np.array([t]),
                                        np.array([ra[j]]), np.array([flat]), "write", proxy="async",
                                        target=np.array([c])))
                rel = np.array([ma[j]])
                s = mb.slots(np.array([c * bt.S + int(ma[j])]), rel, np.array([t]), ins.name)
                mb.complete_tx(s, np.array([RESPONSE], np.int64), np.array([t]), rel)
    return {"fn": fn, "info": {"documented": DOCUMENTED}}


def _own(bt, parts, thr, ins, what):
    """CTA-relative offsets [n] of operands that must lie in the issuing thread's own shared memory."""
    rel = np.zeros(len(thr), np.int64)
    for sp, _, flat, who, addr in parts:
        if sp != "shared":
            raise Fault(int(who[0]), int(addr[0]), f"{ins.name}: the {what} is not in the issuing CTA's shared "
                                                   f"memory (.shared::cta; PTX ISA 9.7.13.17: undefined)",
                        "invalid_address")
        rel[np.searchsorted(thr, who)] = addr
    return rel


def _cluster(bt, t, ins):
    """The batch CTAs of thread t's cluster; a fault when one has exited (9.7.13.17: undefined)."""
    base = int(bt.cta_index[t]) - int(CL.rank_of(bt, np.array([t]))[0])
    ctas = list(range(base, base + bt.cluster_size))
    for c in ctas:
        if not bt.live[c * bt.pad:(c + 1) * bt.pad].any():
            raise Fault(t, 0, f"{ins.name}: .multicast::cluster::all while CTA rank {c - base} of the cluster has "
                              f"exited (PTX ISA 9.7.13.17: undefined)", "invalid_operand", "shared::cluster")
    return ctas


def query_cancel(ins, b, prog):
    """.is_canceled: false for the model's (failed) response, and the CTA has then observed a failure;
    .get_first_ctaid of a failed response is undefined (9.7.13.18): a fault. A value that is not a
    response the model's try_cancel wrote is a fault too (the ISA decodes only those)."""
    _arch(ins, prog)
    o = ins.operands
    src = b.read(o[1], T.get("b128"), ins)
    first = "is_canceled" not in ins.mods
    if first:
        for x in b.elems(o[0], ins):              # the destinations are checked; a failed response fills none
            b.write(x, T.get("b32"), ins)
    else:
        out = b.write(o[0], T.get("pred"), ins)

    def fn(bt, g, full):
        thr = np.flatnonzero(g)
        if not len(thr):
            return
        v = np.ascontiguousarray(np.broadcast_to(np.asarray(src(bt)), (bt.T,))[thr]).view(np.uint8).reshape(-1, RESPONSE)
        bad = v.any(axis=1)
        if bad.any():
            raise Fault(int(thr[np.flatnonzero(bad)[0]]), 0, f"{ins.name}: the value is not a response the model's "
                        f"clusterlaunchcontrol.try_cancel wrote (its failed response is 16 zero bytes; the ISA "
                        f"decodes only responses try_cancel wrote)", "invalid_operand")
        if first:
            raise Fault(int(thr[0]), 0, f"{ins.name} of a failed request's response (PTX ISA 9.7.13.18: undefined; "
                                        f"test .is_canceled first)", "invalid_operand")
        bt.clc_failed[np.unique(bt.cta_index[thr])] = True
        out(bt, np.zeros(bt.T, bool), g, full)
    return {"fn": fn, "info": {"documented": DOCUMENTED}}
