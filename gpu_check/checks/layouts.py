"""Layout checks: does the hardware put every element where the catalog says?

Each spec (one generated kernel) gets a plan of probes; the probes of one spec run as one
launch (many cases). `compare` turns (inputs, outputs) into a Result using only the catalog and
exact arithmetic, and is the same code whether the outputs come from the GPU now or from a dump
recorded earlier (tests/data/layouts, replayed in CI).

Probes
  ldmatrix  ids       shared memory holds unique b16 ids; each lane gives a random row address
                      (case 0: contiguous rows); registers compared with the catalog per lane,
                      register and half. Lanes the catalog says are ignored give distinct rows too.
  stmatrix  ids       registers hold unique ids; after the store, the whole region is compared
                      (every id where the catalog puts it, every other byte untouched).
  mma/wgmma c_ids     A = B = 0, C = distinct values: D must reproduce C through the C and D maps.
            onehot    A has one 1 per row (row i at column (i + s) mod K, s = 0..K-1, so every A
                      element is hot once); B holds every element's id, written in base-`base`
                      digits over several cases (small integers, exact); D[i][j] must be the id
                      of B[k_i][j]. A wrong map shows which B element paired with which A element
                      and where the product landed.
            smallint  random small integers in A, B, C; D compared with numpy (exact).
  e2e       smallint  anchored to memory: A and B (and 16-bit C) are read from shared memory by
                      ldmatrix at row addresses derived from the catalog, 16-bit D written back
                      with stmatrix; the whole memory region is compared with numpy.
"""
from dataclasses import dataclass

import numpy as np
from layoutsim.numerics import sparse

from ..kernels import E2eSpec, LdmatrixSpec, MmaSpec, StmatrixSpec, WgmmaSpec, REGION_BYTES
from ..values import EXACT_INT_MAX, decode, encode
from .common import MAX_DETAILS, Mismatch, Result, diff_fragment

SEED = 20250


@dataclass
class Probe:
    check: str
    inp: np.ndarray        # (cases, in_words) uint32
    meta: dict


def plan(spec, rng=None, smallint_cases=8, id_cases=32):
    rng = rng if rng is not None else np.random.default_rng(SEED)
    if isinstance(spec, LdmatrixSpec):
        return [Probe("ids", _ld_addresses(rng, id_cases).astype(np.uint32), {})]
    if isinstance(spec, StmatrixSpec):
        return [_plan_stmatrix(spec, rng, id_cases)]
    if isinstance(spec, E2eSpec):
        return [_plan_e2e(spec, rng, smallint_cases)]
    if isinstance(spec, (MmaSpec, WgmmaSpec)):
        return _plan_mma(spec, rng, smallint_cases)
    raise TypeError(f"no layout plan for {type(spec).__name__}")


def compare(spec, check, inp, out, meta=None, aux=None):
    meta = meta or {}
    aux = spec.aux if aux is None else aux
    if isinstance(spec, LdmatrixSpec):
        return _compare_ldmatrix(spec, inp, out, aux)
    if isinstance(spec, StmatrixSpec):
        return _compare_stmatrix(spec, inp, out, aux)
    if isinstance(spec, E2eSpec):
        return _compare_e2e(spec, inp, out)
    return _compare_mma(spec, check, inp, out, meta)


# ---- ldmatrix / stmatrix ---------------------------------------------------------------
ROWS = REGION_BYTES // 16


def _ld_addresses(rng, cases):
    """(cases, 32) byte offsets of distinct 16-byte rows; case 0 is contiguous."""
    addr = np.zeros((cases, 32), np.int64)
    addr[0] = np.arange(32) * 16
    for i in range(1, cases):
        addr[i] = rng.permutation(ROWS)[:32] * 16
    return addr


def _row_source(spec, inp_case, elem):
    """Describe b16 element `elem` of the region: which lane's row address it lies in."""
    byte = 2 * int(elem)
    row = byte - byte % 16
    lanes = np.nonzero(inp_case == row)[0]
    alanes = spec.instr.addressing.lanes
    if len(lanes):
        lane = int(lanes[0])
        hit = np.argwhere(alanes == lane)
        who = f"row addressed by lane {lane}" + (f" (matrix {hit[0][0]} row {hit[0][1]})" if len(hit) else
                                                  " (a lane the catalog says is ignored)")
    else:
        who = "a row no lane addressed"
    return f"smem byte {byte:#x} = {who}, col {(byte % 16) // 2}"


def _compare_ldmatrix(spec, inp, out, aux):
    frag = spec.frag
    addr = np.asarray(inp, np.int64).reshape(-1, 32)
    region = np.ascontiguousarray(np.asarray(aux, np.uint32)).view(np.uint16)
    t = frag.table.astype(np.int64)
    src = spec.instr.addressing.lanes[t[..., 0], t[..., 1]]                 # (32, regs, 2)
    elem = addr[:, src] // 2 + t[..., 2]                                      # (n, 32, regs, 2)
    vals = region[elem].astype(np.uint32)
    expected = vals[..., 0] | (vals[..., 1] << 16)
    got = spec.regs(out)
    n, compared, details = diff_fragment(frag, "b16", expected, got, letter="M")
    for d in details:
        d.note = "got " + _row_source(spec, addr[d.case], d.got) + "; expected " + _row_source(spec, addr[d.case], d.expected)
    return Result("layouts", spec.entry, "ids", cases=len(addr), compared=compared, mismatches=n,
                  details=details).finish()


