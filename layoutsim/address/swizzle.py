"""Swizzles: maps of an offset's bits that tile layouts apply to element or byte offsets.

  * CuTe `Swizzle<B,M,S>`: XOR bits [M+S, M+S+B) of the offset into bits [M, M+B)
    (cute/swizzle.hpp; S may be negative, |S| >= B);
  * a general XOR swizzle: a list of (source bit, destination bit) pairs.
`parse_swizzle` reads the spellings the commands take ('3,3,3', 'Swizzle<3,3,3>', 'xor:7->4').
The TMA / wgmma swizzle modes (128B, 64B, 32B) are CuTe swizzles too: layoutsim/smem/swizzle.py.
"""
from dataclasses import dataclass

import numpy as np

from ..errors import LayoutsimError, integer
from ..inputs import parse_int
from .expr import short_repr


@dataclass(frozen=True)
class Swizzle:
    """CuTe Swizzle<B,M,S>: offset ^ shiftr(offset & (((1<<B)-1) << (M + max(0,S))), S)."""
    B: int
    M: int
    S: int

    def __post_init__(self):
        for name in ("B", "M", "S"):
            object.__setattr__(self, name, integer(getattr(self, name), f"Swizzle {name}"))
        if self.B < 0 or self.M < 0 or abs(self.S) < self.B or self.B > 16 or self.M > 30 or abs(self.S) > 30:
            raise LayoutsimError(f"Swizzle<{self.B},{self.M},{self.S}> is not valid: CuTe needs B >= 0, "
                                 f"M >= 0 and |S| >= B")

    def __call__(self, x):
        x = np.asarray(x, dtype=np.int64)
        if self.B == 0:
            return x
        yyy = ((1 << self.B) - 1) << (self.M + max(0, self.S))
        t = x & yyy
        return x ^ (t >> self.S if self.S >= 0 else t << -self.S)

    def pairs(self):
        """The same map as (source bit, destination bit) pairs."""
        return tuple((self.M + max(0, self.S) + i, self.M + max(0, self.S) + i - self.S) for i in range(self.B))

    def __str__(self):
        return f"Swizzle<{self.B},{self.M},{self.S}>"


@dataclass(frozen=True)
class XorSwizzle:
    """General XOR swizzle: for each (src, dst), bit dst ^= bit src of the original offset."""
    pairs: tuple

    def __post_init__(self):
        try:
            ps = tuple((integer(s, "XOR swizzle bit", 0, 40), integer(d, "XOR swizzle bit", 0, 40))
                       for s, d in self.pairs)
        except (TypeError, ValueError) as e:
            if isinstance(e, LayoutsimError):
                raise
            raise LayoutsimError(f"XOR swizzle pairs: give (source bit, destination bit) pairs, "
                                 f"not {short_repr(self.pairs)}") from None
        object.__setattr__(self, "pairs", ps)
        srcs, dsts = {s for s, _ in ps}, {d for _, d in ps}
        both = srcs & dsts
        if both:
            raise LayoutsimError(f"XOR swizzle {self}: bit {min(both)} is both read and written, so the "
                                 f"map may not be one-to-one; use bits that are only read or only written")

    def __call__(self, x):
        x = np.asarray(x, dtype=np.int64)
        out = x.copy()
        for s, d in self.pairs:
            out ^= ((x >> s) & 1) << d
        return out

    def __str__(self):
        return "xor(" + ",".join(f"{s}->{d}" for s, d in self.pairs) + ")"


def parse_swizzle(text):
    """'3,3,3' or 'Swizzle<3,3,3>' -> Swizzle; 'xor:7->4,8->5' -> XorSwizzle; None/'' -> None."""
    if text is None or str(text).strip().lower() in ("", "none"):
        return None
    t = str(text).strip()
    if t.lower().startswith("xor"):
        body = t[3:].lstrip(":(").rstrip(")")
        pairs = []
        for part in body.split(","):
            ends = part.split("->")
            if len(ends) != 2:
                raise LayoutsimError(f"XOR swizzle {t!r}: write xor:SRC->DST,SRC->DST (bit numbers)")
            pairs.append(tuple(parse_int(v, f"XOR swizzle {t!r}: bit", 0, 40) for v in ends))
        return XorSwizzle(tuple(pairs))
    body = t
    if body.lower().startswith("swizzle"):
        body = body[7:].strip("<>() ")
    parts = body.split(",")
    if len(parts) != 3:
        raise LayoutsimError(f"swizzle {t!r}: write B,M,S (CuTe Swizzle<B,M,S>), e.g. 3,3,3, "
                             f"or xor:SRC->DST,...")
    b, m, s = (parse_int(v, f"swizzle {t!r}: B,M,S", -30, 30) for v in parts)
    return Swizzle(b, m, s)
