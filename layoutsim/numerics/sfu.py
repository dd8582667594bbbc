"""NVIDIA's approximate-math instructions (the special-function unit, MUFU) as the H200 (sm_90)
computes them: bit for bit where a model was proven exact over every input, and labelled "not
proven exact" with the measured error where not.

    from layoutsim.numerics import sfu
    bits, exact = sfu.evaluate("ex2.approx.ftz.f32", x_bits)   # raw bits in, raw bits out
    fn = sfu.model("ex2.approx.f32")       # bits -> bits for the PTX executor; None unless exact
    sfu.info("lg2.approx.f32")             # {"exact": False, "how": ..., "measured": ...}
    sfu.names()                            # every PTX instruction modelled here

Where the facts come from: the GPU job of 2026-12-01 on an NVIDIA H200 (driver 580.159.04, CUDA
13.0), `python -m gpu_check.sfu.measure` (probe gpu_check/sfu/probe.cu), committed by
`python -m gpu_check.sfu.commit` into data/sfu_sm90/: measured.json (every hypothesis with its
mismatch count over all 2^32 inputs, samples [x, H200, model], error against the correctly
rounded value), the MUFU tables the exact models read (codec: sfu_tables), and the 16-bit
results for every input (f16.npz).

The f32 primitives are the .ftz PTX forms, a bare MUFU on sm_90. Exact over all 2^32 inputs:
  ex2   MUFU.EX2 depends only on |x| as a fixed-point number with 23 fraction bits:
        2^x = T0[k] * 2^i for x = i + k/2^23 >= 0, T1[k] * 2^-i for x = -(i + k/2^23)
  rcp   rcp(1.m * 2^e) = T0[m] * 2^-e
  rsqrt rsqrt(1.m * 2^e) = T_(e mod 2)[m] * 2^-(e div 2);  sqrt the same with 2^(e div 2)
(T* hold MUFU's own results on those canonical inputs; products are rounded to nearest, and
subnormal inputs and results are zeros of their sign.) The PTX forms without .ftz are the SASS
sequence ptxas 13.0 emits around the same MUFU (FSETP/FMUL before and after: rescaling subnormal
or tiny inputs); the H200 computed them equal to that sequence on every input, so they are exact
wherever their MUFU is. sin/cos.approx(x) = MUFU.SIN/COS(FMUL.RZ(x, 1/(2 pi))), also measured
equal on every input. 16-bit forms: the H200's result for each of the 2^16 inputs is stored;
the x2 forms are the 16-bit form on each half (measured over all 2^32 pairs).
Not proven exact: lg2 (round-toward-zero of e + L[m] nudged by an infinitesimal: every check made so
far agrees with the H200, but no GPU run has compared it input by input yet: INFERRED), MUFU.SIN/COS
and MUFU.TANH (no model found: the correctly rounded value stands in).

The numpy forms below are the models. mufu_ex2 and mufu_rcp run as compiled loops (sfu_kernel.py,
the same bits: tests/numerics/test_sfu_kernel.py) for a 1-D array when the process has numba up
already, as the PTX executor has on a kernel with MMAs.
"""
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from .. import package_data as P
from ..errors import LayoutsimError
from ..files import cache_dir, read_npy, read_npz, write_atomic
from ..formats import canonical_nan
from . import sfu_tables

DATA = Path(__file__).resolve().parent / "data" / "sfu_sm90"
# the MUFU tables each f32 model reads, as gpu_check/sfu/measure.py names them (<op>.<table>)
TABLES = {"ex2": ("T0_F23", "T1_F23"), "rcp": ("T0",), "rsqrt": ("T0", "T1"), "sqrt": ("T0", "T1"),
          "lg2": ("T0", "T1")}
# the hypothesis (gpu_check/sfu/probe.cu predict()) each table model implements
HYPOTHESIS = {"ex2": 1 | 23 << 4, "rcp": 0, "rsqrt": 0, "sqrt": 0, "lg2": 4}
# models whose hypothesis no GPU run has checked input by input yet: why they are believed
INFERRED = {"lg2": (
    "hypothesis 4 (gpu_check/sfu/probe.cu) has not run on the GPU yet; inferred on 2026-12-07 from the "
    "H200 run of 2026-12-01: over all 2^32 inputs it differs from that run's hypothesis 1 (round_rz(e + L)) "
    "on 12,463,768 inputs, exactly hypothesis 1's count of mismatches with the H200 in each of the 254 "
    "exponent bins; it gives the H200's value on all 128 recorded samples; and with it the corpus launches "
    "that take lg2.approx (cuda-samples' inverseCNDKernel, 677 words before; FlashAttention-2's softmax_lse, "
    "8 bytes; ThunderKittens' attention L, 2 floats) are bit-identical to the GPU")}
