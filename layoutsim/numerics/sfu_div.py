"""The approximate f32 divisions (div.approx.f32, div.full.f32 and their .ftz forms) as the H200
(sm_90) computes them: the SASS sequence ptxas 13.0 emits for each, step by step, around the
MUFU.RCP model of layoutsim.numerics.sfu (proven equal to the H200 over all 2^32 inputs).

    from layoutsim.numerics import sfu_div
    bits = sfu_div.evaluate("div.full.f32", a_bits, b_bits)    # raw uint32 bits in and out
    sfu_div.model("div.approx.ftz.f32")(a_bits, b_bits)       # the same, for the PTX executor
    sfu_div.info("div.full.f32")                              # how, and what the H200 check found

The sequences (ptxas 13.0 -arch=sm_90, read with nvdisasm; gpu_check/sfu/div_probe.cu holds the
kernels they were read from, and `python -m gpu_check.sfu.div_measure` prints them again):
  div.approx.ftz.f32  MUFU.RCP r, b;  FMUL.FTZ d, a, r
  div.approx.f32      FSETP.GEU p, |b|, 2^-126;  @!p FMUL b, b, 2^24;  @!p FMUL a, a, 2^24;
                      MUFU.RCP r, b;  FMUL d, r, a
  div.full.ftz.f32    FSETP.GT.FTZ q, |b|, 2^126;  @q FMUL.FTZ b, b, 0.25;  @q FMUL.FTZ a, a, 0.25;
                      MUFU.RCP r, b;  FMUL.FTZ d, r, a
  div.full.f32        FSETP.GT q, |b|, 2^126;  FSETP.GEU p, |b|, 2^-126 (both on the b given);
                      @q FMUL b, b, 0.25;  @q FMUL a, a, 0.25;  @!p FMUL b, b, 2^24;  @!p FMUL a, a, 2^24;
                      MUFU.RCP r, b;  FMUL d, r, a
No slow path: ptxas emits no branch for any of the four. FMUL is IEEE 754 multiplication rounded
to nearest even (.FTZ: subnormal inputs and results are zeros of their sign); a NaN result is the
canonical NaN (CUDA C++ Programming Guide, 'Floating-Point Standard'), as MUFU's is.

Proof on the H200: `python -m gpu_check.sfu.div_measure` runs the four instructions on the input
set of gpu_check/sfu/div_inputs.py (random bits, every special class, subnormals, near-overflow
divisors, exponent extremes) and stores a SHA-256 per block of results; tests/numerics/
test_sfu_div.py replays it (tests/data/sfu/sfu_div_sm90.json). The models rest on their
parts: MUFU.RCP proven over every input, FMUL/FSETP IEEE, and the SASS above.
"""
import numpy as np

from ..errors import LayoutsimError
from ..formats import canonical_nan
from ..ptx import fround as F
from . import sfu

_QNAN = np.uint32(canonical_nan("f32"))
_TINY, _BIG = np.float32(2.0 ** -126), np.float32(2.0 ** 126)
_SCALE_UP, _QUARTER = np.float32(2.0 ** 24), np.float32(0.25)


def _f(bits):
    return np.asarray(bits, np.uint32).view(np.float32)


def _flush(f):
    """float32 values: subnormals to zeros of their sign."""
    return np.where(np.abs(f) < _TINY, np.copysign(np.float32(0), f), f).astype(np.float32)


def fmul(a, b, ftz=False):
    """FMUL{.FTZ} on raw f32 bits (uint32 in and out): the exact product rounded once, by the
    executor's rounding (its .ftz rule decides tininess before rounding, as the GPU does)."""
    x, y = _f(a), _f(b)
    if ftz:
        x, y = _flush(x), _flush(y)
    with np.errstate(all="ignore"):
        p = x.astype(np.float64) * y.astype(np.float64)                       # exact in f64
    return F.round_to(p, "f32", "rn", ftz).astype(np.uint32)


