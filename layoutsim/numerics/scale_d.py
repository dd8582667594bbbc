"""tcgen05.mma's scale-input-d: D = A*B + D * (2 ^ -scale-input-d).

PTX ISA 9.x 9.7.16.10.9.1 'tcgen05.mma' (and 9.7.16.10.9.2 'tcgen05.mma.sp'): the optional immediate
scale-input-d scales the input matrix D before the accumulation; its valid range is [0, 15], and it
is valid for .kind::tf32 and .kind::f16 only (the ISA's words; ptxas 13.0 refuses it for the other
kinds, tests/ptx/test_tcgen05_scale_d.py).

What the ISA does not say is how the scaled D is formed. Assumed here (no document read here and no
GPU run here proves it; MMA-Sim does not model the operand): the scaling is exact, an exponent
adjustment of each element of D, and the scaled D then enters the dense arithmetic of the kind as
its C (so a scale of 0 is the plain MMA, and any scale is the plain MMA of the pre-scaled C where
that C is exact in D's format: tests/numerics/test_scale_d.py checks it against MMA-Sim that way).
Where D * 2^-s is not exact in D's format (it falls below the normal range and loses bits), the
hardware may keep the bits, round them or flush them, and no source read here says which: that case
is refused, never guessed. NaN keeps its bits (its payload is the dense arithmetic's business),
Inf and signed zeros scale to themselves.
"""
import numpy as np

from ..errors import LayoutsimError
from ..formats import decode, encode, show

KINDS = ("f16", "tf32")           # PTX ISA: scale-input-d is only valid for .kind::tf32 and .kind::f16
LIMIT = 15                        # its valid range is [0, 15]
SECTION = "PTX ISA 9.7.16.10.9.1 'tcgen05.mma'"


def check(inst, s):
    """The scale as an int, or a LayoutsimError naming why this instruction cannot take it."""
    kind = inst.options.get("kind") if inst.family == "tcgen05.mma" else None
    if kind is None:
        raise LayoutsimError(f"scale_d= is tcgen05.mma's scale-input-d; {inst.name} has no such operand")
    if kind not in KINDS:
        raise LayoutsimError(f"scale_d= (scale-input-d) is valid for .kind::tf32 and .kind::f16 only, not "
                             f".kind::{kind} ({SECTION})")
    if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or not 0 <= int(s) <= LIMIT:
        raise LayoutsimError(f"scale_d={s!r}: scale-input-d is an integer in [0, {LIMIT}] ({SECTION})")
    return int(s)


def scale_c(fmt, raw, s):
    """Raw bits of C * 2^-s (C raw bits of format `fmt`, D's): exact, or LayoutsimError naming the
    first element whose scaled value D's format cannot hold exactly (see the module docstring)."""
    raw = np.asarray(raw)
    if s == 0:
        return raw
    val = decode(fmt, raw)
    want = np.ldexp(val, -s)                      # float64: exact for every f32/f16 value and s <= 15
    out = encode(fmt, want).astype(raw.dtype)
    nan = np.isnan(val)
    lost = ~nan & (decode(fmt, out) != want)
    if lost.any():
        i = tuple(int(x) for x in np.argwhere(lost)[0])
        raise LayoutsimError(f"scale-input-d {s}: D{list(i)} = {show(fmt, raw[i])} times 2^-{s} is not exact in "
                             f"{fmt} (it leaves the normal range and loses bits); how the tensor core rounds it "
                             f"is not documented ({SECTION}: D = A*B + D * 2^-scale-input-d), so it is refused")
    return np.where(nan, raw, out)