# the 16-bit PTX instructions with a stored result for every input (f16.npz keys)
TABLES16 = ("ex2.approx.f16", "ex2.approx.ftz.bf16", "tanh.approx.f16", "tanh.approx.bf16")

_QNAN = np.uint32(canonical_nan("f32"))   # MUFU's NaN (every NaN or invalid input gives this)
_INF, _NEG_INF, _NEG_ZERO = np.uint32(0x7F800000), np.uint32(0xFF800000), np.uint32(0x80000000)
_SIGN, _MAG = np.uint32(0x80000000), np.uint32(0x7FFFFFFF)
_TINY = np.float32(2.0 ** -126)
_INV_2PI = np.uint32(0x3E22F983).view(np.float32)     # FMUL.RZ's immediate in sin/cos.approx


# ---- data --------------------------------------------------------------------------------------
# what this module reads of measured.json (checked when it is loaded: a damaged file is one line)
_MEASURED = {"source": dict,
             "tables": P.MapOf({"n": int, "sha256": str, "ref_first": int, "ref_dtype": str, "err_dtype": str}),
             "f16_tables": P.MapOf({"sha256": str}), "f16x2": P.MapOf({"mismatches": int}),
             "f32": P.MapOf({"error_vs_correctly_rounded": dict,
                             "hypotheses?": [{"hyp": int, "mismatches": int, "what": str}]})}


@lru_cache(maxsize=None)
def measured():
    """data/sfu_sm90/measured.json: what the H200 run found (see the module docstring)."""
    return P.load_json(DATA / "measured.json", _check_measured)


def _check_measured(doc):
    P.check(doc, _MEASURED)
    lacking = [f"tables[{op}.{t}]" for op, ts in TABLES.items() for t in ts if f"{op}.{t}" not in doc["tables"]]
    lacking += [f"f16_tables[{p}]" for p in TABLES16 if p not in doc["f16_tables"]]
    lacking += [f"f32[{op}] hypothesis {h}" for op, h in HYPOTHESIS.items() if op not in INFERRED and
                h not in [x["hyp"] for x in doc["f32"].get(op, {}).get("hypotheses", [])]]
    if lacking:
        raise ValueError(f"it has no {lacking[0]}")


@lru_cache(maxsize=None)
def table(op, name):
    """A MUFU table (uint32 bits), decoded and checked against its recorded SHA-256. Decoding
    (bz2 and the SHA-256) takes ~0.5 s a table, so the decoded table is kept in
    files.cache_dir("sfu") under its SHA-256 and later processes read that file: only a regular
    .npy file of exactly this table's dtype and length is taken (as the lowering cache takes
    only a file of its own key and format); anything else there is decoded again and rewritten."""
    key = f"{op}.{name}"
    meta = measured()["tables"][key]
    cached = _cached_table(meta)
    if cached is not None:
        return cached
    blobs = {k: P.load(DATA / f"{key}.{k}.bz2") for k in ("ref", "err")}
    with P.reading(DATA / f"{key}.{{ref,err}}.bz2"):      # a shell restores both with that spelling
        t = sfu_tables.decode(meta, blobs)
    _keep_table(meta, t)
    return t


def _table_file(meta):
    return cache_dir("sfu") / f"{meta['sha256']}.npy"


def _cached_table(meta):
    def accept(dtype, shape, nbytes):
        if dtype != np.uint32 or shape != (meta["n"],):
            raise LayoutsimError("not this table")
    try:
        f = _table_file(meta)
        t = None if f.is_symlink() else read_npy(f, "MUFU table cache", 4 * meta["n"], accept)
    except (OSError, ValueError, LayoutsimError):
        return None
    # its SHA-256 again (~0.03 s; the bz2 decoding it spares is ~0.5 s): a damaged cache file is
    # decoded again, never used
    return t if t is not None and sfu_tables.sha256(t) == meta["sha256"] else None


def _keep_table(meta, t):
    """Best effort: an unwritable cache only costs the next process the decoding."""
    try:
        f = _table_file(meta)
        f.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(f, lambda out: np.save(out, np.ascontiguousarray(t, np.uint32)), "MUFU table cache")
    except (OSError, LayoutsimError):
        pass


