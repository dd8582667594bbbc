"""TMA (cp.async.bulk.tensor, tiled mode, no interleave): where each element of a box lands in
shared memory, and whether a TMA-filled tile is the tile a wgmma descriptor reads.

A tensor map (cuTensorMapEncodeTiled, cuda.h) copies a box of box[0] x box[1] (x box[2] ...)
elements, box[0] innermost. The model (`MEASURED`, confirmed on an H200: `CONFIRMED`):
  - without swizzle the box is written densely, row after row (box[0] * e bytes a row, e =
    element bytes), from the destination address;
  - with a swizzle mode every box row (every box[0] run of elements) takes one row of the
    swizzle pattern, span bytes (32/64/128), whatever box[0] * e is: a row narrower than the
    span leaves the rest of its span-row without box data (the pitch is the span, not the row),
    and then the mode XORs the shared-window address bits exactly as a wgmma descriptor does
    (swizzle.py), i.e. the pattern is a function of the address, anchored at 1024/512/256-byte
    boundaries, not at the destination.
  So a swizzled box is always the descriptor's canonical atom (8 rows x span bytes) repeated,
  which is what lets wgmma read a narrow TMA box with the mode's dense descriptor.
cuda.h requires box[0] * e to be a multiple of 16 and, when swizzled, at most the span; every
box dimension is 1..256. The H200 adds a rule on where the box starts: the innermost coordinate
times e must be a multiple of 16 bytes (`check_coords`), or the copy faults.

Readings the measurement (gpu_check.descriptors) told apart, as `TmaReading`:
  pitch   "dense" (rows of box[0]*e bytes) | "span" (each row padded to the swizzle span; MLIR's
          nvgpu verifier insists box[0]*e equals the span, the driver only that it is at most it)
  anchor  "absolute" (shared-window address bits) | "start" (the pattern starts at the destination)
The H200 corpus (tests/data/descriptors/tma_sm_90.npz: 219 copies of 182 boxes, every mode,
1-, 2- and 4-byte elements, 2-D and 3-D, rows narrower than the span, destinations 0, 128, 384,
640 and 1280 bytes past a 1024-byte boundary, 37 boxes also through a tensor map in global
memory; 373,280 element slots) leaves exactly pitch=span anchor=absolute. pitch=dense, the
reading this module used before, leaves 90 copies unexplained: exactly the swizzled boxes whose
row is narrower than the span. (The gaps read back as the zeros the kernel wrote before the
copy, so whether TMA leaves them alone or writes zeros there is not known.)
"""
from dataclasses import dataclass

import numpy as np

from ..cite import corpus
from ..errors import LayoutsimError, choose
from .descriptor import Choices, operand_addresses, operand_geometry, reading_status, shared_limit
from .swizzle import mode

BOX_MAX = 256
MAX_RANK = 5
DST_ALIGN = 128        # the alignment every TMA user keeps (CUTLASS aligns TMA buffers to 128 B);
#                        the H200 corpus has destinations 128, 384, 640 and 1280 bytes past a
#                        1024-byte boundary, all as the model says; smaller alignments were not measured
# The innermost box coordinate must start on a 16-byte boundary of the global row: on the H200
# (driver 580.159.04, CUDA 13.0, 2026-12-01) boxes whose coords[0] * e was 3, 4 or 8 bytes
# (1-, 2- and 4-byte elements, none and 128B) each faulted with "an illegal instruction was
# encountered", while the same box at a 16-byte offset landed as the model says (and so did the
# 182 boxes of the corpus, all on 16 bytes); the second run had lost all six of its boxes at
# offsets 3..15 the same way. Triton's Gluon TMA tutorial (python/tutorials/gluon/04-tma.py)
# states it: "The innermost coordinate must be 16-byte aligned". The global address itself is
# 16-byte aligned and every stride a multiple of 16 (cuTensorMapEncodeTiled), so this is the
# same as the box's first global byte being 16-byte aligned.
COORD_ALIGN = 16


@dataclass(frozen=True)
class TmaReading(Choices):
    pitch: str = "span"
    anchor: str = "absolute"

    def __post_init__(self):
        choose("TMA pitch reading", self.pitch, ("dense", "span"))
        choose("TMA anchor reading", self.anchor, ("absolute", "start"))

    def label(self):
        return f"pitch={self.pitch} anchor={self.anchor}"


MEASURED = TmaReading()
# The corpus and the GPU, driver and date MEASURED was confirmed on.
CONFIRMED = ("NVIDIA H200, driver 580.159.04, CUDA 13.0, 2026-12-01 "
             f"({corpus('tma_sm_90.npz', 'Shared-memory operands')})")


def status():
    """One line: the TMA reading the model uses and what stands behind it."""
    return "TMA " + reading_status(MEASURED, CONFIRMED)


def candidate_readings():
    return [TmaReading(p, a) for p in ("dense", "span") for a in ("absolute", "start")]


