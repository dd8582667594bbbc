"""Block-scaled fused dot products: the arithmetic of Blackwell's block-scaled MMAs (tcgen05.mma
.kind::mxf8f6f4 / mxf4 / mxf4nvf4, sm_120 mma.sync .block_scale) and of FP6/FP4 inputs.

The model is MMA-Sim's (Xu et al., "MMA-Sim: Bit-Accurate Reference Model of Tensor Cores and
Matrix Cores", arXiv:2511.10909; its authors validated it bitwise on B200 and RTX Blackwell),
written here from the paper's description on exact values:

- ST-FDPA (scaled truncated fused dot product, per block of L products and the accumulator):
  every term is a product a*b*sa*sb; its alignment exponent is the sum of its factors' exponents
  (each factor normalised to a significand in [1, 2), a subnormal held at its format's smallest
  exponent, a zero product at e_zero); the largest exponent E of the block and of C sets the
  grid: each term is truncated toward zero to F bits below E, the truncated terms are summed
  exactly, and the sum is rounded once: toward zero to f32 (RZ-FP32, with overflow to Inf) or
  to nearest even to f16. Unit scales make it the plain T-FDPA that FP6/FP4 inputs take.
- GST-FDPA (group-scaled, the K=64 FP4 forms): the products of each group of G consecutive k
  are summed exactly first; a group's alignment exponent is its scales' exponent sum (e_zero
  when its products are all zero or a scale is zero); then as above.

A NaN anywhere gives the canonical NaN, Inf * 0 and +Inf with -Inf too; a zero result is +0.
`blocks` runs one instruction's K in blocks of L, each block's rounded result the next C.
"""
import numpy as np

from ..formats import canonical_nan, decode, encode, get_format


def _exponents(x, fmt):
    """Normalised exponents: floor(log2 |x|), held at the format's smallest normal exponent
    (E8M0: 2**-127 is its own exponent); zeros and non-finite values get that smallest one."""
    f = get_format(fmt)
    emin = -127 if f.specials == "e8m0" else f.emin
    fin = np.isfinite(x) & (x != 0)
    e = np.frexp(np.where(fin, x, 1.0))[1].astype(np.int64) - 1
    return np.where(fin, np.maximum(e, emin), emin)


def _round(v, d):
    """Round exact float64 values to d's raw bits (RZ-FP32 with overflow to Inf, RNE-F16),
    NaN canonical, zero +0."""
    v = np.where(v == 0, 0.0, v)
    nan = np.isnan(v)
    if d == "f32":
        big = np.abs(v) >= 2.0 ** 128
        raw = encode("f32", np.where(nan | big, 0.0, v), "rz")
        raw = np.where(big, np.where(v > 0, 0x7F800000, 0xFF800000).astype(np.uint32), raw)
    else:
        raw = encode(d, np.where(nan, 0.0, v), "rn")
    return np.where(nan, np.array(canonical_nan(d)).astype(raw.dtype), raw)


def _fused(values, exps, c, c_fmt, F, e_zero, zero):
    """One block: terms `values` (..., T) with alignment exponents `exps`, accumulator values
    `c` (...); zero[..., t]: the term counts at e_zero. Exact float64 sum of the truncated
    terms, scaled back (the caller rounds)."""
    e = np.where(zero, e_zero, exps)
    ec = np.where(c == 0, e_zero, _exponents(c, c_fmt))
    emax = np.maximum(e.max(axis=-1), ec)
    scale = np.ldexp(1.0, (F - emax).astype(np.int32))
    with np.errstate(invalid="ignore", over="ignore"):
        terms = np.trunc(values * scale[..., None])
        cterm = np.trunc(c * scale)
        total = terms.sum(axis=-1) + cterm
        return total * np.ldexp(1.0, (emax - F).astype(np.int32))


def st_block(a, b, sa, sb, c, fmts, F, e_zero, d):
    """ST-FDPA of one block. a, b: exact values (..., L); sa, sb: scale values (...) (1.0 for
    none); c: accumulator values (...). fmts: (a, b, scale_a, scale_b, c) formats."""
    fa, fb, fsa, fsb, fc = fmts
    with np.errstate(invalid="ignore", over="ignore"):
        values = a * b * (sa * sb)[..., None]
        zero = (a * b == 0) | (sa * sb == 0)[..., None]
    exps = (_exponents(a, fa) + _exponents(b, fb)
            + (_exponents(sa, fsa) + _exponents(sb, fsb))[..., None])
    return _round(_fused(values, exps, c, fc, F, e_zero, zero & ~np.isnan(values)), d)


def gst_block(a, b, sa, sb, c, fmts, G, F, e_zero, d):
    """GST-FDPA of one block: a, b (..., L); sa, sb (..., L // G) the scale of each group."""
    _, _, fsa, fsb, fc = fmts
    p = (a * b).reshape(a.shape[:-1] + (-1, G))
    allzero = (p == 0).all(axis=-1)
    with np.errstate(invalid="ignore", over="ignore"):
        values = p.sum(axis=-1) * sa * sb
    exps = _exponents(sa, fsa) + _exponents(sb, fsb)
    zero = (allzero | (sa * sb == 0)) & ~np.isnan(values)
    return _round(_fused(values, exps, c, fc, F, e_zero, zero), d)


def dot(a_raw, b_raw, c_raw, sa_raw, sb_raw, spec):
    """D raw bits (...,) of a[..., K] . b[..., K] + c under `spec` (a dict: fmts a, b, c, d,
    scale (or None), block (K elements per scale), L (products per FDPA block), G (group; 0:
    ST-FDPA), F, e_zero). sa_raw, sb_raw (..., K // block) or None."""
    fa, fb, fc, d, fs = spec["a"], spec["b"], spec["c"], spec["d"], spec["scale"]
    a, b = decode(fa, a_raw), decode(fb, b_raw)
    c = decode(fc, c_raw)
    K = a.shape[-1]
    if fs is None:
        sa = sb = np.ones(a.shape[:-1] + (1,))
        block, fsx = K, "f32"
    else:
        sa, sb = decode(fs, sa_raw), decode(fs, sb_raw)
        block, fsx = spec["block"], fs
    L, G = spec["L"], spec["G"]
    out = c_raw
    for k0 in range(0, K, L):
        cv = decode(d if k0 else fc, out)
        ak, bk = a[..., k0:k0 + L], b[..., k0:k0 + L]
        s0 = k0 // block
        if G:
            per = block // G                 # groups per scale
            sak = np.repeat(sa[..., s0:(k0 + L) // block], per, axis=-1)
            sbk = np.repeat(sb[..., s0:(k0 + L) // block], per, axis=-1)
            out = gst_block(ak, bk, sak, sbk, cv, (fa, fb, fsx, fsx, d if k0 else fc), G,
                            spec["F"], spec["e_zero"], d)
        else:
            if L > block:
                raise AssertionError("an ST-FDPA block spans one scale")
            out = st_block(ak, bk, sa[..., s0], sb[..., s0], cv, (fa, fb, fsx, fsx, d if k0 else fc),
                           spec["F"], spec["e_zero"], d)
    return out
