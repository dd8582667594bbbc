"""Runs of mma.sync steps executed as one batch of MMAs (issue 26).

An unrolled GEMM (CuTe's sm80 kernels: 32 mma.sync in a row) runs each mma.sync as its own step:
the gathers, one call of the arithmetic and the scatter, for the few warps of a batch, each time.
Consecutive steps of one catalog form whose operands come straight from the registers
(mma_regs.plan) and that do not depend on one another (no step reads or writes a register an
earlier one of the run writes) compute the same bits run together: every operand gathered
first, one call of the arithmetic on all of them (each MMA instance is computed on its own: the
batch is only a loop), every D scattered after. The scheduler runs a run so only where it would
run its steps one after another in a straight line for the same threads (scheduler.py), so the
steps, counts and faults are those of the steps one by one; LAYOUTSIM_PTX_REFERENCE=1 runs them
one by one (tests/ptx/test_fast_path.py compares).
"""
from .collective import whole_warps
from .mma_regs import Gather, Scatter

LONGEST = 64            # steps in one run at most (its index tables grow with it)


class Part:
    """What a run needs of one mma.sync step (ops_matrix._mma sets it as the step's
    info["mma_run"]): its form (key: the catalog entry, the arch and the registers' storages), its
    direct moves (mma_regs.plan), the arithmetic, raw(D, n): D as raw bits checked for n MMAs
    (warpcore.mma.raw_result), and the registers it reads and writes."""

    def __init__(self, key, ins, moves, comp, raw, reads, writes):
        self.key, self.ins, self.moves, self.comp, self.raw = key, ins, moves, comp, raw
        self.reads, self.writes = frozenset(reads), frozenset(writes)


def runs(steps):
    """[None or (k, fn)] per step: at the first step of each run of k > 1 mma.sync steps, the
    function running all k (fn(bt, g, full), as a step's); None elsewhere."""
    out = [None] * len(steps)
    p = 0
    while p < len(steps):
        part = steps[p].info.get("mma_run") if steps[p].guard is None else None
        if part is None:
            p += 1
            continue
        parts, written = [part], set(part.writes)
        q = p + 1
        while q < len(steps) and len(parts) < LONGEST:
            nxt = steps[q].info.get("mma_run") if steps[q].guard is None else None
            if nxt is None or nxt.key != part.key or written & (nxt.reads | nxt.writes):
                break
            parts.append(nxt)
            written |= nxt.writes
            q += 1
        if len(parts) > 1:
            out[p] = (len(parts), _joined(parts, steps[p:q]))
        p = q
    return out


def _joined(parts, run_steps):
    """The step function of a run: whole_warps once (every step of the run has the same
    threads), the operands of every step gathered, one call of the arithmetic, every D scattered;
    where D is not in its registers' dtype, each step's own function, one after another."""
    ins, comp, raw = parts[0].ins, parts[0].comp, parts[0].raw
    ga, gb, gc = (Gather.joined([p.moves[i] for p in parts]) for i in range(3))
    sd = Scatter.joined([p.moves[3] for p in parts])
    k = len(parts)

    def fn(bt, g, full):
        w, thr = whole_warps(bt, g, ins)          # .aligned: a partial warp is refused (the run's first step)
        if len(w) == 0:
            return
        first = thr[:, 0]
        D = raw(comp(ga(bt, first), gb(bt, first), gc(bt, first)), k * len(w))
        if D.dtype != sd.dtype:
            for st in run_steps:
                st.fn(bt, g, full)
            return
        sd(bt, first, D)
    return fn