@dataclass(frozen=True)
class TensorMap:
    """The shared-memory side of a tiled tensor map: box (innermost first), element bytes, swizzle."""
    box: tuple
    elem_bytes: int
    swizzle: str = "none"

    def __post_init__(self):
        box = tuple(int(b) for b in self.box)
        if not 1 <= len(box) <= MAX_RANK:
            raise LayoutsimError(f"tensor map box {box}: rank must be 1..{MAX_RANK}")
        bad = [b for b in box if not 1 <= b <= BOX_MAX]
        if bad:
            raise LayoutsimError(f"tensor map box {box}: every dimension must be 1..{BOX_MAX} "
                                 f"(cuTensorMapEncodeTiled boxDim), not {bad[0]}")
        object.__setattr__(self, "box", box)
        e = self.elem_bytes
        if e not in (1, 2, 4, 8, 16):
            raise LayoutsimError(f"tensor map element size {e!r}: valid 1, 2, 4, 8, 16 bytes")
        m = mode(self.swizzle)
        object.__setattr__(self, "swizzle", m.name)
        inner = box[0] * e
        if inner % 16:
            raise LayoutsimError(f"tensor map box[0]={box[0]} x {e} B = {inner} B: the inner box dimension "
                                 f"must be a multiple of 16 bytes (cuTensorMapEncodeTiled)")
        if m.bits and inner > m.span:
            raise LayoutsimError(f"tensor map box[0]={box[0]} x {e} B = {inner} B exceeds the {m.name} swizzle "
                                 f"span: with swizzle {m.name} the inner box dimension may be at most "
                                 f"{m.span} bytes (cuTensorMapEncodeTiled)")

    @property
    def mode(self):
        return mode(self.swizzle)

    def bytes(self, reading=MEASURED):
        """Shared-memory bytes the box spans from its destination (with the gaps of narrow
        swizzled rows)."""
        return int(np.prod(self.box[1:], dtype=np.int64)) * _pitch(self, reading)


def _pitch(tmap, reading):
    inner = tmap.box[0] * tmap.elem_bytes
    return tmap.mode.span if (reading.pitch == "span" and tmap.mode.bits) else inner


def box_addresses(tmap, dst, reading=MEASURED, smem_bytes=None):
    """Shared-window byte address where each box element lands: int64 array of shape box[::-1]
    (outermost first, so [i2, i1, i0] for a 3-D box). Raises LayoutsimError (box_fault's line)
    when a byte would land outside the first `smem_bytes` of the shared window (default: the
    sm_90 per-block maximum; the PTX executor passes its CTA's shared-memory size)."""
    addr = _landing(tmap, dst, reading)
    why = _outside(tmap, dst, addr, smem_bytes)
    if why:
        raise LayoutsimError(why)
    return addr


def box_fault(tmap, dst, smem_bytes=None, reading=MEASURED):
    """One line saying why a copy of `tmap`'s box to shared address `dst` would fault (a byte
    outside the first `smem_bytes` of the shared window, default the sm_90 per-block maximum),
    or None. A misaligned or negative `dst` raises (it is bad input, not a fault)."""
    return _outside(tmap, dst, _landing(tmap, dst, reading), smem_bytes)


def _outside(tmap, dst, addr, smem_bytes):
    limit, what = shared_limit(smem_bytes)
    hi = int(addr.max()) + tmap.elem_bytes
    if hi <= limit:
        return None
    dims = "x".join(map(str, tmap.box))
    return (f"TMA destination {int(dst):#x}: the {dims} box of {tmap.elem_bytes}-byte elements ({tmap.swizzle} "
            f"swizzle) lands on bytes up to {hi - 1:#x}, outside shared memory ({what}: 0..{limit - 1:#x}): "
            f"the copy would fault")


def _landing(tmap, dst, reading):
    if isinstance(dst, bool) or not isinstance(dst, (int, np.integer)) or dst < 0:
        raise LayoutsimError(f"TMA destination {dst!r}: a shared-window byte address")
    if dst % DST_ALIGN:
        raise LayoutsimError(f"TMA destination {int(dst):#x} is not {DST_ALIGN}-byte aligned")
    e = tmap.elem_bytes
    pitch = _pitch(tmap, reading)
    shape = tmap.box[::-1]
    idx = np.indices(shape, dtype=np.int64)            # [rank, ...] outermost first
    row = np.ravel_multi_index(tuple(idx[:-1]), shape[:-1]) if len(shape) > 1 else 0
    lin = int(dst) + row * pitch + idx[-1] * e
    anchor = int(dst) if reading.anchor == "start" else 0
    return tmap.mode.apply(lin, anchor)