def _where(c, x, y):
    return np.where(c, x, y).astype(np.uint32)


def _scaled(c, a, b, k, ftz=False):
    """(a, b) with both multiplied by the f32 bits k (FMUL{.FTZ}) where c holds: the predicated
    FMULs of a sequence. Where c holds for no lane, a and b as they are (no FMUL runs)."""
    if not c.any():
        return np.asarray(a, np.uint32), np.asarray(b, np.uint32)
    k = np.full(np.shape(b), k).view(np.uint32)
    return _where(c, fmul(a, k, ftz), a), _where(c, fmul(b, k, ftz), b)


# Each sequence ends with one FMUL d = r * a' of MUFU.RCP's r and the (scaled) dividend a'; the
# factors below are its two inputs. ptxas may fuse that last FMUL with an add that reads d into one
# FFMA (ptx/contract.py takes the decision from the SASS, ops_float.contracted_div computes it).
def _factors_approx_ftz(a, b):
    return sfu.mufu_rcp(b), np.asarray(a, np.uint32)


def _factors_approx(a, b):
    with np.errstate(invalid="ignore"):
        small = np.abs(_f(b)) < _TINY              # !FSETP.GEU: NaN is not small
    a, b = _scaled(small, a, b, _SCALE_UP)
    return sfu.mufu_rcp(b), a


def _factors_full_ftz(a, b):
    with np.errstate(invalid="ignore"):
        big = np.abs(_f(b)) > _BIG
    a, b = _scaled(big, a, b, _QUARTER, True)
    return sfu.mufu_rcp(b), a


def _factors_full(a, b):
    with np.errstate(invalid="ignore"):
        mag = np.abs(_f(b))
        big, small = mag > _BIG, mag < _TINY       # both FSETPs read the divisor as given
    a, b = _scaled(big, a, b, _QUARTER)
    a, b = _scaled(small, a, b, _SCALE_UP)
    return sfu.mufu_rcp(b), a


FACTORS = {"div.approx.f32": _factors_approx, "div.approx.ftz.f32": _factors_approx_ftz,
           "div.full.f32": _factors_full, "div.full.ftz.f32": _factors_full_ftz}


def factors(name, a, b):
    """(r, a') raw f32 bits: the inputs of the sequence's last FMUL, whose product is the quotient."""
    return FACTORS[name](a, b)


def _model(name):
    ftz = ".ftz." in name
    return lambda a, b: fmul(*FACTORS[name](a, b), ftz=ftz)


MODELS = {name: _model(name) for name in FACTORS}


def names():
    return sorted(MODELS)


def model(ptx):
    """bits, bits -> bits for a PTX division modelled here, or None."""
    fn = MODELS.get(ptx)
    if fn is None:
        return None

    def f(a, b):
        a, b = np.broadcast_arrays(np.asarray(a, np.uint32), np.asarray(b, np.uint32))
        with np.errstate(all="ignore"):
            return fn(a, b)
    return f


def evaluate(ptx, a_bits, b_bits):
    """The result bits (uint32) of a modelled division on raw f32 bits (any shape, broadcast)."""
    f = model(ptx)
    if f is None:
        raise LayoutsimError(f"sfu_div: no model of {ptx!r}; modelled: {', '.join(names())}")
    return f(a_bits, b_bits)


def info(ptx):
    """How a division is computed and what backs it."""
    if ptx not in MODELS:
        raise LayoutsimError(f"sfu_div: no model of {ptx!r}; modelled: {', '.join(names())}")
    return {"ptx": ptx, "exact": True, "arch": "sm_90",
            "how": "the SASS sequence ptxas 13.0 emits (FSETP/FMUL scaling, MUFU.RCP, FMUL) over the "
                   "MUFU.RCP model proven on all 2^32 inputs",
            "h200": "python -m gpu_check.sfu.div_measure; replayed by tests/numerics/test_sfu_div.py"}
