"""What a wmma.load / wmma.store costs: the SASS accesses ptxas emits for it (wmma.py's plan),
each through the bank model (shared) or the coalescing model (global). Part of the cost
observer (costs.Costs.on_access); the handler (ops_matrix) emits the access with an
events.WmmaPattern.

Shared-memory costs depend only on the stride and on the base address modulo 128 (the bank
period), so each distinct (stride, base mod 128) is costed once per op and arch.
"""
import numpy as np

from .. import banks
from ..access import op_name
from ..warpcore import wmma as core_wmma
from . import wmma as WM


_CACHE = {}


def cost(costs, rec):
    """Cost the access `rec` (events.Access, op wmma.load/wmma.store, addresses [n, R, C]
    space-relative byte addresses) into `costs` (costs.Costs)."""
    p, sp, site = rec.detail, rec.space, rec.site
    verb = "store" if rec.op == "wmma.store" else "load"
    key = f"wmma.{verb}.{'d' if verb == 'store' else p.use}.sync.aligned.{p.layout}.{p.shape}.{sp}.{p.typ}"
    plan = WM.accesses(key, p.frag, WM.ELEM_BITS[p.typ])
    if plan is None:
        costs.batch.launch.notes.add(f"{key}: no SASS lowering recorded; not costed")
        return
    kind = "st" if verb == "store" else "ld"
    rel = rec.addresses
    base = rel[:, 0, 0]
    if sp == "shared":
        pattern = p.strides * 128 + base % 128
        uniq, first, counts = np.unique(pattern, return_index=True, return_counts=True)
        for u, f, c in zip(uniq, first, counts):
            ck = (key, costs.arch, int(u))
            got = _CACHE.get(ck)
            if got is None:
                A = (rel[f] - base[f] + base[f] % 128)[None]
                got = []
                for acc in plan:
                    O, M = _access_offsets(acc, A, p.positions, p.frag)
                    wf = int(banks.wavefronts_batch(acc.bank_op, O, costs.arch, active=M).sum())
                    ideal = int(banks.ideal_batch(acc.bank_op, O, costs.arch, active=M).sum())
                    got.append((acc, wf, ideal))
                _CACHE[ck] = got
            for acc, wf, ideal in got:
                costs.add_shared(site, kind, acc.sass, wf * int(c), ideal * int(c))
        return
    for acc in plan:
        O, M = _access_offsets(acc, rel, p.positions, p.frag)
        lanes = np.broadcast_to(np.arange(32), O.shape)
        costs.global_(site, op_name(kind, "global", WM._width(acc.sass)), kind, O[M],
                      (p.warp_threads[:, :1] + lanes)[M])


def _access_offsets(acc, A, positions, frag):
    """Per-lane byte addresses [n, 32] and active lanes of one SASS access."""
    n = A.shape[0]
    if acc.kind == "matrix":
        O = np.zeros((n, 32), np.int64)
        M = np.zeros((n, 32), bool)
        for m, reg in enumerate(acc.elems):
            pos = core_wmma.register_positions(frag, reg)                 # [32*slots, 3]
            # the register holds 8 rows of 16 contiguous bytes: their starts, in address order
            ad = np.sort(A[:, pos[:, 1], pos[:, 2]], axis=1)
            O[:, 8 * m:8 * m + 8] = ad[:, ::ad.shape[1] // 8]
            M[:, 8 * m:8 * m + 8] = True
        return O, M
    el = np.asarray(acc.elems)
    pos = positions[:, el]                                               # [32, E, 2]
    ad = A[:, pos[..., 0], pos[..., 1]]                                  # [n, 32, E]
    esz = frag.elem_bits // 8
    contiguous = np.all(ad[..., 1:] - ad[..., :-1] == esz) if ad.shape[2] > 1 else True
    if contiguous:
        return ad[..., 0], np.ones((n, 32), bool)
    # the words of these elements across the warp, in any lane order (one 32-bit phase)
    words = np.sort(ad.reshape(n, -1) & ~np.int64(3), axis=1)
    uniq = [np.unique(r) for r in words]
    O = np.zeros((n, 32), np.int64)
    M = np.zeros((n, 32), bool)
    for k, u in enumerate(uniq):
        O[k, :len(u[:32])] = u[:32]
        M[k, :len(u[:32])] = True
    return O, M
