"""The SIMT scheduler of a batch: every thread has a PC; each step runs the lowest PC at which
some thread waits, for all threads (of every warp and CTA of the batch) that are there.

Running the lowest PC first is the "min-PC" reconvergence heuristic (Collange, "Stack-less
SIMT reconvergence at low cost", 2011; Diamos et al., "SIMD re-convergence at thread
frontiers", MICRO 2011): threads that branched apart meet again at the first instruction both
paths reach, in program order, which is where structured code (what nvcc emits) reconverges.
Warps of one CTA, and all CTAs of the batch, run in lockstep while their PCs agree.

Synchronization:
  * warp-collective steps (.sync with a membermask, .aligned) run for a warp only when all
    its live lanes the mask names are there; early lanes wait at the step (PTX ISA 9.7.9.6:
    "wait for all threads in membermask to arrive");
  * bar.sync/.red: a thread waits; its warp has arrived when all its live lanes wait (PTX ISA
    9.7.13.1); the barrier completes when the expected warps (the thread count / 32, or every
    warp of the CTA with a live thread) have arrived, counting bar.arrive warps;
  * warpgroup collectives (wgmma, sync "warpgroup") run for a warpgroup (warps 4g..4g+3 of a
    CTA) only when all its live lanes are there;
  * mbarrier test_wait/try_wait (step kind "mbwait") are yield points: a thread whose phase has
    not completed parks at the instruction; parked threads try again once everything else has
    run and some mbarrier changed. When none changed, they are let through once with the
    result false (what try_wait gives when its time limit passes; test_wait's answer), and
    after SPIN_ROUNDS such rounds with no mbarrier change every one of them spins forever:
    a deadlock;
  * exit: the thread stops; barriers then expect fewer warps.
Nothing left to run while threads wait is a deadlock, reported with the waiting instructions.

Straight lines: when the threads that ran an ordinary step ("op", no warp collective) go on to a
PC below every PC where other threads wait (or none waits) and no warp waits at a collective there,
that PC is the lowest at which threads wait and they are all there: if it is an ordinary step too,
it runs at once for the same threads, with no look at the waiting PCs and no recount of the
threads (a divergent kernel's threads on the lower path run on until they reach the others); a
warp collective runs on too when the threads are every live thread (all its lanes are there). The
same steps run for the same threads in the same order as the general loop would run them; with
LAYOUTSIM_PTX_REFERENCE=1 in the environment every step goes through the general loop (the
reference the differential test, tests/ptx/test_fast_path.py, compares with).
"""
import os

import numpy as np

from . import faults
from .state import Fault

SPIN_ROUNDS = 64          # rounds of false test_wait/try_wait results with no mbarrier change