@lru_cache(maxsize=None)
def table16(ptx):
    """The H200's result (uint16 bits) of a 16-bit PTX instruction for every input."""
    path = DATA / "f16.npz"
    want = measured()["f16_tables"][ptx]["sha256"]
    with P.reading(path):
        t = read_npz(path, "layoutsim data file", max_bytes=1 << 24)[ptx]
        if sfu_tables.sha256(t.astype(np.uint32)) != want:
            raise ValueError(f"{ptx} does not match its recorded SHA-256")
    return t


# ---- f32 helpers (raw bits in uint32 arrays) ----------------------------------------------------
def _f32(bits):
    return bits.view(np.float32)


def _ftz_bits(f):
    """float32 values -> bits, subnormals flushed to zeros of their sign."""
    f = np.asarray(f, np.float32)
    tiny = np.abs(f) < _TINY
    if not np.count_nonzero(tiny):       # none to flush (what the where below gives then)
        return f.astype(np.float32).view(np.uint32)
    return np.where(tiny, np.copysign(np.float32(0), f), f).astype(np.float32).view(np.uint32)


def _scaled(t, e):
    """Table entries (bits) times 2^e, rounded to nearest, subnormal results flushed."""
    with np.errstate(over="ignore", under="ignore"):
        return _ftz_bits(np.ldexp(_f32(t).astype(np.float64), e).astype(np.float32))


def _round_toward_zero(v):
    """float64 -> float32 rounded toward zero (as bits)."""
    with np.errstate(over="ignore", invalid="ignore"):
        f = v.astype(np.float32)
        over = np.abs(f.astype(np.float64)) > np.abs(v)
        f = np.where(over, np.nextafter(f, np.float32(0)), f)
    return f.astype(np.float32).view(np.uint32)


def _fields(u, exponent=True):
    """The sign, class, and (exponent=True) unbiased exponent and mantissa of f32 bits."""
    mag = u & _MAG
    s = dict(neg=(u >> 31).astype(bool), nan=mag > _INF, inf=mag == _INF, small=mag < 0x00800000)
    if exponent:
        s.update(e=(mag >> 23).astype(np.int64) - 127, m=(u & 0x7FFFFF).astype(np.int64))
    return s


# ---- the f32 MUFU primitives (the .ftz PTX forms) -----------------------------------------------
# mufu_ex2 and mufu_rcp select among their cases with np.where only where some lane is in the case
# (the executor calls them on every thread of a step, which mostly holds ordinary numbers): the
# same bits as selecting everywhere
def _when(c, x, y):
    return np.where(c, x, y) if np.count_nonzero(c) else y


def _by_sign(neg, x, y):
    """np.where(neg, x(), y()), computing only the side some lane takes."""
    n = np.count_nonzero(neg)
    if n == neg.size:
        return x()
    return np.where(neg, x(), y()) if n else y()


def _compiled(u):
    """sfu_kernel, for bits u it takes (1-D, C-contiguous uint32) in a process that has numba up
    already (importing it costs about 0.5 s, which a caller without a compiled MMA never pays);
    None: the numpy forms below (the reference)."""
    if "numba" not in sys.modules or type(u) is not np.ndarray or u.ndim != 1 or u.dtype != np.uint32 \
            or not u.flags.c_contiguous:
        return None
    from . import sfu_kernel
    return sfu_kernel


def mufu_ex2(u):
    k = _compiled(u)
    if k is not None:
        return k.ex2(u, table("ex2", "T0_F23"), table("ex2", "T1_F23"), _QNAN)
    s = _fields(u, exponent=False)
    neg = s["neg"]
    a = _when(s["small"], 0.0, np.abs(_f32(u).astype(np.float64)))
    big = ~s["nan"] & (a > 4096.0)
    q = np.trunc(_when(big | s["nan"], 0.0, a) * 2.0 ** 23).astype(np.int64)
    i, k = q >> 23, q & ((1 << 23) - 1)
    t = _by_sign(neg, lambda: table("ex2", "T1_F23")[k], lambda: table("ex2", "T0_F23")[k])
    r = _scaled(t, _by_sign(neg, lambda: -i, lambda: i))
    r = _when(big, np.where(neg, np.uint32(0), _INF), r)
    r = _when(s["inf"], np.where(neg, np.uint32(0), _INF), r)
    return _when(s["nan"], _QNAN, r).astype(np.uint32)