def _st_ids(frag):
    """Unique nonzero b16 id per (lane, reg, slot)."""
    lane, reg, slot = np.meshgrid(np.arange(32), np.arange(frag.regs), np.arange(2), indexing="ij")
    return (1 + lane * 8 + reg * 2 + slot).astype(np.uint32)


def _plan_stmatrix(spec, rng, cases):
    ids = _st_ids(spec.frag)
    words = ids[..., 0] | (ids[..., 1] << 16)                                 # (32, regs)
    addr = _ld_addresses(rng, cases)
    inp = np.zeros((cases, 32, spec.lane_in), np.uint32)
    inp[:, :, :spec.count] = words
    inp[:, :, spec.count] = addr
    return Probe("ids", inp.reshape(cases, -1), {})


def _describe_id(v, sentinel):
    if v == sentinel:
        return "untouched"
    i = int(v) - 1
    if not 0 <= i < 32 * 8:
        return "a value no lane stored"
    return f"lane {i // 8} r{(i % 8) // 2}.{'hi' if i % 2 else 'lo'}"


def _compare_stmatrix(spec, inp, out, aux):
    frag = spec.frag
    inp = np.asarray(inp, np.uint32).reshape(-1, 32, spec.lane_in)
    n = len(inp)
    addr = inp[:, :, spec.count].astype(np.int64)
    t = frag.table.astype(np.int64)
    src = spec.instr.addressing.lanes[t[..., 0], t[..., 1]]                   # (32, regs, 2)
    elem = addr[:, src] // 2 + t[..., 2]                                       # (n, 32, regs, 2)
    regs = inp[:, :, :spec.count]
    ids = np.stack([regs & 0xFFFF, regs >> 16], axis=-1)                       # (n, 32, regs, 2)
    expected = np.tile(np.ascontiguousarray(np.asarray(aux, np.uint32)).view(np.uint16), (n, 1)).copy()
    rows = np.repeat(np.arange(n), elem[0].size)
    expected[rows, elem.reshape(-1)] = ids.reshape(-1)
    got = np.ascontiguousarray(np.asarray(out, np.uint32).reshape(n, -1)).view(np.uint16)
    bad = np.argwhere(expected != got)
    details = []
    for case, e in bad[:MAX_DETAILS]:
        exp, g = int(expected[case, e]), int(got[case, e])
        where = _row_source(spec, addr[case], e)
        details.append(Mismatch(int(case), where, "b16", exp, g,
                                note=f"expected {_describe_id(exp, spec.SENTINEL)}, got {_describe_id(g, spec.SENTINEL)}"))
    return Result("layouts", spec.entry, "ids", cases=n, compared=int(expected.size), mismatches=len(bad),
                  details=details).finish()


# ---- MMA operand maps --------------------------------------------------------------------
def _shapes(spec):
    """(M, N, K) logical, and A's stored column count (K/2 for AMD SWMMAC's compressed A)."""
    m, n, k = spec.instr.shape
    ka = spec.fa.shape[2]
    return m, n, k, ka


def _ids(fmt, count):
    """`count` distinct raw bit patterns of exact values of fmt, that every accumulation path keeps.

    f32 accumulators get the integers 1..count: the wgmma fp8 path keeps only 13 fraction bits of
    an fp32 result (1 + k * 2^-23 would all round to 1.0), and 14 significant bits hold every
    integer up to 16384 = 64 x 256. f16 accumulators get consecutive normal bit patterns (more
    than the 2048 exact integers are needed for 64 x 256), kept exactly by an f16 result.
    """
    q = np.arange(count, dtype=np.uint64)
    if fmt in ("f32", "s32", "f64"):
        if count > 1 << 14:
            raise ValueError("too many ids")
        return encode(fmt, q.astype(np.int64) + 1)
    base = {"f16": 0x0400, "bf16": 0x0080}[fmt]
    if count > 0x7800:
        raise ValueError("too many ids for f16")
    return q + np.uint64(base)


def _digits(count, base):
    t = 1
    while base ** t < count:
        t += 1
    return t


def _small(rng, fmt, shape, lo=-2, hi=2):
    signed = fmt not in ("u8", "u4")
    lo = lo if signed else 0
    hi = hi if signed else hi + 1
    return encode(fmt, rng.integers(lo, hi + 1, size=shape))


def _idx_patterns(spec, rng, n):
    """Random valid 2:4 index fields (p0 < p1) for SWMMAC's IDX operand: raw 4-bit values."""
    f = spec.instr.operands["IDX"].fragment
    rows, groups = f.shape[1], f.shape[2]
    pairs = np.array([(p, q) for p in range(4) for q in range(p + 1, 4)])
    pick = pairs[rng.integers(0, len(pairs), size=(n, rows, groups))]
    return (pick[..., 0] | (pick[..., 1] << 2)).astype(np.uint64)


