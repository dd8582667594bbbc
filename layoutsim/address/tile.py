"""Tiles in shared memory (element (row, col) -> byte offset) and the accesses that fill them.

A tile is row-major with a pitch (elements per row in memory) or a padding (pitch = cols + pad),
optionally swizzled (swizzle.py) on element or byte offsets, at a base offset. `fill_offsets`
gives the row-wise vector loads or stores covering the tile (e.g. the 128-bit stores that fill
it from global memory); the ldmatrix/stmatrix addresses over a tile are in blocks.py.
"""
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from .. import archs
from ..errors import LayoutsimError, integer, suggest
from ..formats import FORMATS
from .expr import LANES, MAX_ABS, int64_values
from .swizzle import Swizzle, XorSwizzle


def largest_shared_memory():
    """The most shared memory (LDS) any known arch gives one block, in bytes: no tile is larger."""
    return max(archs.shared_memory_limit(a)[0] for a in archs.ALL)


@dataclass(frozen=True)
class Tile:
    """A rows x cols tile of `dtype` in shared memory, row-major.

    pitch   elements from one row to the next (default cols + pad)
    pad     elements of padding after each row (ignored when pitch is given)
    base    byte offset of element (0, 0) before swizzling
    swizzle Swizzle / XorSwizzle applied to the element offset (unit="elem") or to the byte
            offset (unit="byte")
    """
    rows: int
    cols: int
    dtype: str = "f16"
    pad: int = 0
    pitch: Optional[int] = None
    base: int = 0
    swizzle: object = None
    unit: str = "elem"
    elem_bytes: int = field(default=0, init=False)

    def __post_init__(self):
        big = largest_shared_memory()
        for name, lo in (("rows", 1), ("cols", 1), ("pad", 0), ("base", 0)):
            object.__setattr__(self, name, integer(getattr(self, name), f"tile {name}", lo, big))
        if self.pitch is not None:
            object.__setattr__(self, "pitch", integer(self.pitch, "tile pitch", 1, big))
        if not isinstance(self.dtype, str) or self.dtype not in FORMATS:
            raise LayoutsimError(f"unknown dtype {self.dtype!r}{suggest(self.dtype, list(FORMATS))}; "
                                 f"valid: {', '.join(FORMATS)}")
        bits = FORMATS[self.dtype].bits
        if bits % 8:
            raise LayoutsimError(f"dtype {self.dtype} has {bits}-bit elements; tiles need whole bytes")
        object.__setattr__(self, "elem_bytes", bits // 8)
        if self.pitch is not None and self.pitch < self.cols:
            raise LayoutsimError(f"pitch {self.pitch} is smaller than the {self.cols} columns")
        if self.unit not in ("elem", "byte"):
            raise LayoutsimError(f"swizzle unit {self.unit!r}; valid: elem, byte")
        if self.swizzle is not None and not isinstance(self.swizzle, (Swizzle, XorSwizzle)):
            raise LayoutsimError(f"swizzle {self.swizzle!r}: give a Swizzle, an XorSwizzle or None "
                                 f"(parse_swizzle reads '3,3,3' and 'xor:7->4')")
        if self.extent > big:
            raise LayoutsimError(f"the tile ({self.describe()}) spans {self.extent} bytes; no GPU's "
                                 f"shared memory holds more than {big} bytes per block")

    @property
    def row_pitch(self):
        return self.pitch if self.pitch is not None else self.cols + self.pad

    @property
    def extent(self):
        """Bytes from offset 0 to the end of the last element, before swizzling (base included)."""
        return self.base + ((self.rows - 1) * self.row_pitch + self.cols) * self.elem_bytes

    @property
    def bytes(self):
        """Bytes the tile occupies (rows x pitch)."""
        return self.rows * self.row_pitch * self.elem_bytes

    @property
    def wasted_bytes(self):
        return self.rows * (self.row_pitch - self.cols) * self.elem_bytes

    def describe(self):
        parts = [f"{self.rows}x{self.cols} {self.dtype}"]
        if self.row_pitch != self.cols:
            parts.append(f"pitch {self.row_pitch} ({self.row_pitch - self.cols} pad)")
        if self.swizzle is not None:
            parts.append(f"{self.swizzle}" + (" on bytes" if self.unit == "byte" else ""))
        if self.base:
            parts.append(f"base {self.base}")
        return ", ".join(parts)

    def offset(self, row, col):
        """Byte offsets of elements (row, col) (arrays broadcast); checks the tile bounds."""
        row = int64_values(row, "row", MAX_ABS)
        col = int64_values(col, "column", MAX_ABS)
        if np.any((row < 0) | (row >= self.rows)) or np.any((col < 0) | (col >= self.cols)):
            r = int(np.broadcast_to(row, np.broadcast(row, col).shape).max())
            c = int(np.broadcast_to(col, np.broadcast(row, col).shape).max())
            raise LayoutsimError(f"element ({r}, {c}) is outside the {self.rows}x{self.cols} tile")
        e = row * self.row_pitch + col
        if self.swizzle is None:
            return self.base + e * self.elem_bytes
        if self.unit == "elem":
            return self.base + self.swizzle(e) * self.elem_bytes
        return self.base + self.swizzle(e * self.elem_bytes)

    def vector_offsets(self, row, col, nbytes, what="access"):
        """Start offsets of nbytes-wide accesses at (row, col); checks they stay contiguous."""
        n = nbytes // self.elem_bytes
        if n * self.elem_bytes != nbytes or n < 1:
            raise LayoutsimError(f"a {nbytes}-byte {what} does not hold whole {self.dtype} elements")
        row = int64_values(row, "row", MAX_ABS)
        col = int64_values(col, "column", MAX_ABS)
        if np.any(col + n > self.cols):
            raise LayoutsimError(f"a {nbytes}-byte {what} at column {int(np.max(col))} runs past the "
                                 f"{self.cols} columns of the tile")
        start = self.offset(row, col)
        for k in range(1, n):
            nxt = self.offset(row, col + k)
            bad = nxt != start + k * self.elem_bytes
            if np.any(bad):
                i = np.flatnonzero(np.broadcast_to(bad, bad.shape).reshape(-1))[0]
                r = int(np.broadcast_to(row, bad.shape).reshape(-1)[i])
                c = int(np.broadcast_to(col, bad.shape).reshape(-1)[i])
                raise LayoutsimError(f"the layout ({self.describe()}) splits the {nbytes}-byte {what} at "
                                     f"element ({r}, {c}): element ({r}, {c + k}) is not next to it in "
                                     f"memory (a swizzle must leave the low bits of a vector alone)")
        return start



def offset_lists(offsets):
    """int64[K, 32] with -1 for 'no address' -> K lists of 32 offsets with None."""
    return [[int(o) if o >= 0 else None for o in row] for row in offsets.tolist()]




def fill_offsets(tile, width=16, first=0, count=None, lanes=LANES):
    """Row-wise accesses of `width` bytes per lane covering the tile in order (thread t takes
    elements t*n .. t*n+n-1 of the row-major logical tile, n = width / element bytes), one warp
    of `lanes` threads per access (32; a CDNA wave64 LDS access: 64, layoutsim.banks.model.lanes_of).

    Returns a list of accesses, each `lanes` offsets (None for lanes past the end)."""
    return offset_lists(fill_offsets_array(tile, width, first, count, lanes))


def fill_offsets_array(tile, width=16, first=0, count=None, lanes=LANES):
    """fill_offsets as int64[K, lanes], -1 for lanes past the end."""
    n = width // tile.elem_bytes
    if n < 1 or n * tile.elem_bytes != width:
        raise LayoutsimError(f"{width}-byte accesses do not hold whole {tile.dtype} elements")
    if tile.cols % n:
        raise LayoutsimError(f"{width}-byte accesses ({n} {tile.dtype}) do not divide a row of {tile.cols}")
    vectors = tile.rows * tile.cols // n
    total = -(-vectors // lanes)
    count = total - first if count is None else count
    if first < 0 or count < 0 or first + count > total:
        raise LayoutsimError(f"the tile takes {total} warp accesses of {width} bytes (0..{total - 1}); "
                             f"asked for {first}..{first + count - 1}")
    t = (first * lanes + np.arange(count * lanes)).reshape(count, lanes)
    valid = t < vectors
    e = np.where(valid, t, 0) * n
    offs = tile.vector_offsets(e // tile.cols, e % tile.cols, width)
    return np.where(valid, offs, -1)


def fill_count(tile, width=16, lanes=LANES):
    n = width // tile.elem_bytes
    return -(-(tile.rows * tile.cols // max(n, 1)) // lanes)
