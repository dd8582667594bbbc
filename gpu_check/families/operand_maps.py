"""Layout probes for the kernels that compute D = A.B + C and leave D in registers (mma.sync,
wgmma, AMD WMMA/SWMMAC): every operand map is tested through exact arithmetic.

  c_ids     A = B = 0, C = distinct values: D must reproduce C through the C and D maps.
  onehot    A has one 1 per row (row i at column (i + s) mod K, s = 0..K-1, so every A element
            is hot once); B holds every element's id, written in base-`base` digits over several
            cases (small integers, exact); D[i][j] must be the id of B[k_i][j]. A wrong map shows
            which B element paired with which A element and where the product landed.
  smallint  random small integers in A, B, C; D compared with numpy (exact).

A spec using them (`OperandMapSpec`) has fa/fd (A and D fragments), fmt {"a".."d"}, d_threads,
wd (D words per thread), pack_inputs(a, b, c, extra) / unpack_inputs(inp), and extra_in (the
operands after C: SWMMAC's "IDX") with unpack_extra(inp).
"""
import numpy as np

from layoutsim.formats import decode, encode_exact, get_format, positive_normals
from layoutsim.numerics import sparse
from layoutsim.packing import pack, squeeze_matrices, unpack

from ..checks.common import Result, diff_fragment
from .base import Probe, Spec


class OperandMapSpec(Spec):
    """A kernel whose kernel writes one D fragment per case: out[case][thread][D words], over
    `d_threads` threads (a warp or wave, or a warpgroup)."""
    extra_in = ()

    def d_words(self, out):
        return np.asarray(out, np.uint32).reshape(-1, self.d_threads, self.wd)

    def unpack_d(self, out):
        return squeeze_matrices(unpack(self.fd, self.d_words(out)))

    def pack_d(self, d):
        return pack(self.fd, d)

    def probes(self, rng, smallint_cases=8):
        return _probes(self, rng, smallint_cases)

    def compare(self, check, inp, out, meta, aux=None):
        return _compare(self, check, inp, out, meta)


def _shapes(spec):
    """(M, N, K) logical, and A's stored column count (K/2 for AMD SWMMAC's compressed A)."""
    m, n, k = spec.instr.shape
    ka = spec.fa.shape[2]
    return m, n, k, ka


def _lead(spec):
    """The block axis of the probe matrices: () for one matrix, (blocks,) for a multi-block MFMA
    (every block computes its own D = A.B + C)."""
    blocks = spec.fd.shape[0]
    return (blocks,) if blocks > 1 else ()


def ids(fmt, count):
    """`count` distinct raw bit patterns of exact values of fmt, that every accumulation path keeps.

    f32 accumulators get the integers 1..count: the wgmma fp8 path keeps only 13 fraction bits of
    an fp32 result (1 + k * 2^-23 would all round to 1.0), and 14 significant bits hold every
    integer up to 16384 = 64 x 256. f16 accumulators get consecutive normal bit patterns (more
    than the 2048 exact integers are needed for 64 x 256), kept exactly by an f16 result.
    """
    if get_format(fmt).bits >= 32:
        if count > 1 << 14:
            raise ValueError("too many ids")
        return encode_exact(fmt, np.arange(1, count + 1))
    return positive_normals(fmt, count)


def _digits(count, base):
    t = 1
    while base ** t < count:
        t += 1
    return t


def small(rng, fmt, shape, lo=-2, hi=2):
    """Random small integers of a format, as raw bits (non-negative for unsigned formats)."""
    signed = get_format(fmt).kind != "uint"
    lo = lo if signed else 0
    hi = hi if signed else hi + 1
    return encode_exact(fmt, rng.integers(lo, hi + 1, size=shape))


def _idx_patterns(spec, rng, n):
    """Random valid 2:4 index fields (p0 < p1) for SWMMAC's IDX operand: raw 4-bit values."""
    from layoutsim.numerics.sparse import random_index
    f = spec.instr.operands["IDX"].fragment
    return random_index(rng, (n, f.shape[1], f.shape[2])).astype(np.uint64)


def _extra(spec, rng, n):
    if "IDX" in spec.extra_in:
        return {"IDX": _idx_patterns(spec, rng, n)}
    return None


