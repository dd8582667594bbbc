"""numpy references of the Triton tutorial cases (gpu_check/triton_corpus/cases.py, tut_*): what each
launch computes, from the case's inputs, within a tolerance (the GPU decides the bits; these say the
model's outputs are the right computation). check(case, inputs, finals) -> [problem lines]."""
import numpy as np

from gpu_check.triton_corpus import cases as C

LOG2E = 1.4426950408889634


def f32(a):
    return np.asarray(a).astype(np.float32)


def _softmax_rows(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _matmul(a, b, leaky=False):
    c = f32(a).astype(np.float64) @ f32(b).astype(np.float64)
    return np.where(c >= 0, c, 0.01 * c) if leaky else c


def _attention(q, k, v, sm_scale, causal):
    """(out, M): M the log2-sum-exp rows the kernel stores (log2 units)."""
    s = np.einsum("zhmd,zhnd->zhmn", f32(q).astype(np.float64), f32(k).astype(np.float64)) * sm_scale
    if causal:
        n = s.shape[-1]
        s = np.where(np.tril(np.ones((n, n), bool)), s, -np.inf)
    mx = s.max(axis=-1, keepdims=True)
    e = np.exp(s - mx)
    lse = (mx[..., 0] + np.log(e.sum(axis=-1))) * LOG2E
    return np.einsum("zhmn,zhnd->zhmd", e / e.sum(axis=-1, keepdims=True), f32(v)), lse


def _attn_bwd(q, k, v, sm_scale, do, m, d):
    """The backward kernel's own formulas (K pre-scaled by sm_scale / ln 2, M and D given), causal."""
    q, k, v, do = (f32(x).astype(np.float64) for x in (q, k, v, do))
    n = q.shape[2]
    p = np.exp2(np.einsum("zhmd,zhnd->zhmn", q, k) - m[..., None])
    p = np.where(np.tril(np.ones((n, n), bool)), p, 0.0)
    dv = np.einsum("zhmn,zhmd->zhnd", p, do)
    ds = p * (np.einsum("zhmd,zhnd->zhmn", do, v) - d[..., None])
    dk = np.einsum("zhmn,zhmd->zhnd", ds, q) * sm_scale
    dq = np.einsum("zhmn,zhnd->zhmd", ds, k) * np.log(2.0)
    return dq, dk, dv


def _grouped(case, inputs, finals, groups, b_transposed):
    out = []
    given = C.grouped_views(groups, inputs[3], b_transposed=b_transposed)
    got = C.grouped_views(groups, finals["arg3"], b_transposed=b_transposed)
    for g, ((a, b, _), (_, _, c)) in enumerate(zip(given, got)):
        want = _matmul(a, b.T if b_transposed else b)
        out += _close(f"{case} group {g} C", c, want, 0.05, 1e-2)
    return out


def _close(what, got, want, atol, rtol):
    got, want = f32(got).astype(np.float64), np.asarray(want, np.float64)
    if got.shape != want.shape:
        return [f"{what}: shape {got.shape}, want {want.shape}"]
    bad = ~(np.abs(got - want) <= atol + rtol * np.abs(want))
    if bad.any():
        i = np.unravel_index(np.flatnonzero(bad)[0], got.shape)
        return [f"{what}: {int(bad.sum())} of {got.size} outside {atol} + {rtol}|ref|, first at {tuple(map(int, i))}: "
                f"{got[i]!r} vs {want[i]!r}"]
    return []


def _seeded_dropout(inputs, finals):
    x, out, p = f32(inputs[0]), f32(finals["arg1"]), inputs[3]
    kept = out != 0
    problems = _close("tut_seeded_dropout kept", out[kept], x[kept] / (1 - p), 1e-6, 1e-6)
    if not 0.4 < kept.mean() < 0.6:
        problems.append(f"tut_seeded_dropout: {kept.mean():.3f} of the elements kept, p = {p}")
    return problems


def _layer_norm_fwd(i, f):
    x = f32(i[0]).astype(np.float64)
    mean, var = x.mean(axis=1), x.var(axis=1)
    rstd = 1 / np.sqrt(var + i[8])
    y = (x - mean[:, None]) * rstd[:, None] * f32(i[2]) + f32(i[3])
    return (_close("y", f["arg1"], y, 2e-2, 1e-2) + _close("mean", f["arg4"], mean, 1e-4, 1e-4)
            + _close("rstd", f["arg5"], rstd, 1e-4, 1e-3))


def _attn_fwd(i, f, causal, tol):
    o, lse = _attention(i[0], i[1], np.swapaxes(f32(i[2]), 2, 3) if i[16] == 1 else i[2], i[3], causal)
    return _close("out", f["arg5"], o, *tol) + _close("M", f["arg4"], lse, 1e-2, 1e-3)


def _attn_fwd_fp8(i, f, block_m=64, block_n=32):
    """The kernel's online softmax (not causal) with p rounded to e5m2 before p @ v and an e5m2 output,
    block by block as the kernel runs it: the model must be within one e5m2 step of it (the f32 sums'
    order decides that step), but for a few rows where a p lies near an e5m2 rounding midpoint: the
    tensor core's fp8 q k^T is not exact (H100's fp8 accumulation), so such a p may round the other
    way, which moves that row by a quarter of p v / l (at most 0.1% of the elements, each within 0.25)."""
    import ml_dtypes
    e5 = ml_dtypes.float8_e5m2
    q, k, v = f32(i[0]), f32(i[1]), np.swapaxes(f32(i[2]), 2, 3)
    scale = np.float32(i[3]) * np.float32(1.44269504)
    out = np.zeros(q.shape, np.float32)
    for z, h in np.ndindex(q.shape[:2]):
        for m0 in range(0, q.shape[2], block_m):
            m_i = np.full(block_m, -np.inf, np.float32)
            l_i = np.ones(block_m, np.float32)
            acc = np.zeros((block_m, q.shape[3]), np.float32)
            for n0 in range(0, k.shape[2], block_n):
                qk = q[z, h, m0:m0 + block_m] @ k[z, h, n0:n0 + block_n].T
                m_ij = np.maximum(m_i, qk.max(1) * scale)
                p = np.exp2(qk * scale - m_ij[:, None])
                alpha = np.exp2(m_i - m_ij)
                l_i = l_i * alpha + p.sum(1)
                acc = acc * alpha[:, None] + p.astype(e5).astype(np.float32) @ v[z, h, n0:n0 + block_n]
                m_i = m_ij
            out[z, h, m0:m0 + block_m] = (acc / l_i[:, None]).astype(e5).astype(np.float32)
    _, lse = _attention(i[0], i[1], np.swapaxes(f32(i[2]), 2, 3), i[3], False)
    got = f32(f["arg5"])
    far = np.abs(got - out) > 2e-3 + 0.26 * np.abs(out)
    problems = _close("out", got, out, 0.25, 0.26)
    if far.sum() > got.size // 1000:
        problems.append(f"out: {int(far.sum())} of {got.size} more than one e5m2 step from the emulation")
    return problems + _close("M", f["arg4"], lse, 1e-2, 1e-3)


def _attn_bwd_check(i, f):
    dq, dk, dv = _attn_bwd(i[0], i[1], i[2], i[3], i[4], i[8], i[9])
    return (_close("dq", f["arg5"], dq, 2e-2, 2e-2) + _close("dk", f["arg6"], dk, 2e-2, 2e-2)
            + _close("dv", f["arg7"], dv, 2e-2, 2e-2))


CHECKS = {
    "tut_vector_add": lambda i, f: _close("out", f["arg2"], f32(i[0]) + f32(i[1]), 0, 0),
    "tut_fused_softmax": lambda i, f: _close("out", f["arg0"], _softmax_rows(f32(i[1]).astype(np.float64)), 1e-6, 1e-4),
    "tut_matmul_f16": lambda i, f: _close("C", f["arg2"], _matmul(i[0], i[1]), 0.05, 1e-2),
    "tut_matmul_leaky_relu": lambda i, f: _close("C", f["arg2"], _matmul(i[0], i[1], leaky=True), 0.05, 1e-2),
    "tut_matmul_fp8e5m2": lambda i, f: _close("C", f["arg2"], _matmul(i[0], f32(i[1]).T), 0.1, 1e-2),
    "tut_matmul_fp8e4m3": lambda i, f: _close("C", f["arg2"], _matmul(i[0], f32(i[1]).T), 0.1, 1e-2),
    "tut_dropout": lambda i, f: _close("out", f["arg2"], np.where(i[1] != 0, f32(i[0]) / (1 - i[4]), 0), 1e-6, 1e-6),
    "tut_seeded_dropout": _seeded_dropout,
    "tut_layer_norm_fwd": _layer_norm_fwd,
    "tut_layer_norm_bwd_dwdb": lambda i, f: (_close("dw", f["arg2"], f32(i[0]).sum(axis=0), 1e-2, 1e-2)
                                              + _close("db", f["arg3"], f32(i[1]).sum(axis=0), 1e-2, 1e-2)),
    "tut_attn_fwd": lambda i, f: _attn_fwd(i, f, True, (1e-2, 1e-2)),
    "tut_attn_fwd_fp8": _attn_fwd_fp8,
    "tut_attn_bwd_preprocess": lambda i, f: _close("delta", f["arg2"], (f32(i[0]) * f32(i[1])).sum(axis=-1),
                                                   1e-4, 1e-4),
    "tut_attn_bwd": _attn_bwd_check,
    "tut_grouped_gemm": lambda i, f: _grouped("tut_grouped_gemm", i, f, C.GROUPS, False),
    "tut_grouped_gemm_tma": lambda i, f: _grouped("tut_grouped_gemm_tma", i, f, C.GROUPS_TMA, True),
    "tut_matmul_persistent": lambda i, f: _close("C", f["arg2"], _matmul(i[0], f32(i[1]).T), 0.05, 1e-2),
    # e4m3 out: three mantissa bits
    "tut_matmul_persistent_fp8": lambda i, f: _close("C", f["arg2"], _matmul(i[0], f32(i[1]).T), 0.25, 0.07),
    "tut_matmul_descriptor_persistent": lambda i, f: _close("C", f["arg2"], _matmul(i[0], f32(i[1]).T), 0.05, 1e-2),
    "tut_matmul_descriptor_persistent_fp8": lambda i, f: _close("C", f["arg2"], _matmul(i[0], f32(i[1]).T),
                                                                0.25, 0.07),
}


def check(case, inputs, finals):
    """[problem lines] of a case's final arrays against its reference; [] when none is defined."""
    fn = CHECKS.get(case)
    return [f"{case}: {p}" for p in fn(inputs, finals)] if fn else []
