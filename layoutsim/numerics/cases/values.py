"""Value-space helpers for the case generator: random representable values of a float format,
and the slot one designed dot product is written into."""
import math

import numpy as np

from ...formats import get_format


class Fmt:
    """Value-space helpers for one float format."""

    def __init__(self, name):
        self.f = get_format(name)
        self.name = name
        self.mb = self.f.mbits
        self.emin = self.f.emin
        self.emax = self.f.emax
        self.sub_min = self.emin - self.mb      # exponent of the smallest subnormal

    def sig(self, rng, size=None, bits=None):
        """Random significand in [1, 2) with at most `bits` (default mb) fraction bits."""
        b = self.mb if bits is None else min(bits, self.mb)
        return 1.0 + rng.integers(0, 1 << b, size) / float(1 << b)

    def value(self, rng, e, sign=None, sig=None):
        """A representable value near 2**e (clamped into the format's range)."""
        e = min(max(int(e), self.sub_min), self.emax)
        s = self.sig(rng) if sig is None else sig
        if e < self.emin:       # subnormal: keep only the bits that exist
            step = 2.0 ** self.sub_min
            v = max(math.floor(s * 2.0 ** e / step) * step, step)
        else:
            v = s * 2.0 ** e
            if e == self.emax:
                v = min(v, self.f.max_finite)
        if sign is None:
            sign = rng.integers(0, 2)
        return -v if sign else v

    def values(self, rng, shape, lo, hi):
        """Random representable values, exponents uniform in [lo, hi] (clamped to the range)."""
        lo, hi = max(lo, self.sub_min), min(hi, self.emax)
        e = rng.integers(lo, hi + 1, shape)
        v = self.sig(rng, shape) * np.exp2(e)
        step = 2.0 ** self.sub_min
        v = np.where(e < self.emin, np.maximum(np.floor(v / step), 1) * step, v)
        v = np.minimum(v, self.f.max_finite)
        return np.where(rng.integers(0, 2, shape) == 1, -v, v)


def split(rng, fa, fb, e):
    """Exponents (ea, eb) with ea + eb = e: two normal inputs where that is possible, else
    (products below the smallest normal product) subnormal ones."""
    lo = max(fa.emin, e - fb.emax)
    hi = min(fa.emax, e - fb.emin)
    if lo > hi:
        lo = max(fa.sub_min, e - fb.emax)
        hi = min(fa.emax, e - fb.sub_min)
    if lo > hi:
        ea = min(max(e // 2, fa.sub_min), fa.emax)
    else:
        ea = int(rng.integers(lo, hi + 1))
    return ea, min(max(e - ea, fb.sub_min), fb.emax)


class Slot:
    def __init__(self, K):
        self.a = np.zeros(K)
        self.b = np.zeros(K)
        self.c = 0.0
        self.raw_a = {}     # k -> raw bits overriding the value (specials with payloads)
        self.raw_b = {}
        self.raw_c = None

    def put(self, rng, fa, fb, k, e, sign=None, sa=None, sb=None):
        """Product a[k]*b[k] near 2**e (inputs normal where possible)."""
        ea, eb = split(rng, fa, fb, e)
        self.a[k] = fa.value(rng, ea, sign, sa)
        self.b[k] = abs(fb.value(rng, eb, 0, sb))