def box_coords(tmap, coords):
    """Global coordinates of every box element when the copy starts at `coords` (innermost first,
    as cp.async.bulk.tensor takes them): int64 array [rank, *box[::-1]], outermost coordinate
    first, so out[::-1][i] is coordinate i; element [.., i1, i0] of box_addresses comes from the
    global element at (coords[0] + i0, coords[1] + i1, ...). Elements outside the tensor are
    filled by the hardware (cuTensorMapEncodeTiled's oobFill); that side is not modelled here.
    Geometry only: whether the copy may start there at all is check_coords'."""
    coords = tuple(coords)
    if len(coords) != len(tmap.box):
        raise LayoutsimError(coords_problem(tmap, coords))
    idx = np.indices(tmap.box[::-1], dtype=np.int64)
    return idx + np.array([int(c) for c in coords[::-1]], np.int64).reshape(-1, *([1] * len(tmap.box)))


def coords_problem(tmap, coords):
    """Why a copy of `tmap`'s box starting at global `coords` (innermost first) would fault, in
    one line naming the coordinate and the rule, or None when it is fine."""
    coords = tuple(coords)
    if len(coords) != len(tmap.box):
        return (f"TMA coordinates {coords}: a {len(tmap.box)}-D box takes {len(tmap.box)} coordinates, "
                f"innermost first")
    bad = [c for c in coords if isinstance(c, bool) or not isinstance(c, (int, np.integer))
           or not -2**31 <= c < 2**31]
    if bad:
        return f"TMA coordinate {bad[0]!r}: coordinates are 32-bit signed integers"
    off = int(coords[0]) * tmap.elem_bytes
    if off % COORD_ALIGN:
        return (f"TMA coordinate c0={coords[0]} x {tmap.elem_bytes} B = {off} bytes: the innermost "
                f"coordinate must start on a multiple of {COORD_ALIGN} bytes (the H200 faults with an "
                f"illegal instruction otherwise)")
    return None


def check_coords(tmap, coords):
    """Raise LayoutsimError (coords_problem's line) unless the box can start at `coords`."""
    why = coords_problem(tmap, coords)
    if why:
        raise LayoutsimError(why)


def operand_box_coords(mn, k, major, box, at=(0, 0)):
    """Box coordinates (innermost first) of operand element (mn, k) when a TMA box holds the tile:
    the inner box dimension runs along K (K-major) or M/N (MN-major); a 3-D box splits that
    inner extent: i0 = inner % box[0], i1 = outer, i2 = inner // box[0]. `at` = (inner, outer)
    of the operand's (0, 0) inside the box."""
    inner, outer = (k, mn) if major == "K" else (mn, k)
    inner = inner + at[0]
    outer = outer + at[1]
    if len(box) == 2:
        return inner, outer
    if len(box) == 3:
        return inner % box[0], outer, inner // box[0]
    raise LayoutsimError(f"a {len(box)}-D box: the operand check handles 2-D and 3-D boxes")


def consistency(tmap, dst, instr, operand, desc, trans=False, at=(0, 0), smem_bytes=None):
    """Compare a TMA-filled tile with a wgmma descriptor: [(mn, k, descriptor address, TMA
    address or None if outside the box)] for every operand element where they disagree
    (box_addresses' fault when the box lands outside `smem_bytes` of shared memory)."""
    _, op, mn_n, k_n, w, major = operand_geometry(instr, operand, trans)
    if w // 8 != tmap.elem_bytes:
        raise LayoutsimError(f"the operand has {w // 8}-byte elements, the tensor map {tmap.elem_bytes}-byte ones")
    da = operand_addresses(instr, operand, desc, trans)
    da = da if op == "A" else da.T                     # [mn, k]
    ta = box_addresses(tmap, dst, smem_bytes=smem_bytes)
    out = []
    mn, k = np.meshgrid(np.arange(mn_n), np.arange(k_n), indexing="ij")
    coords = operand_box_coords(mn, k, major, tmap.box, at)
    inside = np.ones(mn.shape, bool)
    for c, b in zip(coords, tmap.box):
        inside &= (c >= 0) & (c < b)
    got = np.full(mn.shape, -1, np.int64)
    sel = tuple(np.where(inside, c, 0) for c in coords[::-1])
    got[inside] = ta[sel][inside]
    bad = np.argwhere(got != da)
    for r, c in bad:
        out.append((int(r), int(c), int(da[r, c]), int(got[r, c]) if inside[r, c] else None))
    return out


def tile_mode(tile):
    """The TMA / wgmma swizzle mode whose box lays out `tile` (a layoutsim.banks Tile) exactly the
    same way (box = cols x rows at the tile's base), or None."""
    from .swizzle import MODES
    rows = min(tile.rows, BOX_MAX)
    r, c = np.meshgrid(np.arange(rows), np.arange(tile.cols), indexing="ij")
    want = tile.offset(r, c)
    for m in MODES.values():
        try:
            got = box_addresses(TensorMap((tile.cols, rows), tile.elem_bytes, m.name), tile.base)
        except LayoutsimError:
            continue
        if np.array_equal(got, want):
            return m
    return None
