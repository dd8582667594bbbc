"""Swizzle / padding search: rank tile layouts by the wavefronts of the accesses that use them.

Given a tile (rows x cols of a dtype), the ops that write it and the ops that read it, every
candidate layout (row padding in steps that keep every access aligned, up to 128 bytes; CuTe
Swizzle<B,M,S> with B = 1..3 that leave the vectors whole and map the tile onto itself) is
costed with the bank model over all the accesses that cover the tile:

  ld/st.shared (and ds_read/ds_write)   row-wise vector accesses, as address.fill_offsets
  ldmatrix/stmatrix.xN                  every 8-row block group, as address.block_offsets

and ranked by total wavefronts (reads x read_weight + writes x write_weight), then by wasted
bytes (padding), then by simplicity. Uses the numpy batch engine: no compilation, well under a
second for a 128x64 f16 tile.
"""
import time
from dataclasses import dataclass, field

import numpy as np

from ..errors import LayoutsimError, integer
from .address import Swizzle, Tile, block_offsets_array, fill_offsets_array
from .batch import _numpy_engine, prepare_batch
from ..archs import CDNA
from .model import BANKS, check_tile, memory_limit, resolve_arch
from .ops import parse

# Padding a row by one more pass over the banks moves every row by whole bank cycles: the same
# banks, the same words apart, so the same wavefronts as the smaller pad, with more bytes wasted.
MAX_PAD_BYTES = 4 * BANKS
MAX_WORK = 1_000_000     # warp accesses costed per search (a few seconds): the search space's bound


@dataclass(frozen=True)
class Candidate:
    tile: Tile
    reads: int
    writes: int
    total: int
    ideal: int
    wasted_bytes: int

    @property
    def label(self):
        if self.tile.swizzle is not None:
            return str(self.tile.swizzle)
        pad = self.tile.row_pitch - self.tile.cols
        return f"pad {pad} (pitch {self.tile.row_pitch})" if pad else "plain (no pad, no swizzle)"

    def to_json(self):
        sw = self.tile.swizzle
        return {"layout": self.label, "pad": self.tile.row_pitch - self.tile.cols, "pitch": self.tile.row_pitch,
                "swizzle": [sw.B, sw.M, sw.S] if sw is not None else None, "reads": self.reads,
                "writes": self.writes, "total": self.total, "ideal": self.ideal,
                "wasted_bytes": self.wasted_bytes}


@dataclass
class SearchResult:
    rows: int
    cols: int
    dtype: str
    arch: str
    reads: tuple
    writes: tuple
    accesses: dict                       # op -> accesses per candidate
    candidates: list                     # ranked
    skipped: list = field(default_factory=list)   # (layout, reason)
    seconds: float = 0.0
    weights: tuple = (1, 1)

    @property
    def best(self):
        return self.candidates[0]

    def baseline(self):
        return next(c for c in self.candidates if c.tile.swizzle is None and c.tile.row_pitch == c.tile.cols)

    def to_json(self, top=None):
        cands = self.candidates if top is None else self.candidates[:top]
        return {"tile": {"rows": self.rows, "cols": self.cols, "dtype": self.dtype}, "arch": self.arch,
                "reads": list(self.reads), "writes": list(self.writes),
                "accesses": dict(self.accesses), "weights": {"read": self.weights[0], "write": self.weights[1]},
                "candidates": [c.to_json() for c in cands], "baseline": self.baseline().to_json(),
                "considered": len(self.candidates), "skipped": [{"layout": l, "why": w} for l, w in self.skipped]}

    def format(self, top=10):
        acc = ", ".join(f"{op} x{n}" for op, n in self.accesses.items())
        lines = [f"{self.rows}x{self.cols} {self.dtype} tile on {self.arch}; writes: {', '.join(self.writes) or '-'}; "
                 f"reads: {', '.join(self.reads) or '-'} (warp accesses per layout: {acc})"]
        if self.weights != (1, 1):
            lines.append(f"weights: reads x{self.weights[0]}, writes x{self.weights[1]}")
        lines.append(f"{'rank':>4}  {'layout':<28} {'writes':>7} {'reads':>7} {'total':>7} {'ideal':>7}  {'wasted bytes':>12}")
        shown = self.candidates[:top]
        base = self.baseline()
        for i, c in enumerate(shown, 1):
            lines.append(self._row(i, c))
        if base not in shown:
            lines.append("   ...")
            lines.append(self._row(self.candidates.index(base) + 1, base))
        skipped = f"; {len(self.skipped)} skipped (e.g. {self.skipped[0][0]}: {self.skipped[0][1]})" if self.skipped else ""
        lines.append(f"{len(self.candidates)} layouts ranked in {self.seconds:.2f} s{skipped}")
        return "\n".join(lines)

    @staticmethod
    def _row(i, c):
        return (f"{i:>4}  {c.label:<28} {c.writes:>7} {c.reads:>7} {c.total:>7} {c.ideal:>7}  {c.wasted_bytes:>12}")


