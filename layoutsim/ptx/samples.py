"""The lanes and addresses of a hotspot line: the first PER_LINE warp executions of every
shared- and global-memory instruction, as the cost models saw them, and a picture of one.

Recording is always on and bounded: PER_LINE executions of 32 addresses per PTX instruction
(the first ones in execution order: CTA batch by batch, warps in order), whatever the launch's
size; once a line has its sample it costs one comparison per execution. What is recorded is
what costs.py costs per lane: ld/st/atom and ldmatrix/stmatrix on shared memory (the bank
model's op and CTA-relative offsets: for ldmatrix the row-address lanes), ld/st/atom/red and
cp.async on global memory (generic addresses). wmma, wgmma and TMA accesses are costed as whole
patterns and are not sampled.

    r = ptx.run(...)
    r.accesses(198)              # PTX line 198, or "transpose.cu:9" (every PTX line of it)
    r.render_access(198, "line198.svg")     # the first execution over banks (shared) or sectors
"""
import numpy as np

from ..errors import LayoutsimError
from .state import GLOBAL_BASE, coords

PER_LINE = 8


class Samples:
    """The observer (events.py) that keeps them: it subscribes to the `costed` events of Costs.
    What a step gives is kept as its arrays (a few slices); the rows of dicts (`rows`) are made
    from them when first asked for (Run.samples), not at every launch."""

    def __init__(self, n_sites, arch, per_line=PER_LINE):
        self.per_line = per_line
        self.arch = arch
        self.kept = [[] for _ in range(n_sites)]    # per site: [(space, op, O, M, where, counts, rows taken)]
        self.count = [0] * n_sites                  # per site: the rows kept
        self.batch = None                  # the batch running now (begin)

    def begin(self, bt):
        """The batch whose accesses come next (a sample names its CTA and warp)."""
        self.batch = bt
        return self

    def end(self):
        """The launch is over: its batch is let go (a Run keeps this object until its rows are read)."""
        self.batch = None
        return self

    def on_costed(self, site, space, op, O, M, warps, counts):
        """counts: what the model counted per row (costs.py: the bank model's wavefronts and
        ideal, the coalescing model's requests, sectors and ideal sectors)."""
        if self.count[site] < self.per_line:
            self.add(site, space, op, O, M, warps, counts)

    def __getstate__(self):               # a worker process sends its samples back (the rows taken), not its batch
        return dict(self.__dict__, batch=None, kept=[[_taken(*c) for c in chunks] for chunks in self.kept])

    def add(self, site, space, op, O, M, warps, counts):
        """Rows O/M [N, 32] (offsets, active lanes) of one step; counts: {name: int[N]} per row.
        Kept as what the cost model gave (it makes them anew or keeps them unchanged) and the
        number of rows taken, with the batch warp of each row and the batch's CTA ids and warps
        per CTA (the linear CTA id and the CTA's warp of each row, worked out when read)."""
        take = min(self.per_line - self.count[site], O.shape[0])
        if take <= 0:
            return
        bt = self.batch
        where = None if warps is None or bt is None else (warps, bt.ctas, bt.wpc, bt.launch.grid)
        self.kept[site].append((space, op, O, M, where, counts, take))
        self.count[site] += take

    @property
    def rows(self):
        """Per site: its sampled executions, {"space", "op", "cta", "warp", "mask", "addresses"
        (32: an int per active lane, None for the others) and the counts}, in execution order."""
        return [[row for chunk in chunks for row in _rows(*chunk)] for chunks in self.kept]

    def merge(self, other):
        for site, chunks in enumerate(other.kept):
            for chunk in chunks:
                take = min(self.per_line - self.count[site], chunk[6])
                if take <= 0:
                    break
                self.kept[site].append(chunk[:6] + (take,))
                self.count[site] += take


def _taken(space, op, O, M, where, counts, take):
    """A kept step (Samples.add) cut to the rows it took."""
    where = None if where is None else (where[0][:take],) + where[1:]
    return space, op, O[:take], M[:take], where, {n: v[:take] for n, v in counts.items()}, take