class Scheduler:
    def __init__(self, bt, costs, watch):
        self.bt, self.costs = bt, costs
        self.steps = bt.prog.steps
        self.watch = watch                     # watch.Watch: step and time limits, progress
        self.bar_wait, self.ws_wait = {}, {}
        self.mb_wait, self.mb_forced = {}, {}  # mbwait pc -> parked threads / threads to answer false
        self.mb_epoch, self.mb_rounds = -1, 0
        self.arrived = {}                      # barrier id -> warps arrived by bar.arrive, per CTA
        T = bt.T
        bt.bar_id = np.full(T, -1, np.int64)
        bt.bar_cnt = np.zeros(T, np.int64)
        bt.bar_pred = np.zeros(T, bool)
        self.n_live = int(np.count_nonzero(bt.live))
        self.live_warps = int(np.count_nonzero(bt.live.reshape(bt.W, 32).any(1)))
        self.straight = None if reference() else bt.prog.straight
        bt.fast = self.straight is not None     # and the handlers' own (mma_regs.py)
        self.counted = bt.prog.counted

    # ---- the loop --------------------------------------------------------------------------------
    def run(self):
        """Run the batch to its end; returns the number of steps it took."""
        bt, steps, costs = self.bt, self.steps, self.costs
        straight, counted, collective = self.straight, self.counted, bt.prog.collective
        fused = bt.prog.fused if straight is not None else None
        groups = {0: bt.live.copy()} if self.n_live else {}
        n, check_at = 0, 1
        while True:
            if not groups:
                if self._release(groups):
                    continue
                if self.mb_wait and self._retry(groups):
                    continue
                if self.bar_wait or self.ws_wait or self.mb_wait:
                    raise self._deadlock()
                return n
            p = min(groups)
            m = groups.pop(p)
            if p in self.ws_wait:
                m = m | self.ws_wait.pop(p)
            step = steps[p]
            cnt = int(np.count_nonzero(m))
            full = cnt == self.n_live
            if step.sync is not None and step.kind == "op":
                m, park = self._ready(step, m, full)
                if park is not None:
                    self.ws_wait[p] = park if p not in self.ws_wait else self.ws_wait[p] | park
                    if not m.any():
                        continue
                    full = False
            nw = None
            # the lowest PC where other threads wait: below it, this group's next PC is the lowest
            lo = min(groups) if groups else len(steps)
            while True:                             # a straight line of ordinary steps runs on here
                run = fused[p] if fused is not None else None
                if run is not None and full and p + run[0] <= lo and not self.ws_wait and bt.issued is None:
                    # k mma.sync steps that would run one after another here, as one (mma_runs.py):
                    # each counted and checked as the loop below would, then all computed
                    k = run[0]
                    if nw is None:
                        nw = self.live_warps
                    for i in range(p, p + k):
                        costs.executions[steps[i].site] += nw
                        costs.warp_instructions += nw
                        n += 1
                        if n >= check_at:
                            check_at = self.watch.check(n)
                    try:
                        run[1](bt, m, True)
                    except Fault as f:
                        raise self._fault(step, f) from None
                    p += k - 1
                    step = steps[p]
                    q = p + 1
                    if (straight[q] or collective[q]) and q < lo and q not in self.ws_wait:
                        p = q
                        step = steps[p]
                        continue
                    _add(groups, q, m)
                    break
                if counted[p]:
                    if nw is None:
                        nw = self.live_warps if full else int(np.count_nonzero(m.reshape(bt.W, 32).any(1)))
                    costs.executions[step.site] += nw
                    costs.warp_instructions += nw
                    if bt.issued is not None:       # %clock64: each warp's own count
                        bt.issued += m.reshape(bt.W, 32).any(1)
                n += 1
                if n >= check_at:
                    check_at = self.watch.check(n)
                if step.guard is not None:
                    pred = bt.regs[step.guard[0]]
                    g = m & ~pred if step.guard[1] else m & pred
                    gfull = False
                else:
                    g, gfull = m, full
                if step.kind == "op":
                    try:
                        step.fn(bt, g, gfull)
                    except Fault as f:
                        raise self._fault(step, f) from None
                    q = p + 1
                elif step.kind == "bra" and straight is not None:
                    if gfull or step.guard is None:
                        q = step.target                 # every thread of m takes it
                    elif not np.count_nonzero(g):
                        q = p + 1                       # none does
                    elif (m & ~g).any():
                        _add(groups, step.target, g)    # the threads part: the general loop
                        _add(groups, p + 1, m & ~g)
                        break
                    else:
                        q = step.target
                else:
                    break
                if straight is not None and (straight[q] or full and collective[q]) and q < lo \
                        and q not in self.ws_wait:
                    p = q
                    step = steps[p]
                    continue
                _add(groups, q, m)
                break
            kind = step.kind
            if kind == "op" or (kind == "bra" and straight is not None):
                continue
            try:
                if kind == "mbwait":
                    forced = self.mb_forced.pop(p, None)
                    park = step.fn(bt, g, gfull, forced)
                    _add(groups, p + 1, m & ~park)
                    if park.any():
                        self.mb_wait[p] = self.mb_wait[p] | park if p in self.mb_wait else park
                elif kind == "bra":
                    _add(groups, step.target, g)
                    if step.guard is not None:
                        _add(groups, p + 1, m & ~g)
                elif kind == "call":
                    step.fn(bt, g, gfull)
                    _add(groups, p + 1, g)
                    if step.guard is not None:
                        _add(groups, step.target, m & ~g)
                elif kind == "jump":                # per-thread targets: recursion, function pointers
                    tgt = step.fn(bt, g, gfull)
                    for q in np.unique(tgt[g]):
                        _add(groups, int(q), g & (tgt == q))
                    if step.guard is not None:
                        _add(groups, step.target if step.target >= 0 else p + 1, m & ~g)
                elif kind == "exit":
                    bt.live = bt.live & ~g
                    self.n_live = int(np.count_nonzero(bt.live))
                    self.live_warps = int(np.count_nonzero(bt.live.reshape(bt.W, 32).any(1)))
                    if step.guard is not None:
                        _add(groups, p + 1, m & ~g)
                    if self.bar_wait or self.arrived:
                        self._release(groups)
                    for q in list(self.ws_wait):       # warp collectives may have waited for these
                        _add(groups, q, self.ws_wait.pop(q))
                elif kind == "bar":
                    self._barrier(step, p, g, groups)
                    if step.guard is not None:
                        _add(groups, p + 1, m & ~g)
                elif kind == "trap":
                    if g.any():
                        raise Fault(int(np.flatnonzero(g)[0]), 0, "trap executed", "trap")
                    _add(groups, p + 1, m)
                else:
                    raise AssertionError(kind)
            except Fault as f:
                raise self._fault(step, f) from None

    # ---- warp-collective readiness ---------------------------------------------------------------
    def _ready(self, step, m, full):
        if full:
            return m, None
        bt = self.bt
        M = m.reshape(bt.W, 32)
        L = bt.live.reshape(bt.W, 32)
        if step.sync == "warpgroup":
            return self._ready_warpgroup(M, L, m)
        if step.sync == "all":
            need = L & M.any(1)[:, None]
        else:
            mm = step.sync(bt).reshape(bt.W, 32)
            bits = np.bitwise_or.reduce(np.where(M, mm, np.uint32(0)), axis=1)
            need = L & ((bits[:, None] >> np.arange(32, dtype=np.uint32)) & np.uint32(1)).astype(bool)
        missing = (need & ~M).any(1)
        if not missing.any():
            return m, None
        park = (M & missing[:, None]).reshape(-1)
        return m & ~park, park

    def _ready_warpgroup(self, M, L, m):
        """All live lanes of every warp of each warpgroup (4 consecutive warps of a CTA) present."""
        bt = self.bt
        w = np.arange(bt.W)
        wg = (w // bt.wpc) * (-(-bt.wpc // 4)) + (w % bt.wpc) // 4
        n = int(wg.max()) + 1
        present = np.zeros(n, bool)
        np.logical_or.at(present, wg, M.any(1))
        missing = np.zeros(n, bool)
        np.logical_or.at(missing, wg, (L & present[wg][:, None] & ~M).any(1))
        if not missing.any():
            return m, None
        park = (M & missing[wg][:, None]).reshape(-1)
        return m & ~park, park

    # ---- mbarrier waits --------------------------------------------------------------------------
    def _retry(self, groups):
        """Put the threads parked at mbarrier waits back to run; False when they have answered
        false SPIN_ROUNDS times in a row with no mbarrier changing (a deadlock)."""
        mb = self.bt.mbarriers
        epoch = mb.epoch if mb is not None else 0
        forced = epoch == self.mb_epoch
        if forced:
            self.mb_rounds += 1
            if self.mb_rounds > SPIN_ROUNDS:
                return False
        else:
            self.mb_epoch, self.mb_rounds = epoch, 0
        for pc, mask in self.mb_wait.items():
            _add(groups, pc, mask)
            if forced:
                self.mb_forced[pc] = mask
        self.mb_wait = {}
        return True

    # ---- CTA barriers ------------------------------------------------------------------------------
    def _barrier(self, step, p, g, groups):
        bt, info = self.bt, step.info
        if not g.any():
            return
        if (info["mode"] == "sync" and info["count"] is None and not self.bar_wait and not self.arrived
                and self.straight is not None and np.count_nonzero(g) == self.n_live
                and np.ndim(info["id"](bt)) == 0):
            # every live thread at one bar.sync with no count, nothing else waiting: each CTA with a
            # live thread completes it at once (what the general path below and _release find)
            bt.bar_id = np.where(g, -1, bt.bar_id)
            bt.bar_cnt = np.where(g, 0, bt.bar_cnt)
            _add(groups, p + 1, g)
            ctas = np.zeros(bt.n_cta, bool)
            ctas[bt.cta_index[g]] = True
            bt.events.sync("bar", np.flatnonzero(ctas))
            return
        ids = np.broadcast_to(np.asarray(info["id"](bt)), (bt.T,)).astype(np.int64)
        cnt = np.broadcast_to(np.asarray(info["count"](bt)), (bt.T,)).astype(np.int64) \
            if info["count"] is not None else np.zeros(bt.T, np.int64)
        if info["mode"] == "arrive":
            G = g.reshape(bt.W, 32)
            for bid in np.unique(ids[g]):
                warps = (G & (ids == bid).reshape(bt.W, 32)).any(1).reshape(bt.n_cta, bt.wpc).sum(1)
                arr = self.arrived.setdefault(int(bid), np.zeros(bt.n_cta, np.int64))
                arr += warps
                c = self.arrived.setdefault(("count", int(bid)), np.zeros(bt.n_cta, np.int64))
                np.maximum.at(c, bt.cta_index[g & (ids == bid)], cnt[g & (ids == bid)])
            _add(groups, p + 1, g)
        else:
            bt.bar_id = np.where(g, ids, bt.bar_id)
            bt.bar_cnt = np.where(g, cnt, bt.bar_cnt)
            if info["mode"] == "red":
                bt.bar_pred = np.where(g, np.broadcast_to(np.asarray(info["pred"](bt)), (bt.T,)), bt.bar_pred)
            self.bar_wait[p] = self.bar_wait[p] | g if p in self.bar_wait else g
        self._release(groups)

    def _release(self, groups):
        """Complete every barrier whose expected warps have arrived; True if any did."""
        bt = self.bt
        if not self.bar_wait:
            return False
        parked = np.zeros(bt.T, bool)
        for mask in self.bar_wait.values():
            parked |= mask
        L = bt.live.reshape(bt.W, 32)
        live_warps = L.any(1).reshape(bt.n_cta, bt.wpc).sum(1)
        done_any = False
        for bid in np.unique(bt.bar_id[parked]):
            P = parked & (bt.bar_id == bid)
            P2 = P.reshape(bt.W, 32)
            warp_in = P2.any(1) & ~(L & ~P2).any(1)
            arrived = warp_in.reshape(bt.n_cta, bt.wpc).sum(1) + \
                self.arrived.get(int(bid), np.zeros(bt.n_cta, np.int64))
            cnt = np.zeros(bt.n_cta, np.int64)
            np.maximum.at(cnt, bt.cta_index[P], bt.bar_cnt[P])
            cnt = np.maximum(cnt, self.arrived.get(("count", int(bid)), 0))
            expected = np.where(cnt > 0, -(-cnt // 32), live_warps)
            has = np.zeros(bt.n_cta, bool)
            has[bt.cta_index[P]] = True
            done = has & (arrived >= expected)
            if not done.any():
                continue
            rel = P & done[bt.cta_index]
            for pc in list(self.bar_wait):
                r = self.bar_wait[pc] & rel
                if not r.any():
                    continue
                info = self.steps[pc].info
                if info["mode"] == "red":
                    self._reduce(info, r)
                _add(groups, pc + 1, r)
                left = self.bar_wait[pc] & ~r
                if left.any():
                    self.bar_wait[pc] = left
                else:
                    del self.bar_wait[pc]
            for key in (int(bid), ("count", int(bid))):
                if key in self.arrived:
                    self.arrived[key][done] = 0
            bt.bar_id = np.where(rel, -1, bt.bar_id)
            bt.events.sync("bar", np.flatnonzero(done))
            done_any = True
        return done_any

    def _reduce(self, info, r):
        bt = self.bt
        vals = bt.bar_pred & r
        per_cta = np.zeros(bt.n_cta, np.int64)
        np.add.at(per_cta, bt.cta_index[r], vals[r].astype(np.int64))
        n = np.zeros(bt.n_cta, np.int64)
        np.add.at(n, bt.cta_index[r], 1)
        red = info["red"]
        if red == "popc":
            out = per_cta[bt.cta_index].astype(np.uint32)
        elif red == "and":
            out = (per_cta == n)[bt.cta_index]
        else:
            out = (per_cta > 0)[bt.cta_index]
        info["dst"](bt, out, r, False)

    # ---- errors ---------------------------------------------------------------------------------------
    def _fault(self, step, f):
        return faults.of_fault(self.bt, step, f)

    def _deadlock(self):
        bt = self.bt
        waits = []
        for kind, pending in (("barrier", self.bar_wait), ("warp-synchronous instruction", self.ws_wait)):
            for pc, mask in sorted(pending.items()):
                waits.append((kind, self.steps[pc], mask, int(np.flatnonzero(mask)[0]), None))
        mb = bt.mbarriers
        for pc, mask in sorted(self.mb_wait.items()):
            step = self.steps[pc]
            if step.info.get("waits_on"):          # barrier.cluster.wait (ops_cluster.py)
                waits.append((step.info["waits_on"], step, mask, int(np.flatnonzero(mask)[0]), None))
                continue
            t, _, flat = mb.parked.get(step.site, (int(np.flatnonzero(mask)[0]), 0, None))
            waits.append(("mbarrier", step, mask, t, mb.describe(flat) if flat is not None else "an mbarrier"))
        return faults.deadlock(bt, waits)


def reference():
    """True when LAYOUTSIM_PTX_REFERENCE is set (not "" or "0"): every step through the general loop."""
    return os.environ.get("LAYOUTSIM_PTX_REFERENCE", "") not in ("", "0")


def _add(groups, pc, mask):
    if not np.count_nonzero(mask):
        return
    old = groups.get(pc)
    groups[pc] = mask if old is None else (old | mask)
