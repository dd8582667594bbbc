"""fma.rn.f32 as one compiled loop (ops_float.fma32_rn's fast case): the sgemm kernels run little
else, and the numpy form of it is some fifteen calls per step, each a few microseconds on the
few hundred lanes of a step (issue 26). Same arithmetic as fma32_rn: the exact float64 product
plus z rounded to float64, then to float32 (round to nearest even, as numpy's astype), a NaN
as the canonical one; the first lane whose float64 sum was rounded (TwoSum's error) and is an
f32 halfway point or an f32 subnormal stops the loop, and the caller then rounds the whole step to odd (fround).

numba: imported only when an fma.rn.f32 first runs. The product of two float32 values is exact
in float64, so LLVM contracting the multiply and the add into one FMA could not change a bit."""
import numpy as np
from numba import njit

from .fround import CANON, MIN_NORMAL

_LOW29 = np.uint64((1 << 29) - 1)      # the fraction bits of a float64 below an f32's last bit
_HALF = np.uint64(1 << 28)             # ... of a float64 halfway between two f32 neighbours
_TINY = MIN_NORMAL["f32"]
_NAN = np.uint32(CANON["f32"])


@njit(cache=True, nogil=True)
def _fma_rn(x, y, z, out):
    buf = np.empty(1, np.float64)
    bits = buf.view(np.uint64)
    ob = out.view(np.uint32)
    for i in range(x.shape[0]):
        p = np.float64(x[i]) * np.float64(y[i])
        c = np.float64(z[i])
        s = p + c
        buf[0] = s
        if (bits[0] & _LOW29) == _HALF or (s != 0 and abs(s) < _TINY):
            bb = s - p                      # TwoSum: an exact sum rounds once, correctly
            if (p - (s - bb)) + (c - bb) != 0:
                return False
        if s != s:
            ob[i] = _NAN
        else:
            out[i] = np.float32(s)
    return True


def fma_rn(x, y, z):
    """float32 [n] of fma.rn.f32 for float32 [n] x, y, z (1-D, C-contiguous), or None where some
    lane needs the rounding to odd."""
    out = np.empty(x.shape[0], np.float32)
    return out if _fma_rn(x, y, z, out) else None