def _extra(spec, rng, n):
    if "IDX" in getattr(spec, "extra_in", ()):
        return {"IDX": _idx_patterns(spec, rng, n)}
    return None


def _plan_mma(spec, rng, smallint_cases):
    m, n, k, ka = _shapes(spec)
    f = spec.fmt
    probes = []
    # C ids
    c = _ids(f["c"], m * n).reshape(1, m, n)
    probes.append(Probe("c_ids", spec.pack_inputs(np.zeros((1, m, ka), np.uint64), np.zeros((1, k, n), np.uint64),
                                                  c, _extra(spec, rng, 1)), {}))
    # row-hot A, B ids in digits
    base = int(min(EXACT_INT_MAX[f["b"]], EXACT_INT_MAX[f["d"]], 2048))
    t = _digits(k * n, base)
    cases = ka * t
    a = np.zeros((cases, m, ka), np.uint64)
    b = np.zeros((cases, k, n), np.uint64)
    one = encode(f["a"], np.array(1))
    q = np.arange(k * n).reshape(k, n)
    rows = np.arange(m)
    for s in range(ka):
        for d in range(t):
            i = s * t + d
            a[i, rows, (rows + s) % ka] = one
            b[i] = encode(f["b"], (q // base ** d) % base + 1)
    probes.append(Probe("onehot", spec.pack_inputs(a, b, np.zeros((cases, m, n), np.uint64),
                                                   _extra(spec, rng, cases)),
                        {"base": base, "digits": t, "shifts": ka}))
    # small integers
    a = _small(rng, f["a"], (smallint_cases, m, ka))
    b = _small(rng, f["b"], (smallint_cases, k, n))
    c = _small(rng, f["c"], (smallint_cases, m, n), -8, 8)
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
    return encode(fmt["d"], D)


def _compare_mma(spec, check, inp, out, meta):
    a, b, c = spec.unpack_inputs(inp)
    extra = spec.unpack_extra(inp) if getattr(spec, "extra_in", ()) else None
    m, n, k, ka = _shapes(spec)
    expected = spec.pack_d(exact_d(spec.fmt, a, b, c, extra, k))
    got = spec.d_words(out)
    bad, compared, details = diff_fragment(spec.fd, spec.fmt["d"], expected, got, letter="D")
    res = Result("layouts", spec.entry, check, cases=len(got), compared=compared, mismatches=bad, details=details)
    if bad and check == "onehot" and not extra:
        res.explain = explain_onehot(spec, a, got, meta)
    return res.finish()


def explain_onehot(spec, a, got, meta, limit=8):
    """Which B element reached each wrong D element: decode the digit-coded ids the GPU returned."""
    base, t = int(meta["base"]), int(meta["digits"])
    m, n, k, ka = _shapes(spec)
    from ..pack import unpack
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


# ---- end to end through memory ------------------------------------------------------------
def _plan_e2e(spec, rng, cases):
    f = spec.fmt
    a = _small(rng, f["a"], (cases, spec.M, spec.K))
    b = _small(rng, f["b"], (cases, spec.K, spec.N))
    c = _small(rng, f["c"], (cases, spec.M, spec.N), -8, 8)
    return Probe("e2e", spec.pack_inputs(a, b, c), {})


def _compare_e2e(spec, inp, out):
    a, b, c = spec.unpack_inputs(inp)
    d = exact_d(spec.fmt, a, b, c)
    if not spec.d_mem:
        expected = spec.pack_d(d)
        bad, compared, details = diff_fragment(spec.fd, spec.fmt["d"], expected, np.asarray(out, np.uint32).reshape(-1, 32, spec.wd))
        return Result("layouts", spec.entry, "e2e", cases=len(d), compared=compared, mismatches=bad,
                      details=details, note="A, B from memory by ldmatrix; C, D through the catalog maps").finish()
    inp = np.asarray(inp, np.uint32).reshape(len(d), -1)
    expected = np.ascontiguousarray(inp[:, :spec.region_words]).view(np.uint16).copy()
    idx = spec._mem_index("D", spec.M, spec.N)
    expected[:, idx] = d.astype(np.uint16)
    got = np.ascontiguousarray(np.asarray(out, np.uint32).reshape(len(d), -1)).view(np.uint16)
    bad = np.argwhere(expected != got)
    where_d = {int(e): (i, j) for (i, j), e in np.ndenumerate(idx)}
    details = []
    for case, e in bad[:MAX_DETAILS]:
        if int(e) in where_d:
            i, j = where_d[int(e)]
            where, fmt = f"D[{i}][{j}] at smem byte {2 * int(e):#x}", spec.fmt["d"]
        else:
            where, fmt = f"smem byte {2 * int(e):#x} outside D (must be untouched)", "b16"
        details.append(Mismatch(int(case), where, fmt, int(expected[case, e]), int(got[case, e])))
    return Result("layouts", spec.entry, "e2e", cases=len(d), compared=int(expected.size), mismatches=len(bad),
                  details=details, note="A, B, C read by ldmatrix, D written by stmatrix; whole region compared").finish()
