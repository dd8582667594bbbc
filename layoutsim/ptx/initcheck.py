"""--initcheck: reads of shared memory that no thread of the CTA has written yet.

compute-sanitizer's initcheck reports reads of uninitialized *global* memory ("Uninitialized
__global__ memory read of size 4 bytes ... by thread (0,0,0) in block (0,0,0)"). Here every
global buffer is written by the host before the launch (an --arg array, zeros: included; a
.global variable, zero-filled or initialized like CUDA's __device__ variables), so what a kernel
can read uninitialized is its shared memory, which the GPU never clears: this check is that
one. Each shared byte of a batch has a written bit (kept only when initcheck is on: no cost
otherwise); every write sets it (st, atom, cp.async when its copy lands, stmatrix, wmma.store,
TMA and bulk copies into shared memory), every read checks it (ld, atom, ldmatrix, wmma.load,
wgmma operands, TMA and bulk copies out of shared memory). Each PTX line that read a byte never
written is reported once, with its first offending access (CTA, thread, address: the access's
CTA-relative start, size) and the number of thread accesses that read one.
"""
import numpy as np


class InitCheck:
    def __init__(self, bt):
        self.bt = bt
        self.written = np.zeros(bt.n_cta * bt.S, bool)
        for off, raw in bt.prog.shared_init:
            for c in range(bt.n_cta):
                self.written[c * bt.S + off:c * bt.S + off + raw.size] = True
        self.found = {}                     # site -> record

    def on_access(self, rec):
        """The observer (events.py): shared bytes a record writes are set, the ones it reads
        checked (an atomic reads the old value, then writes)."""
        if rec.space not in ("shared", "shared::cluster") or not rec.lands:     # DSMEM: the target CTA's bytes
            return
        rows = rec.byte_rows()
        if rec.effect != "write":
            self.read(rec.site, rows, rec.access_threads())
        if rec.effect != "read":
            self.write(rows)

    def write(self, idx):
        """Flat byte indices (any shape) into the batch's shared array were written."""
        self.written[np.asarray(idx, np.int64).reshape(-1)] = True

    def read(self, site, idx, threads):
        """idx [n, k]: the flat bytes each of threads [n] reads."""
        idx = np.asarray(idx, np.int64).reshape(len(threads), -1)
        bad = ~self.written[idx].all(axis=1)
        if not bad.any():
            return
        rec = self.found.get(site)
        if rec is None:
            bt = self.bt
            j = int(np.flatnonzero(bad)[0])
            t = int(threads[j])
            lt = int(bt.local_tid[t])
            rec = self.found[site] = {
                "site": site, "count": 0, "size": idx.shape[1],
                "address": int(idx[j].min() % bt.S),          # in the CTA whose bytes are read
                "cta": list(bt.launch.cta_coords(int(bt.ctas[bt.cta_index[t]]))),
                "thread": list(bt.launch.thread_coords(lt)), "warp": lt // 32, "lane": lt % 32}
        rec["count"] += int(bad.sum())

    def report(self):
        return list(self.found.values())


def span(flat, nbytes):
    """[n, nbytes] flat byte indices of n accesses of nbytes at flat offsets."""
    return np.asarray(flat, np.int64).reshape(-1)[:, None] + np.arange(nbytes)


def merge(records, prog):
    """One record per PTX line over every batch (the first batch's example, the counts summed),
    in program order, with the line, its CUDA line and its text."""
    out = {}
    for r in records:
        if r["site"] in out:
            out[r["site"]]["count"] += r["count"]
        else:
            out[r["site"]] = dict(r)
    rows = []
    for site in sorted(out):
        r = out[site]
        s = prog.sites[site]
        rows.append({"ptx_line": s.line, "cuda": {"file": s.cuda[0], "line": s.cuda[1]} if s.cuda else None,
                     "ptx": s.text, "space": "shared", **{k: r[k] for k in ("size", "address", "cta", "thread",
                                                                           "warp", "lane", "count")}})
    return rows


def lines(records):
    """The text report's lines, worded as compute-sanitizer's initcheck."""
    if not records:
        return ["initcheck: no reads of uninitialized shared memory"]
    out = []
    for r in records:
        cuda = f"{r['cuda']['file'].rsplit('/', 1)[-1]}:{r['cuda']['line']}" if r["cuda"] else "no CUDA line"
        out.append(f"initcheck: Uninitialized __shared__ memory read of size {r['size']} bytes at {cuda} "
                   f"(PTX line {r['ptx_line']}: {r['ptx']}) by thread ({','.join(map(str, r['thread']))}) "
                   f"in block ({','.join(map(str, r['cta']))}), address {r['address']:#x}; "
                   f"{r['count']} such read(s)")
    return out
