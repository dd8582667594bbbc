"""Exact, compact storage of a measured table of f32 results (raw uint32 bits): how the MUFU
tables of layoutsim.numerics.sfu are kept (data/sfu_sm90/) and how gpu_check/sfu measures them.

A table T is stored against a reference R of the same length (the correctly rounded values,
computed at measurement time): R as its first ordered integer and the differences of the next
ones (smooth, so they compress to almost nothing) and the error E = ord(T) - ord(R), both as the narrowest signed
integer type that holds them, bz2-compressed. `ord` maps float bits to integers in the order of
their values and is a bijection (-0 -> -1, +0 -> 0), so T comes back bit for bit; `decode`
checks the SHA-256 of the result against the one recorded at measurement.
"""
import bz2
import hashlib

import numpy as np


def ordered(bits):
    b = np.asarray(bits, np.uint32).astype(np.int64)
    mag = b & 0x7FFFFFFF
    return np.where(b >> 31, -mag - 1, mag)


def unordered(v):
    v = np.ascontiguousarray(v).astype(np.int32)       # ordered values of f32 bits fit int32
    u = v.view(np.uint32)
    return np.where(v < 0, ~u | np.uint32(0x80000000), u)          # ~u is -v - 1 for v < 0


def _narrow(a):
    for t in (np.int8, np.int16, np.int32, np.int64):
        info = np.iinfo(t)
        if a.size == 0 or (a.min() >= info.min and a.max() <= info.max):
            return a.astype(t)
    raise ValueError("values do not fit int64")


def sha256(bits):
    return hashlib.sha256(np.ascontiguousarray(bits, np.uint32).tobytes()).hexdigest()


def encode(table, reference):
    """(meta, {"ref": bytes, "err": bytes}) for uint32 arrays of equal length."""
    t, r = np.asarray(table, np.uint32), np.asarray(reference, np.uint32)
    if t.shape != r.shape or t.ndim != 1:
        raise ValueError(f"table {t.shape} and reference {r.shape} must be equal 1-d arrays")
    ot, orf = ordered(t), ordered(r)
    first = int(orf[0]) if orf.size else 0
    ref_diff = _narrow(np.diff(orf, prepend=first))
    err = _narrow(ot - orf)
    blobs = {"ref": bz2.compress(ref_diff.tobytes(), 9), "err": bz2.compress(err.tobytes(), 9)}
    nz = err != 0
    meta = {"n": int(t.size), "sha256": sha256(t), "ref_first": first, "ref_dtype": ref_diff.dtype.name, "err_dtype": err.dtype.name,
            "bytes": {k: len(v) for k, v in blobs.items()},
            "error_ulps": {"nonzero": int(nz.sum()), "min": int(err.min()) if t.size else 0,
                           "max": int(err.max()) if t.size else 0,
                           "histogram": {str(int(k)): int(c) for k, c in zip(*np.unique(np.clip(err, -8, 8), return_counts=True))}}}
    return meta, blobs


def decode(meta, blobs):
    ref_diff = np.frombuffer(bz2.decompress(blobs["ref"]), meta["ref_dtype"])
    err = np.frombuffer(bz2.decompress(blobs["err"]), meta["err_dtype"])
    if ref_diff.size != meta["n"] or err.size != meta["n"]:
        raise ValueError(f"stored table has {ref_diff.size}/{err.size} entries, expected {meta['n']}")
    # in int32, wrapping: every partial sum mod 2^32 is right, and every final value fits int32
    v = np.cumsum(ref_diff, dtype=np.int32)
    v += np.int32(meta["ref_first"])
    v += err
    t = unordered(v)
    if sha256(t) != meta["sha256"]:
        raise ValueError("decoded table does not match its recorded SHA-256")
    return t


def round_f32_ftz(values):
    """float64 -> f32 bits, rounded to nearest even, subnormal results flushed to zero (MUFU's ftz)."""
    f = np.asarray(values, np.float64).astype(np.float32)
    tiny = np.abs(f) < np.float32(2.0 ** -126)
    f = np.where(tiny, np.copysign(np.float32(0), f), f).astype(np.float32)
    return f.view(np.uint32)