def _probes(spec, rng, smallint_cases):
    m, n, k, ka = _shapes(spec)
    lead = _lead(spec)
    f = spec.fmt
    probes = []
    # C ids
    c = ids(f["c"], int(np.prod(lead, dtype=int)) * m * n).reshape(1, *lead, m, n)
    probes.append(Probe("c_ids", spec.pack_inputs(np.zeros((1, *lead, m, ka), np.uint64),
                                                  np.zeros((1, *lead, k, n), np.uint64),
                                                  c, _extra(spec, rng, 1)), {}))
    # row-hot A, B ids in digits
    base = int(min(get_format(f["b"]).exact_int_max, get_format(f["d"]).exact_int_max, 2048))
    q = np.arange(int(np.prod(lead, dtype=int)) * k * n).reshape(*lead, k, n)
    t = _digits(q.size, base)
    cases = ka * t
    a = np.zeros((cases, *lead, m, ka), np.uint64)
    b = np.zeros((cases, *lead, k, n), np.uint64)
    one = encode_exact(f["a"], np.array(1))
    rows = np.arange(m)
    for s in range(ka):
        for d in range(t):
            i = s * t + d
            a[i, ..., rows, (rows + s) % ka] = one
            b[i] = encode_exact(f["b"], (q // base ** d) % base + 1)
    probes.append(Probe("onehot", spec.pack_inputs(a, b, np.zeros((cases, *lead, m, n), np.uint64),
                                                   _extra(spec, rng, cases)),
                        {"base": base, "digits": t, "shifts": ka}))
    # small integers
    a = small(rng, f["a"], (smallint_cases, *lead, m, ka))
    b = small(rng, f["b"], (smallint_cases, *lead, k, n))
    c = small(rng, f["c"], (smallint_cases, *lead, m, n), -8, 8)
    probes.append(Probe("smallint", spec.pack_inputs(a, b, c, _extra(spec, rng, smallint_cases)), {}))
    return probes


def exact_d(fmt, a, b, c, extra=None, k=None):
    """D = A.B + C computed exactly (values), encoded as raw bits of the D format."""
    A, B, C = (decode(fmt[x], v) for x, v in zip("abc", (a, b, c)))
    if extra and "IDX" in extra:
        A = sparse.expand(A, extra["IDX"], k)
    if fmt["d"] == "s32":
        D = np.matmul(A.astype(np.int64), B.astype(np.int64)) + C.astype(np.int64)
        D = ((D + (1 << 31)) % (1 << 32)) - (1 << 31)
    else:
        D = np.matmul(A, B) + C + 0.0
    return encode_exact(fmt["d"], D)


def _compare(spec, check, inp, out, meta):
    a, b, c = spec.unpack_inputs(inp)
    extra = spec.unpack_extra(inp) if spec.extra_in else None
    m, n, k, ka = _shapes(spec)
    expected = spec.pack_d(exact_d(spec.fmt, a, b, c, extra, k))
    got = spec.d_words(out)
    bad, compared, details = diff_fragment(spec.fd, spec.fmt["d"], expected, got, letter="D")
    res = Result("layouts", spec.entry, check, cases=len(got), compared=compared, mismatches=bad, details=details)
    if bad and check == "onehot" and not extra and not _lead(spec):
        res.explain = explain_onehot(spec, a, got, meta)
    return res.finish()


def explain_onehot(spec, a, got, meta, limit=8):
    """Which B element reached each wrong D element: decode the digit-coded ids the GPU returned."""
    base, t = int(meta["base"]), int(meta["digits"])
    m, n, k, ka = _shapes(spec)
    d = decode(spec.fmt["d"], unpack(spec.fd, got)[:, 0])                 # (cases, M, N) values
    d = d.reshape(-1, t, m, n)
    hot = a.reshape(-1, t, m, ka)[:, 0].argmax(axis=-1)                   # (shifts, M): k of row i
    lines = []
    for s in range(d.shape[0]):
        digits = d[s]                                                      # (t, M, N)
        ok = np.all((digits >= 1) & (digits <= base) & (digits == np.round(digits)), axis=0)
        q = np.zeros((m, n), np.int64)
        for x in range(t):
            q += (np.where(ok, digits[x], 1).astype(np.int64) - 1) * base ** x
        kk, jj = np.divmod(q, n)
        for i in range(m):
            for j in range(n):
                want_k = int(hot[s, i])
                if ok[i, j] and kk[i, j] == want_k and jj[i, j] == j:
                    continue
                h = spec.fd.holders[0, i, j, 0]
                where = f"D[{i}][{j}] (lane {h[0]} {spec.fd.name(h[1], h[2])})"
                if ok[i, j]:
                    what = f"received A[{i}][{want_k}] x B[{kk[i, j]}][{jj[i, j]}]"
                elif np.all(digits[:, i, j] == 0):
                    what = "received no product"
                else:
                    what = f"received {digits[:, i, j].tolist()} (not one product)"
                lines.append(f"one-hot shift {s}: {where} {what}; catalog: A[{i}][{want_k}] x B[{want_k}][{j}]")
                if len(lines) >= limit:
                    return lines
    return lines
