"""--racecheck: shared-memory hazards between warps of a CTA with no barrier in between.

What compute-sanitizer's racecheck reports: two accesses to the same shared byte by threads of
different warps, at least one a write, with no barrier between them (RAW: a read of a byte
another warp wrote; WAR: a write of a byte another warp read; WAW: two warps write it). An atomic
is a write to every access but another atomic: a plain store and an atomic to one byte from two
warps race (which lands last is unordered), while atomics among themselves never do (they
serialize). Every byte remembers its last plain writer (warp, PTX instruction, barrier epoch), the
warps that read it and the warps that updated it atomically in the current epoch; a completed
barrier starts a new epoch for its CTA. Hazards are reported once per (kind, earlier
instruction, later instruction) with a count and the first example (CTA, address, warps).
"""
import numpy as np

RACE_NOTE = ("racecheck does not see TMA copies, wgmma operand reads or mbarrier synchronization: "
             "hazards across an mbarrier wait may be reported")

DSMEM_RACE_NOTE = ("racecheck does not see distributed shared memory (shared::cluster) accesses of another "
                   "CTA's shared memory")


class RaceCheck:
    def __init__(self, bt):
        n = bt.n_cta * bt.S
        self.bt = bt
        self.w_warp = np.full(n, -1, np.int32)
        self.w_epoch = np.full(n, -1, np.int64)
        self.w_site = np.full(n, -1, np.int32)
        self.r_mask = np.zeros(n, np.uint64)
        self.r_epoch = np.full(n, -1, np.int64)
        self.r_site = np.full(n, -1, np.int32)
        self.a_mask = np.zeros(n, np.uint64)        # warps that updated the byte atomically
        self.a_epoch = np.full(n, -1, np.int64)
        self.a_site = np.full(n, -1, np.int32)
        self.epoch = np.zeros(bt.n_cta, np.int64)
        self.hazards = {}

    # ---- the observer (events.py) ------------------------------------------------------------------
    def on_access(self, rec):
        """Shared-memory accesses of the generic proxy whose bytes move now: ld/st/atom, cp.async
        as its copy lands, ldmatrix/stmatrix, wmma (async-proxy accesses are not seen: on_sync)."""
        if rec.space == "shared::cluster":
            self.bt.launch.notes.add(DSMEM_RACE_NOTE)
        if rec.space != "shared" or not rec.lands or rec.proxy != "generic":
            return
        kind = {"read": "ld", "write": "st", "atomic": "atom"}[rec.effect]
        self.access(kind, rec.site, rec.flat.reshape(-1), rec.width, rec.access_threads())

    def on_sync(self, kind, ctas):
        if kind == "bar":
            self.barrier(ctas)
        else:                                        # mbarrier waits, TMA, wgmma: not modelled here
            self.bt.launch.notes.add(RACE_NOTE)

    def barrier(self, ctas):
        """CTAs (batch indices) whose barrier completed."""
        self.epoch[ctas] += 1

    def access(self, kind, site, flat, nbytes, threads):
        """kind "ld", "st" or "atom"; flat: byte offsets into the batch's shared array."""
        bt = self.bt
        idx = (flat[:, None] + np.arange(nbytes)).reshape(-1)
        thr = np.repeat(threads, nbytes)
        warp = (bt.local_tid[thr] // 32).astype(np.int32)
        bit = np.uint64(1) << warp.astype(np.uint64)
        ep = self.epoch[bt.cta_index[thr]]
        same_epoch_w = self.w_epoch[idx] == ep
        other_writer = same_epoch_w & (self.w_warp[idx] >= 0) & (self.w_warp[idx] != warp)
        atomics = np.where(self.a_epoch[idx] == ep, self.a_mask[idx], np.uint64(0)) & ~bit
        readers = np.where(self.r_epoch[idx] == ep, self.r_mask[idx], np.uint64(0)) & ~bit
        if kind == "ld":
            self._report("RAW", self.w_site[idx], site, other_writer, idx, thr, self.w_warp[idx], warp)
            self._report("RAW", self.a_site[idx], site, atomics != 0, idx, thr, _lowest(atomics), warp)
            _mark(self.r_mask, self.r_epoch, self.r_site, idx, ep, bit, site)
            return
        self._report("WAW", self.w_site[idx], site, other_writer, idx, thr, self.w_warp[idx], warp)
        self._report("WAR", self.r_site[idx], site, readers != 0, idx, thr, _lowest(readers), warp)
        if kind == "atom":
            _mark(self.a_mask, self.a_epoch, self.a_site, idx, ep, bit, site)
            return
        self._report("WAW", self.a_site[idx], site, atomics != 0, idx, thr, _lowest(atomics), warp)
        # two warps writing the same byte in this very instruction
        order = np.lexsort((warp, idx))
        si, sw = idx[order], warp[order]
        dup = (si[1:] == si[:-1]) & (sw[1:] != sw[:-1])
        if np.any(dup):
            j = order[1:][dup]
            self._report("WAW", np.full(len(j), site), site, np.ones(len(j), bool), idx[j], thr[j],
                         warp[order[:-1][dup]], warp[j])
        self.w_warp[idx] = warp
        self.w_epoch[idx] = ep
        self.w_site[idx] = site

    def _report(self, kind, prev_sites, site, hit, idx, thr, prev_warp, warp):
        if not np.any(hit):
            return
        hit = np.flatnonzero(hit)
        prev = np.asarray(prev_sites)[hit]
        for p in np.unique(prev):
            sel = hit[prev == p]
            key = (kind, int(p), int(site))
            rec = self.hazards.get(key)
            if rec is None:
                j = int(sel[0])
                t = int(thr[j])
                bt = self.bt
                cta = int(bt.ctas[bt.cta_index[t]])
                rec = self.hazards[key] = {
                    "kind": kind, "first": int(p), "second": int(site), "count": 0,
                    "cta": bt.launch.cta_coords(cta),
                    "address": int(idx[j] - bt.cta_index[t] * bt.S),
                    "warps": [int(prev_warp[j]), int(warp[j])]}
            rec["count"] += len(sel)

    def report(self):
        return list(self.hazards.values())


def _mark(mask, epoch, sites, idx, ep, bit, site):
    """Add the warps `bit` to the bytes' masks of this epoch (a mask of an older epoch starts over)."""
    mask[idx[epoch[idx] != ep]] = 0
    np.bitwise_or.at(mask, idx, bit)
    epoch[idx] = ep
    sites[idx] = site


def _lowest(mask):
    """The lowest warp set in each of the uint64 masks (-1 where none is)."""
    low = mask & (~mask + np.uint64(1))
    return np.where(mask != 0, np.log2(np.maximum(low, np.uint64(1)).astype(np.float64)), -1).astype(np.int32)