def mufu_rcp(u):
    k = _compiled(u)
    if k is not None:
        return k.rcp(u, table("rcp", "T0"), _QNAN)
    s = _fields(u)
    neg = s["neg"]
    r = _scaled(table("rcp", "T0")[s["m"]], -s["e"]) | np.where(neg, _SIGN, np.uint32(0))
    r = _when(s["small"], np.where(neg, _NEG_INF, _INF), r)
    r = _when(s["inf"], np.where(neg, _NEG_ZERO, np.uint32(0)), r)
    return _when(s["nan"], _QNAN, r).astype(np.uint32)


def _root(u, op):
    s = _fields(u)
    p = s["e"] & 1
    h = (s["e"] - p) // 2
    t = np.where(p == 1, table(op, "T1")[s["m"]], table(op, "T0")[s["m"]])
    r = _scaled(t, -h if op == "rsqrt" else h)
    if op == "rsqrt":
        r = np.where(s["inf"], np.uint32(0), r)
        r = np.where(s["small"], np.where(s["neg"], _NEG_INF, _INF), r)
    else:
        r = np.where(s["inf"], _INF, r)
        r = np.where(s["small"], np.where(s["neg"], _NEG_ZERO, np.uint32(0)), r)
    return np.where(s["nan"] | (s["neg"] & ~s["small"]), _QNAN, r).astype(np.uint32)


def mufu_rsqrt(u):
    return _root(u, "rsqrt")


def mufu_sqrt(u):
    return _root(u, "sqrt")


def mufu_lg2(u):
    """Not proven exact: round_toward_zero(e + L[m] + d), L read from the tables at e = 0 ([1, 2))
    and, where that value is >= 0.5, at e = -1 ([0.5, 1), finer there), d an infinitesimal (INFERRED
    says why this is believed; without d, hypothesis 1, it differed from the H200 on 12,463,768 of
    the 2^32 inputs)."""
    s = _fields(u)
    t0 = _f32(table("lg2", "T0")[s["m"]]).astype(np.float64)
    t1 = _f32(table("lg2", "T1")[s["m"]]).astype(np.float64)
    hi = t0 >= 0.5
    v = s["e"] + np.where(hi, t1 + 1.0, t0)             # exact in float64
    r = _round_toward_zero(v)
    # hypothesis 4: rz of v plus an infinitesimal, negative where L came from T1 (T1 + 1 is L
    # rounded up: T1 was rounded toward zero), positive for x < 1; it matters only where v is a
    # float32 exactly, and then it moves the result one step toward zero when it points there
    nudge = np.where(hi, -1, 0) + np.where(s["e"] < 0, 1, 0)
    on_grid = _f32(r).astype(np.float64) == v
    toward_zero = ((v > 0) & (nudge < 0)) | ((v < 0) & (nudge > 0))
    r = np.where(on_grid & toward_zero, r - np.uint32(1), r)     # |r| one ulp smaller (r != 0 there)
    r = np.where(s["inf"], _INF, r)
    r = np.where(s["small"], _NEG_INF, r)
    return np.where(s["nan"] | (s["neg"] & ~s["small"]), _QNAN, r).astype(np.uint32)


def _correctly_rounded(fn, ftz):
    """A stand-in for a MUFU without a model: the correctly rounded value (f64 reference, nearest;
    with ftz, subnormal inputs and results are zeros of their sign, as the error was measured)."""
    def f(u):
        s = _fields(u)
        x = _f32(u).astype(np.float64)
        if ftz:
            x = np.where(s["small"], np.where(s["neg"], -0.0, 0.0), x)
        with np.errstate(all="ignore"):
            r = fn(x).astype(np.float32)
        r = _ftz_bits(r) if ftz else r.view(np.uint32)
        return np.where(s["nan"] | np.isnan(_f32(r)), _QNAN, r).astype(np.uint32)
    return f


def _sin_2pi(t):
    with np.errstate(invalid="ignore"):
        return np.sin(2 * np.pi * (t - np.round(t)))     # t - round(t) is exact: reduce first


def _cos_2pi(t):
    with np.errstate(invalid="ignore"):
        return np.cos(2 * np.pi * (t - np.round(t)))