def _rows(space, op, O, M, where, counts, take):
    """The row dicts of one kept step (Samples.add): its first `take` rows."""
    O, M = O[:take], np.asarray(M[:take], bool)
    counts = {n: v[:take] for n, v in counts.items()}
    if where is None:
        where = [(None, None)] * len(O)
    else:
        warps, batch_ctas, wpc, grid = where
        w = np.asarray(warps[:take])
        ctas, warps = batch_ctas[w // wpc], w % wpc
        where = [(list(coords(grid, c)), w) for c, w in zip(ctas.tolist(), warps.tolist())]
    masks = np.packbits(M, axis=1, bitorder="little").view("<u4").reshape(-1).tolist()
    # an int per active lane, None for the others
    addresses = O.tolist() if M.all() else np.where(M, O.astype(object), None).tolist()
    counted = [(n, np.asarray(v).tolist()) for n, v in counts.items()]
    out = []
    for k, (cta, warp) in enumerate(where):
        row = {"space": space, "op": op, "cta": cta, "warp": warp, "mask": masks[k], "addresses": addresses[k]}
        for n, v in counted:
            row[n] = int(v[k])
        out.append(row)
    return out


def _sites(run, line):
    """Indices into run.instructions of a PTX line (int) or of a CUDA line ("file.cu:42")."""
    rows = run.instructions
    if isinstance(line, (int, np.integer)) and not isinstance(line, bool):
        found = [i for i, s in enumerate(rows) if s.line == int(line)]
    elif isinstance(line, str) and ":" in line:
        name, _, n = line.rpartition(":")
        found = [i for i, s in enumerate(rows) if n.isdigit() and s.cuda and int(s.cuda[1]) == int(n)
                 and str(s.cuda[0]).rsplit("/", 1)[-1] == name.rsplit("/", 1)[-1]]
    else:
        raise LayoutsimError(f"line {line!r}: give a PTX line number (198) or a CUDA line (\"transpose.cu:9\")")
    sampled = [i for i in found if run.samples and run.samples[i]]
    if not sampled:
        have = sorted({s.line for i, s in enumerate(rows) if run.samples and run.samples[i]})
        what = "no such line" if not found else "no shared or global access sampled there"
        raise LayoutsimError(f"line {line!r}: {what}; the PTX lines with sampled accesses are "
                             f"{', '.join(map(str, have)) or 'none'}")
    return sampled


def accesses(run, line):
    """The sampled warp executions of a line: {"ptx_line", "ptx", "cuda", "space", "op", "cta",
    "warp", "mask", "addresses" (32: an int per active lane, None for the others), and
    "wavefronts", "ideal" (shared) or "requests", "sectors", "ideal_sectors" (global)}."""
    out = []
    for i in _sites(run, line):
        s = run.instructions[i]
        cuda = {"file": s.cuda[0], "line": s.cuda[1]} if s.cuda else None
        out += [{"ptx_line": s.line, "ptx": s.text, "cuda": cuda, **r} for r in run.samples[i]]
    return out


def scene(rec, arch):
    """The picture of one sampled execution: the bank picture of `layoutsim render --banks`
    (shared), the sector picture of `layoutsim coalesce --picture` (global)."""
    title = (f"PTX line {rec['ptx_line']}: {rec['ptx']}" + (f" (CUDA line {rec['cuda']['line']})" if rec["cuda"]
             else "") + (f", CTA {tuple(rec['cta'])} warp {rec['warp']}" if rec["cta"] is not None else ""))
    if rec["space"] == "shared":
        offs = [a if a is not None else 0 for a in rec["addresses"]]
        from ..render.banks import Access, access_scene      # the pictures' modules: only for a picture
        return access_scene([Access(title, rec["op"], offs, arch, active=rec["mask"])])
    offs = [a - GLOBAL_BASE if a is not None else 0 for a in rec["addresses"]]     # the heap is 512-aligned
    from ..render.sectors import sector_scene
    return sector_scene(rec["op"], offs, active=rec["mask"], arch=arch)


def render(run, line, path, execution=0, fmt=None):
    """Draw sampled execution `execution` of a line to path (svg, html, png); the render record."""
    recs = accesses(run, line)
    if isinstance(execution, bool) or not isinstance(execution, (int, np.integer)) or \
            not 0 <= execution < len(recs):
        raise LayoutsimError(f"execution {execution!r}: line {line!r} has {len(recs)} sampled execution(s): "
                             f"give 0..{len(recs) - 1}")
    from ..render import save
    return dict(save(scene(recs[execution], run.arch), path, fmt), ptx_line=recs[execution]["ptx_line"])
