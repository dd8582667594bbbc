"""Unique ids in shared memory, told apart through a one-hot MMA or a byte copy.

Element i of a region holds "digit" p of i (base = how many codes the format has) as a code of
its format, one pass per digit. A code is a raw bit pattern that survives the trip exactly:
  floats  normal numbers only (no zero, subnormal, Inf, NaN), so x * 1.0 summed with +-0 terms
          into an f32 accumulator is x again, whatever the hardware does with subnormals
  ints    every value (an s32 accumulator holds x exactly)
  tf32    normal f32 patterns with the 13 low bits clear (the tensor core reads the top 19)
so a D value names the code, the code names the digit, and the digits of all passes name the
element. Byte copies (TMA) use unsigned codes 1..2^(8e)-1 with 0 left for "not written".
"""
from functools import lru_cache

import numpy as np

from layoutsim import formats as F


@lru_cache(maxsize=None)
def codes(fmt):
    """Raw bit patterns usable as ids of format fmt, in digit order (uint64 array)."""
    f = F.get_format(fmt)
    if f.kind in ("int", "uint"):
        return np.arange(1 << f.bits, dtype=np.uint64)
    raw = np.arange(1 << (f.bits - f.shift), dtype=np.uint64) << np.uint64(f.shift)
    sign, exp, frac = F.fields(fmt, raw)
    ok = (exp > 0) & (F.classify(fmt, raw) == 0)
    return raw[ok]


def base(fmt):
    return len(codes(fmt))


def passes(n, nbase):
    """Digits needed to tell n ids apart in base nbase."""
    k, cap = 1, nbase
    while cap < n:
        k, cap = k + 1, cap * nbase
    return k


def digit(i, p, nbase):
    return (np.asarray(i, dtype=np.int64) // (nbase ** p)) % nbase


def element_image(fmt, n_elems, p):
    """Raw bits (uint64 [n_elems]) of pass p: element i holds the code of digit p of i."""
    return codes(fmt)[digit(np.arange(n_elems, dtype=np.int64), p, base(fmt))]


@lru_cache(maxsize=None)
def _value_table(fmt, out_fmt):
    """(sorted raw bits of the output format, the digit each one means)."""
    c = codes(fmt)
    if F.get_format(fmt).kind in ("int", "uint"):
        vals = F.decode(fmt, c).astype(np.int64)
        raw = (vals & 0xFFFFFFFF).astype(np.uint64)          # s32 accumulator bits
    else:
        raw = F.encode(out_fmt, F.decode(fmt, c)).astype(np.uint64)
    order = np.argsort(raw, kind="stable")
    return raw[order], order.astype(np.int64)


def digits_from_output(fmt, out_fmt, d_raw):
    """The digit each accumulator value (raw bits of out_fmt) carries; -1 where it is no code."""
    table, digit_of = _value_table(fmt, out_fmt)
    d = np.asarray(d_raw).astype(np.uint64)
    pos = np.clip(np.searchsorted(table, d), 0, len(table) - 1)
    return np.where(table[pos] == d, digit_of[pos], -1)


def combine(digit_passes, nbase):
    """Element ids from per-pass digits (list of equal-shape arrays); -1 where any pass is -1."""
    out = np.zeros(np.shape(digit_passes[0]), np.int64)
    bad = np.zeros(out.shape, bool)
    for p, d in enumerate(digit_passes):
        d = np.asarray(d, np.int64)
        bad |= d < 0
        out += np.where(d < 0, 0, d) * (nbase ** p)
    return np.where(bad, -1, out)


# ---- byte copies (TMA): unsigned element values, 0 = not written ---------------------------
def byte_base(elem_bytes):
    return (1 << (8 * elem_bytes)) - 1


def byte_image(elem_bytes, n, p):
    """Unsigned values (uint64 [n]) of pass p for a TMA source: digit p of i, plus 1."""
    return (digit(np.arange(n, dtype=np.int64), p, byte_base(elem_bytes)) + 1).astype(np.uint64)


def byte_digits(values):
    """Digit of each landed element value, -1 for 0 (untouched)."""
    v = np.asarray(values).astype(np.int64)
    return np.where(v == 0, -1, v - 1)
