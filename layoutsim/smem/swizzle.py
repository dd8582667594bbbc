"""The four shared-memory swizzle modes of Hopper wgmma descriptors and TMA tensor maps.

One table, one primitive. A mode of span S bytes (32, 64 or 128; "none" is 16) XORs the
16-byte-chunk bits [4, 4+B) of a shared-window byte address with the bits [7, 7+B) above them,
B = log2(S / 16): that is CuTe's `Swizzle<B,4,3>` applied to byte addresses
(cute/atom/mma_traits_sm90_gmma.hpp: `Swizzle<3,4,3> o smem_ptr` for B128), and the same XOR
is `layoutsim.address.Swizzle`, used here rather than restated. The pattern repeats every
8 rows of S bytes (1024 / 512 / 256 bytes: PTX ISA 9.7.15.5.1.2.2, the "repeating pattern"
table). On e-byte elements the same map is Swizzle<B, 4 - log2(e), 3> of the element offset.

Encodings differ by interface: the wgmma descriptor's bits 62-63 hold 0 none, 1 128B, 2 64B,
3 32B (PTX ISA 9.7.15.5.1.2.2); CUtensorMapSwizzle holds 0 none, 1 32B, 2 64B, 3 128B (cuda.h).
"""
from dataclasses import dataclass

import numpy as np

from ..address import Swizzle
from ..errors import LayoutsimError, suggest


@dataclass(frozen=True)
class Mode:
    name: str            # "none", "32B", "64B", "128B"
    desc_code: int       # wgmma descriptor bits 62-63
    tma_code: int        # CUtensorMapSwizzle
    span: int            # bytes of one swizzled row (16 for none: one chunk)

    @property
    def bits(self):
        """B: how many chunk-index bits the XOR changes (0 for none)."""
        return (self.span // 16).bit_length() - 1

    @property
    def chunks(self):
        """16-byte chunks in one row of the pattern (W in CuTe's canonical layouts)."""
        return self.span // 16

    @property
    def repeat(self):
        """Bytes after which the pattern repeats: 8 rows of `span` (1024/512/256; 128 for none)."""
        return 8 * self.span

    @property
    def cute(self):
        """The mode as CuTe Swizzle<B,4,3> on byte addresses."""
        return Swizzle(self.bits, 4, 3)

    def cute_elements(self, elem_bytes):
        """The mode as CuTe Swizzle<B,M,3> on element offsets of elem_bytes-byte elements."""
        m = 4 - (int(elem_bytes).bit_length() - 1)
        if elem_bytes not in (1, 2, 4, 8, 16):
            raise LayoutsimError(f"elements of {elem_bytes} bytes do not tile a 16-byte chunk")
        return Swizzle(self.bits, m, 3)

    def apply(self, addr, anchor=0):
        """Swizzled byte addresses: the pattern anchored at `anchor` (arrays broadcast), i.e.
        Swizzle<B,4,3>(addr - anchor) + anchor; anchor 0 is the absolute pattern."""
        addr = np.asarray(addr, dtype=np.int64)
        if self.bits == 0:
            return addr
        anchor = np.asarray(anchor, dtype=np.int64)
        return self.cute(addr - anchor) + anchor

    def __str__(self):
        return self.name


NONE = Mode("none", 0, 0, 16)
MODES = {m.name: m for m in (NONE, Mode("32B", 3, 1, 32), Mode("64B", 2, 2, 64), Mode("128B", 1, 3, 128))}
BY_DESC_CODE = {m.desc_code: m for m in MODES.values()}
BY_TMA_CODE = {m.tma_code: m for m in MODES.values()}


def mode(value):
    """A Mode from a Mode or a name: none, 32B/64B/128B (also 32, sw64, SWIZZLE_128B, B128)."""
    if isinstance(value, Mode):
        return value
    if value is None:
        return NONE
    if isinstance(value, (bool, int, np.integer)):
        raise LayoutsimError(f"swizzle {value!r}: give a name (none, 32B, 64B, 128B); numeric codes "
                             f"differ between descriptors (1 = 128B) and tensor maps (1 = 32B)")
    t = str(value).strip().upper().replace("SWIZZLE_", "").replace("SWIZZLE", "")
    t = t.removeprefix("SW").removeprefix("B") if t not in ("NONE",) else t
    t = t.removesuffix("B")
    names = {"NONE": "none", "0": "none", "INTERLEAVE": "none", "32": "32B", "64": "64B", "128": "128B"}
    if t in names:
        return MODES[names[t]]
    raise LayoutsimError(f"unknown swizzle mode {value!r}{suggest(value, list(MODES))}; "
                         f"valid: {', '.join(MODES)}")


def for_cute(swizzle, elem_bytes=1):
    """The mode whose pattern is CuTe `swizzle` on elem_bytes-byte element offsets, or None."""
    for m in MODES.values():
        if m.bits and m.cute_elements(elem_bytes) == swizzle:
            return m
    return None


def cxx_index(tile, row="row", col="col"):
    """A C++ expression for the element index where (row, col) of `tile` (a layoutsim.address Tile)
    lives, to paste into a kernel: the tile's pitch, then its swizzle (CuTe Swizzle<B,M,S>
    written out as shifts and masks, on element or byte offsets), then its base."""
    from ..address import Swizzle as Cute
    e = tile.elem_bytes
    lin = f"{row} * {tile.row_pitch} + {col}" if tile.row_pitch != 1 else f"{row} + {col}"
    sw = tile.swizzle
    if sw is None:
        expr = lin
    else:
        x = f"({lin})" if tile.unit == "elem" else f"(({lin}) * {e})"
        if isinstance(sw, Cute):
            mask = ((1 << sw.B) - 1) << sw.M
            moved = f"({x} >> {sw.S})" if sw.S >= 0 else f"({x} << {-sw.S})"
            expr = f"{x} ^ ({moved} & {mask:#x})"
        else:
            expr = f"{x} ^ " + " ^ ".join(f"((({x} >> {s}) & 1) << {d})" for s, d in sw.pairs)
        if tile.unit == "byte":
            expr = f"({expr}) / {e}"
    if tile.base:
        expr = f"{tile.base // e} + ({expr})" if tile.base % e == 0 else f"({tile.base} + ({expr}) * {e}) / {e}"
    return expr
