"""Where wgmma finds an operand in shared memory: a model of the matrix descriptor.

PTX ISA 9.0, 9.7.15.5.1 'Matrix Descriptor Format' (wgmma): a 64-bit value with
  bits  0-13  start address >> 4
  bits 16-29  leading dimension byte offset (LBO) >> 4
  bits 32-45  stride dimension byte offset (SBO) >> 4
  bits 49-51  matrix base offset (0 for the canonical layouts)
  bits 62-63  swizzle mode (0 none, 1 128B, 2 64B, 3 32B)

Only the no-swizzle, K-major canonical layout is modelled. The operand is tiled into *core
matrices* of 8 rows (of M for A, of N for B) by 16 bytes (16/e elements of K, e = element
bytes); each core matrix is 128 contiguous bytes, row after row. LBO is the byte distance
between core matrices adjacent in K, SBO between core matrices adjacent in M/N:

    addr(mn, k) = start + (k // (16/e)) * LBO + (mn // 8) * SBO + (mn % 8) * 16 + (k % (16/e)) * e

For B (K x N) "K-major" means each column n of B is contiguous in K, i.e. B stored transposed
(the `.col` B of mma.sync). Swizzled modes, MN-major (transposed) operands and the base offset
are not modelled: asking for them is an error, not a silent wrong answer.
"""
from dataclasses import dataclass

import numpy as np

from ..errors import LayoutsimError

_FIELD = (1 << 14) - 1
SWIZZLE_NAMES = {0: "none", 1: "128B", 2: "64B", 3: "32B"}


@dataclass(frozen=True)
class SmemDesc:
    start: int          # byte address of the first core matrix in shared memory
    lbo: int            # bytes between core matrices adjacent in K
    sbo: int            # bytes between core matrices adjacent in M (A) or N (B)
    swizzle: int = 0    # only 0 (no swizzle) is modelled
    base_offset: int = 0

    def __post_init__(self):
        for name in ("start", "lbo", "sbo"):
            v = getattr(self, name)
            if not isinstance(v, (int, np.integer)) or v < 0 or v % 16 or (v >> 4) > _FIELD:
                raise LayoutsimError(f"wgmma descriptor {name}={v!r}: must be a multiple of 16 in "
                                     f"0..{_FIELD << 4} (the descriptor keeps bits 4-17 only)")
        if self.swizzle not in SWIZZLE_NAMES:
            raise LayoutsimError(f"wgmma descriptor swizzle={self.swizzle!r}: valid 0 (none), 1 (128B), "
                                 f"2 (64B), 3 (32B)")
        if self.swizzle:
            raise LayoutsimError(f"wgmma descriptor swizzle {SWIZZLE_NAMES[self.swizzle]}: the simulator "
                                 f"models only the no-swizzle K-major layout (swizzle=0)")
        if self.base_offset:
            raise LayoutsimError(f"wgmma descriptor base_offset={self.base_offset}: only 0 (canonical "
                                 f"layouts) is modelled")

    # ---- the 64-bit value ------------------------------------------------------------
    def encode(self):
        return ((self.start >> 4) | ((self.lbo >> 4) << 16) | ((self.sbo >> 4) << 32)
                | (self.base_offset << 49) | (self.swizzle << 62))

    @classmethod
    def decode(cls, value):
        v = int(value)
        if v < 0 or v >> 64:
            raise LayoutsimError(f"wgmma descriptor {value!r} is not a 64-bit value")
        return cls(start=(v & _FIELD) << 4, lbo=((v >> 16) & _FIELD) << 4,
                   sbo=((v >> 32) & _FIELD) << 4, base_offset=(v >> 49) & 7, swizzle=(v >> 62) & 3)

    @classmethod
    def of(cls, value):
        """A SmemDesc from a SmemDesc or a raw 64-bit descriptor."""
        if isinstance(value, cls):
            return value
        if isinstance(value, (int, np.integer)):
            return cls.decode(value)
        raise LayoutsimError(f"wgmma shared-memory operand {value!r}: give a SmemDesc or a 64-bit "
                             f"descriptor value")

    @classmethod
    def k_major(cls, start, mn, k, elem_bits, pad_bytes=0):
        """The descriptor of a dense K-major tile: core matrices along K first, then along M/N.

        The tile is laid out as (mn // 8) blocks of (k * e / 16) core matrices, each 128 bytes,
        plus `pad_bytes` after each row of core matrices.
        """
        e = elem_bits // 8
        per_k = (k * e) // 16
        return cls(start=start, lbo=128, sbo=128 * per_k + pad_bytes)

    # ---- addresses -------------------------------------------------------------------
    def addresses(self, mn, k, elem_bits):
        """Byte address of element (mn, k) of an [mn, k] operand, as an int64 array [mn, k]."""
        e = elem_bits // 8
        per = 16 // e
        r = np.arange(mn, dtype=np.int64)[:, None]
        c = np.arange(k, dtype=np.int64)[None, :]
        return self.start + (c // per) * self.lbo + (r // 8) * self.sbo + (r % 8) * 16 + (c % per) * e

    def __str__(self):
        return (f"SmemDesc(start={self.start:#x}, lbo={self.lbo}, sbo={self.sbo}, "
                f"swizzle={SWIZZLE_NAMES[self.swizzle]}) = {self.encode():#018x}")
