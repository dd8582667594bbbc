"""--racecheck: shared-memory hazards between warps of a CTA with no barrier in between.

What compute-sanitizer's racecheck reports: two accesses to the same shared byte by threads of
different warps, at least one a write, with no barrier between them (RAW: a read of a byte
another warp wrote; WAR: a write of a byte another warp read; WAW: two warps write it).
Every byte remembers its last writer (warp, PTX instruction, barrier epoch) and the warps that
read it in the current epoch; a completed barrier starts a new epoch for its CTA. Atomics are
not hazards. Hazards are reported once per (kind, earlier instruction, later instruction) with
a count and the first example (CTA, address, warps).
"""
import numpy as np


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
        self.epoch = np.zeros(bt.n_cta, np.int64)
        self.hazards = {}

    def barrier(self, ctas):
        """CTAs (batch indices) whose barrier completed."""
        self.epoch[ctas] += 1

    def access(self, kind, site, flat, nbytes, threads):
        """kind "ld" or "st"; flat: byte offsets into the batch's shared array."""
        bt = self.bt
        idx = (flat[:, None] + np.arange(nbytes)).reshape(-1)
        thr = np.repeat(threads, nbytes)
        warp = (bt.local_tid[thr] // 32).astype(np.int32)
        ep = self.epoch[bt.cta_index[thr]]
        same_epoch_w = self.w_epoch[idx] == ep
        other_writer = same_epoch_w & (self.w_warp[idx] >= 0) & (self.w_warp[idx] != warp)
        if kind == "ld":
            self._report("RAW", self.w_site[idx], site, other_writer, idx, thr, self.w_warp[idx], warp)
            fresh = self.r_epoch[idx] != ep
            self.r_mask[idx[fresh]] = 0
            np.bitwise_or.at(self.r_mask, idx, np.uint64(1) << warp.astype(np.uint64))
            self.r_epoch[idx] = ep
            self.r_site[idx] = site
            return
        self._report("WAW", self.w_site[idx], site, other_writer, idx, thr, self.w_warp[idx], warp)
        readers = np.where(self.r_epoch[idx] == ep, self.r_mask[idx], np.uint64(0))
        others = readers & ~(np.uint64(1) << warp.astype(np.uint64))
        low = others & (~others + np.uint64(1))
        reader = np.where(others != 0, np.log2(np.maximum(low, np.uint64(1)).astype(np.float64)), -1)
        self._report("WAR", self.r_site[idx], site, others != 0, idx, thr, reader.astype(np.int32), warp)
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