mufu_sin = _correctly_rounded(_sin_2pi, ftz=True)      # MUFU.SIN(t) approximates sin(2 pi t)
mufu_cos = _correctly_rounded(_cos_2pi, ftz=True)
# tanh.approx.f32 keeps subnormals (PTX ISA; the H200 returned x itself for subnormal x in every
# recorded sample), and so does the correctly rounded tanh
mufu_tanh = _correctly_rounded(np.tanh, ftz=False)


# ---- the PTX forms without .ftz: the SASS sequence around the MUFU ---------------------------
def _ex2_full(u):
    """FSETP.GEU x, -126; below: x * 0.5, MUFU.EX2, r * r (the subnormal results a bare MUFU flushes)."""
    x = _f32(u)
    with np.errstate(invalid="ignore"):
        big = (x >= np.float32(-126)) | np.isnan(x)
    if np.count_nonzero(big) == big.size:     # no result the bare MUFU would flush: MUFU.EX2 alone
        return mufu_ex2(x.view(np.uint32)).astype(np.uint32)
    r = mufu_ex2(np.where(big, x, x * np.float32(0.5)).astype(np.float32).view(np.uint32))
    rf = _f32(r)
    return np.where(big, r, (rf * rf).view(np.uint32)).astype(np.uint32)


def _rcp_full(u):
    """|x| < 2^-126: x * 2^24 first and the result * 2^24; |x| > 2^126: * 0.25 both times."""
    x = _f32(u)
    a = np.abs(x)
    with np.errstate(invalid="ignore"):
        s = np.where((a >= _TINY) | np.isnan(a), np.float32(1), np.float32(2.0 ** 24))
        s = np.where(a > np.float32(2.0 ** 126), np.float32(0.25), s).astype(np.float32)
    with np.errstate(over="ignore"):
        r = _f32(mufu_rcp((x * s).astype(np.float32).view(np.uint32)))
        return (s * r).astype(np.float32).view(np.uint32)


def _rescaled(mufu, undo):
    """rsqrt/lg2/sqrt: |x| < 2^-126: MUFU(x * 2^24), then `undo` on the result."""
    def f(u):
        x = _f32(u)
        a = np.abs(x)
        with np.errstate(invalid="ignore"):
            normal = (a >= _TINY) | np.isnan(a)
        r = mufu(np.where(normal, x, x * np.float32(2.0 ** 24)).astype(np.float32).view(np.uint32))
        return np.where(normal, r, undo(_f32(r)).astype(np.float32).view(np.uint32)).astype(np.uint32)
    return f


def _sincos(mufu):
    """sin/cos.approx (with or without .ftz: the same SASS): MUFU(FMUL.RZ(x, 0x3e22f983))."""
    def f(u):
        with np.errstate(over="ignore", invalid="ignore"):
            t = _round_toward_zero(_f32(u).astype(np.float64) * np.float64(_INV_2PI))
        return mufu(t)
    return f


# ---- 16-bit forms -------------------------------------------------------------------------------
def _lookup16(ptx):
    def f(u):
        return table16(ptx)[u.astype(np.int64)]
    return f


def _pairs(ptx16):
    def f(u):
        t = table16(ptx16)
        lo, hi = t[(u & 0xFFFF).astype(np.int64)], t[(u >> 16).astype(np.int64)]
        return (lo.astype(np.uint32) | (hi.astype(np.uint32) << 16)).astype(np.uint32)
    return f


# ---- the registry -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Op:
    ptx: str
    fn: object
    exact: bool
    how: str
    primitive: str          # measured.json key: "f32.<op>", "f16.<ptx>" or "f16x2.<ptx>"
    dtype: str              # the raw bits it takes and gives

    def __call__(self, bits):
        with np.errstate(all="ignore"):          # NaN and infinite inputs are inputs too
            return self.fn(bits)