def accesses(tile, op):
    """[K, 32] offsets (-1 = lane without address) of op covering the whole tile."""
    spec = parse(op)
    if spec.is_matrix:
        w = 16 // tile.elem_bytes
        bh = 16 if spec.matrices >= 2 else 8
        bw = w * (2 if spec.matrices == 4 else 1)
        if tile.rows % bh or tile.cols % bw:
            raise LayoutsimError(f"{spec.name} moves {bh}x{bw} {tile.dtype} blocks; the {tile.rows}x{tile.cols} "
                                 f"tile is not a whole number of them")
        return block_offsets_array(tile, spec, [(r, c) for r in range(0, tile.rows, bh)
                                                for c in range(0, tile.cols, bw)])
    return fill_offsets_array(tile, spec.width)


def _cost(tile, op, arch, rules):
    offs = accesses(tile, op)
    part = offs >= 0
    spec, arch, pl, off, part = prepare_batch(op, np.where(part, offs, 0), arch, part if not parse(op).is_matrix
                                              else None, rules)
    wf, ideal = _numpy_engine(pl, off, part, both=True)
    return int(wf.sum()), int(ideal.sum()), len(offs)


def candidate_tiles(rows, cols, dtype, align, max_pad_bytes=128, limit=None):
    """Paddings in steps of `align` bytes up to max_pad_bytes (and, given `limit`, while the
    padded tile fits in `limit` bytes), then Swizzle<B,M,S> layouts."""
    probe = Tile(rows, cols, dtype)
    eb = probe.elem_bytes
    step = max(1, align // eb)
    out = []
    for pad in range(0, max_pad_bytes // eb + 1, step):
        if limit is not None and ((rows - 1) * (cols + pad) + cols) * eb > limit:
            break
        if ((cols + pad) * eb) % align == 0:
            out.append(Tile(rows, cols, dtype, pad=pad))
    m0 = max(0, (align // eb).bit_length() - 1)
    total = rows * cols
    allidx = np.arange(total, dtype=np.int64)
    for b in (1, 2, 3):
        for m in range(m0, m0 + 3):
            for s in range(b, 8):
                if m + s + b > 30:
                    continue
                sw = Swizzle(b, m, s)
                mapped = sw(allidx)
                if mapped.max() >= total or np.array_equal(mapped, allidx):
                    continue
                hit = np.zeros(total, bool)
                hit[mapped] = True
                if not hit.all():            # not one-to-one on the tile
                    continue
                out.append(Tile(rows, cols, dtype, swizzle=sw))
    return out


def _check_work(tile, ops, layouts):
    """Refuse a search that would cost more than MAX_WORK warp accesses, before costing any."""
    per_layout = 0
    for op in dict.fromkeys(ops):
        try:
            per_layout += len(accesses(tile, op))
        except LayoutsimError:
            pass                         # reported per layout by the search itself
    if per_layout * layouts > MAX_WORK:
        raise LayoutsimError(f"this search would cost {layouts} layouts x {per_layout} warp accesses = "
                             f"{per_layout * layouts:,}, over the limit of {MAX_WORK:,}: give a smaller tile, "
                             f"fewer ops or a smaller --max-pad-bytes")


def search(rows, cols, dtype="f16", reads=("ldmatrix.x4",), writes=("st.shared.v4.b32",), arch=None,
           read_weight=1, write_weight=1, max_pad_bytes=128, rules=None, tiles=None):
    """Rank padding and swizzle layouts of a rows x cols tile (see the module docstring)."""
    t0 = time.perf_counter()
    reads, writes = tuple(reads or ()), tuple(writes or ())
    if not reads and not writes:
        raise LayoutsimError("give at least one read or write op to cost the layouts with")
    specs = [parse(op) for op in reads + writes]
    for s, op in zip(specs, reads + writes):
        if (op in reads) != (s.direction == "ld") and op not in (set(reads) & set(writes)):
            raise LayoutsimError(f"{s.name} is a {'load' if s.direction == 'ld' else 'store'}; give it as "
                                 f"{'a read' if s.direction == 'ld' else 'a write'}")
    arch = resolve_arch(specs[0], arch)
    for s in specs[1:]:
        resolve_arch(s, arch)
    if arch in CDNA:
        raise LayoutsimError(f"swizzle search covers 32-lane accesses; {arch} LDS accesses are wave64")
    if not 0 <= integer(max_pad_bytes, "--max-pad-bytes") <= MAX_PAD_BYTES:
        raise LayoutsimError(f"--max-pad-bytes {str(max_pad_bytes)[:24]} is out of range; valid: 0..{MAX_PAD_BYTES} "
                             f"(padding by more than one pass over the {BANKS} banks repeats a smaller "
                             f"pad's bank pattern)")
    plain = Tile(rows, cols, dtype)
    check_tile(plain, specs[0].name, arch)
    align = max(s.width for s in specs)
    cands = tiles if tiles is not None else candidate_tiles(rows, cols, dtype, align, max_pad_bytes,
                                                            memory_limit(arch)[0])
    _check_work(plain, reads + writes, len(cands))
    ranked, skipped, counts = [], [], {}
    for tile in cands:
        try:
            r = [_cost(tile, op, arch, rules) for op in reads]
            w = [_cost(tile, op, arch, rules) for op in writes]
        except LayoutsimError as e:
            skipped.append((Candidate(tile, 0, 0, 0, 0, 0).label, str(e)))
            continue
        for op, (_, _, k) in zip(reads + writes, r + w):
            counts[op] = k
        rs, ws = sum(x[0] for x in r), sum(x[0] for x in w)
        ideal = read_weight * sum(x[1] for x in r) + write_weight * sum(x[1] for x in w)
        ranked.append(Candidate(tile, rs, ws, read_weight * rs + write_weight * ws, ideal, tile.wasted_bytes))
    if not ranked:
        raise LayoutsimError(f"no layout of the {rows}x{cols} {dtype} tile works with these ops: "
                             f"{skipped[0][1] if skipped else 'none tried'}")

    def key(c):
        sw = c.tile.swizzle
        simple = (0, 0, 0, 0) if sw is None else (1, sw.B, sw.S, sw.M)
        return (c.total, c.wasted_bytes, simple, c.tile.row_pitch)
    ranked.sort(key=key)
    if not any(c.tile.swizzle is None and c.tile.row_pitch == c.tile.cols for c in ranked):
        r = [_cost(plain, op, arch, rules) for op in reads]
        w = [_cost(plain, op, arch, rules) for op in writes]
        rs, ws = sum(x[0] for x in r), sum(x[0] for x in w)
        ideal = read_weight * sum(x[1] for x in r) + write_weight * sum(x[1] for x in w)
        ranked.append(Candidate(plain, rs, ws, read_weight * rs + write_weight * ws, ideal, 0))
    return SearchResult(rows, cols, dtype, arch, reads, writes, counts, ranked, skipped,
                        time.perf_counter() - t0, (read_weight, write_weight))