def _registry():
    ops = {}

    def add(ptx, fn, exact, how, primitive, dtype="uint32"):
        ops[ptx] = Op(ptx, fn, exact, how, primitive, dtype)

    bare = "a bare MUFU on sm_90"
    full = "the SASS sequence ptxas 13.0 emits (measured equal to it over all 2^32 inputs) around "
    for op, mufu in (("ex2", mufu_ex2), ("rcp", mufu_rcp), ("rsqrt", mufu_rsqrt), ("sqrt", mufu_sqrt),
                     ("lg2", mufu_lg2)):
        exact = op != "lg2"
        what = "the table model" if exact else "the table model (not proven exact)"
        add(f"{op}.approx.ftz.f32", mufu, exact, f"{bare}: {what} of MUFU.{op.upper()}", f"f32.{op}")
    add("ex2.approx.f32", _ex2_full, True, full + "the MUFU.EX2 model", "f32.ex2")
    add("rcp.approx.f32", _rcp_full, True, full + "the MUFU.RCP model", "f32.rcp")
    add("rsqrt.approx.f32", _rescaled(mufu_rsqrt, lambda r: r * np.float32(4096)), True,
        full + "the MUFU.RSQ model", "f32.rsqrt")
    add("sqrt.approx.f32", _rescaled(mufu_sqrt, lambda r: r * np.float32(2.0 ** -12)), True,
        full + "the MUFU.SQRT model", "f32.sqrt")
    add("lg2.approx.f32", _rescaled(mufu_lg2, lambda r: r + np.float32(-24)), False,
        full + "the MUFU.LG2 model (not proven exact)", "f32.lg2")
    for op, mufu in (("sin", mufu_sin), ("cos", mufu_cos)):
        for ptx in (f"{op}.approx.f32", f"{op}.approx.ftz.f32"):
            add(ptx, _sincos(mufu), False, f"MUFU.{op.upper()}(FMUL.RZ(x, 1/(2 pi))) (measured equal over all "
                f"2^32 inputs); MUFU.{op.upper()} itself has no model: the correctly rounded "
                f"{op}(2 pi t) stands in", f"f32.{op}")
    add("tanh.approx.f32", mufu_tanh, False, "MUFU.TANH has no model: the correctly rounded tanh stands in",
        "f32.tanh")
    for ptx in TABLES16:
        add(ptx, _lookup16(ptx), True, "the H200's result for every 16-bit input (stored)", f"f16.{ptx}", "uint16")
        add(ptx + "x2", _pairs(ptx), True, f"{ptx} on each half (measured equal over all 2^32 pairs)",
            f"f16x2.{ptx}x2")
    return ops


OPS = _registry()


def names():
    return sorted(OPS)


def _op(ptx):
    if ptx not in OPS:
        raise LayoutsimError(f"sfu: no model of {ptx!r}; modelled: {', '.join(names())}")
    return OPS[ptx]


def evaluate(ptx, bits):
    """(result bits, exact) of a PTX approximate instruction on raw input bits: uint32 for .f32
    and the x2 forms, uint16 for .f16/.bf16 (any integer array of that width; any shape).
    exact is False where the result is a model not proven exact (see info())."""
    op = _op(ptx)
    a = np.asarray(bits)
    want = np.dtype(op.dtype)
    if a.dtype.kind not in "ui" or a.dtype.itemsize != want.itemsize:
        raise LayoutsimError(f"sfu: {ptx} takes raw bits as {want.name} (or int{8 * want.itemsize}), "
                             f"got {a.dtype.name}")
    u = np.ascontiguousarray(a).view(want)
    return op(u.reshape(-1)).reshape(a.shape), op.exact


def model(ptx, exact_only=True):
    """The Op (callable: bits -> bits, with .exact and .how) for a PTX instruction, or None where
    there is none; with exact_only (the default) only models proven exact over every input."""
    op = OPS.get(ptx)
    return op if op is not None and (op.exact or not exact_only) else None


def info(ptx):
    """What is known about a PTX instruction's model: exact, how, and what the H200 run measured
    (mismatches of the model over all 2^32 inputs where not exact; the MUFU's error against the
    correctly rounded value)."""
    op = _op(ptx)
    kind, _, name = op.primitive.partition(".")
    m = measured()
    out = {"ptx": ptx, "exact": op.exact, "how": op.how, "arch": "sm_90", "source": m["source"]}
    if kind == "f32":
        rec = m["f32"][name]
        out["error_vs_correctly_rounded"] = rec["error_vs_correctly_rounded"]
        if name in INFERRED:
            out["model_evidence"] = INFERRED[name]
        elif name in HYPOTHESIS:
            hyp = next(h for h in rec["hypotheses"] if h["hyp"] == HYPOTHESIS[name])
            out["model_mismatches"] = {"inputs": 1 << 32, "mismatches": hyp["mismatches"], "what": hyp["what"]}
    elif kind == "f16x2":
        out["x2_mismatches"] = m["f16x2"][name]["mismatches"]
    if not op.exact:
        out["label"] = "not proven exact"
    return out
