"""ptxas's multiply-add contractions (ptx/contract.py) and the fidelity line (ptx/fidelity.py).

The kernels are this project's own PTX. What ptxas does with each pair is read from its SASS here
(ptxas + nvdisasm, skipped without them); the expected values are the executor's own fma.rn
(FFMA/DFMA: PTX ISA 9.7.3.6, one rounding) and mul.rn + add.rn (two roundings, FMUL + FADD)."""
import numpy as np
import pytest

from layoutsim.ptx import lowering as L
from layoutsim.ptx import run, runner, sass

HEAD = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 po)
{
    .reg .f32 %f<8>;
    .reg .f64 %fd<8>;
    .reg .b32 %r<2>;
    .reg .b64 %rd<12>;
    ld.param.u64 %rd1, [pa];
    ld.param.u64 %rd2, [pb];
    ld.param.u64 %rd3, [pc];
    ld.param.u64 %rd4, [po];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd5, %r1, SIZE;
    add.s64 %rd6, %rd1, %rd5;
    add.s64 %rd7, %rd2, %rd5;
    add.s64 %rd8, %rd3, %rd5;
    add.s64 %rd9, %rd4, %rd5;
"""


def kernel(body, f64=False):
    t, r = ("f64", "%fd") if f64 else ("f32", "%f")
    loads = (f"    ld.global.{t} {r}1, [%rd6];\n    ld.global.{t} {r}2, [%rd7];\n"
             f"    ld.global.{t} {r}3, [%rd8];\n")
    return HEAD.replace("SIZE", "8" if f64 else "4") + loads + body.replace("T", t).replace("R", r) + "    ret;\n}\n"


# x*y + c: ptxas contracts (FFMA at the add's line, no FMUL)
FUSED = "    mul.T R4, R1, R2;\n    add.T R5, R4, R3;\n    st.global.T [%rd9], R5;\n"
# c - x*y
FUSED_SUB = "    mul.T R4, R1, R2;\n    sub.T R5, R3, R4;\n    st.global.T [%rd9], R5;\n"
# the product also stored: ptxas keeps FMUL + FADD
TWICE = ("    mul.T R4, R1, R2;\n    add.T R5, R4, R3;\n    st.global.T [%rd9], R5;\n"
         "    st.global.T [%rd9+128], R4;\n")
REF_FMA = "    fma.rn.T R5, R1, R2, R3;\n    st.global.T [%rd9], R5;\n"
REF_FMA_SUB = "    neg.T R6, R1;\n    fma.rn.T R5, R6, R2, R3;\n    st.global.T [%rd9], R5;\n"
REF_TWO = "    mul.rn.T R4, R1, R2;\n    add.rn.T R5, R4, R3;\n    st.global.T [%rd9], R5;\n"


def need_ptxas():
    if not (L.find_ptxas() and L.find_nvdisasm()):
        pytest.skip("needs ptxas and nvdisasm (pip install nvidia-cuda-nvdisasm)")


def inputs(dtype, n=32):
    rng = np.random.default_rng(7)
    a = rng.standard_normal(n).astype(dtype)
    b = rng.standard_normal(n).astype(dtype)
    c = (-(a.astype(np.float64) * b) * (1 + rng.standard_normal(n) * 1e-6)).astype(dtype)   # cancellation
    return a, b, c


def out(ptx, dtype):
    a, b, c = inputs(dtype)
    r = run(ptx, "k", (1, 1, 1), (32, 1, 1), [a, b, c, np.zeros(64, dtype)])
    return np.asarray(r.buffers[3])[:32].copy(), r


def fused_lines(ptx):
    prog = runner.program(ptx, "k", "sm_90")
    c = prog.contraction
    return c, {prog.steps[a].ins.line: prog.steps[m].ins.line for a, m in c.fused.items()}


@pytest.mark.parametrize("f64", [False, True])
@pytest.mark.parametrize("body, ref", [(FUSED, REF_FMA), (FUSED_SUB, REF_FMA_SUB)])
def test_a_pair_ptxas_contracted_is_one_fma(body, ref, f64):
    need_ptxas()
    ptx = kernel(body, f64)
    c, fused = fused_lines(ptx)
    lines = ptx.splitlines()
    mul = next(i for i, t in enumerate(lines, 1) if t.strip().startswith("mul.f"))
    add = next(i for i, t in enumerate(lines, 1) if t.strip().startswith(("add.f", "sub.f")))
    rows, _ = L.lower(ptx, "sm_90", keep=None)           # ptxas's own decision, read here
    sass_at = {r["line"]: r["sass"] for r in rows["k"]}
    assert ("DFMA" if f64 else "FFMA") in sass_at[add] and mul not in sass_at
    assert c.available and fused == {add: mul}
    dtype = np.float64 if f64 else np.float32
    got, r = out(ptx, dtype)
    want, _ = out(kernel(ref, f64), dtype)
    two, _ = out(kernel(REF_TWO if body == FUSED else REF_TWO.replace("add.rn.T R5, R4, R3", "sub.rn.T R5, R3, R4"),
                        f64), dtype)
    assert (got.view(np.uint64 if f64 else np.uint32) == want.view(np.uint64 if f64 else np.uint32)).all()
    assert (got != two).any()                                 # the inputs tell the two apart
    assert r.fidelity["contraction"] == {"available": True, "fused": 1, "note": None}
    assert r.fidelity["exact"] == r.warp_instructions and r.fidelity["unknown"] == 0


def test_a_product_used_twice_is_not_contracted():
    need_ptxas()
    ptx = kernel(TWICE)
    rows, _ = L.lower(ptx, "sm_90", keep=None)
    assert any("FMUL" in r["sass"] for r in rows["k"]) and any("FADD" in r["sass"] for r in rows["k"])
    c, fused = fused_lines(ptx)
    assert c.available and fused == {}
    got, _ = out(ptx, np.float32)
    want, _ = out(kernel(REF_TWO), np.float32)
    assert (got.view(np.uint32) == want.view(np.uint32)).all()


def test_without_ptxas_the_pair_is_unfused_and_the_fidelity_line_says_so(monkeypatch):
    monkeypatch.setattr(L, "find_ptxas", lambda: None)
    monkeypatch.setattr(sass, "_MEMO", {})
    monkeypatch.setattr(runner, "_PROGRAMS", {})
    ptx = kernel(FUSED)
    got, r = out(ptx, np.float32)
    want, _ = out(kernel(REF_TWO), np.float32)
    assert (got.view(np.uint32) == want.view(np.uint32)).all()
    f = r.fidelity
    assert not f["contraction"]["available"] and "ptxas" in f["contraction"]["note"]
    assert f["unknown"] == 1 and f["unknown_instructions"][0]["instruction"] == "add.f32"
    assert f["exact"] == r.warp_instructions - 1
    text = r.format()
    assert "fidelity: " in text and "not known, computed unfused" in text and "unknown: line" in text


def test_approximate_instructions_are_counted_with_their_measured_error():
    """sin.approx.f32 has no exact model (numerics/sfu.py): its executions are approximate, with
    the error the H200 run measured (layoutsim/numerics/data/sfu_sm90/measured.json)."""
    ptx = kernel("    sin.approx.f32 %f5, %f1;\n    st.global.f32 [%rd9], %f5;\n")
    _, r = out(ptx, np.float32)
    f = r.fidelity
    assert f["approximate"] == 1 and f["exact"] == r.warp_instructions - 1
    (a,) = f["approximate_instructions"]
    assert a["instruction"] == "sin.approx.f32" and "ulps" in a["error"] and "H200" in a["source"]
    assert "approximate: line" in r.format()


# q = a / b (div.full.f32: MUFU.RCP r of b, then FMUL a * r; numerics/sfu_div.py) + c: ptxas fuses
# the division's last FMUL with the add into one FFMA (Triton's layer norm: var + eps)
DIV_ADD = "    div.full.f32 %f4, %f1, %f2;\n    add.f32 %f5, %f4, %f3;\n    st.global.f32 [%rd9], %f5;\n"
REF_DIV_FMA = "    rcp.approx.ftz.f32 %f6, %f2;\n    fma.rn.f32 %f5, %f6, %f1, %f3;\n    st.global.f32 [%rd9], %f5;\n"
REF_DIV_TWO = "    div.full.f32 %f4, %f1, %f2;\n    add.rn.f32 %f5, %f4, %f3;\n    st.global.f32 [%rd9], %f5;\n"


def test_a_division_ptxas_fused_with_its_add_is_one_fma():
    need_ptxas()
    ptx = kernel(DIV_ADD)
    lines = ptx.splitlines()
    div = next(i for i, t in enumerate(lines, 1) if t.strip().startswith("div.full"))
    add = next(i for i, t in enumerate(lines, 1) if t.strip().startswith("add.f32"))
    rows, _ = L.lower(ptx, "sm_90", keep=None)
    sass_at = {r["line"]: r["sass"] for r in rows["k"]}
    assert "FFMA" in sass_at[add] and "FADD" not in sass_at[add]      # ptxas's own decision
    c, fused = fused_lines(ptx)
    assert fused == {add: div}
    rng = np.random.default_rng(11)
    a = rng.uniform(0.5, 2, 32).astype(np.float32)
    b = rng.uniform(0.5, 2, 32).astype(np.float32)        # normal divisors: div.full scales nothing
    c_ = (-(a.astype(np.float64) / b) * (1 + rng.standard_normal(32) * 1e-6)).astype(np.float32)   # cancellation

    def go(text):
        r = run(text, "k", (1, 1, 1), (32, 1, 1), [a, b, c_, np.zeros(64, np.float32)])
        return np.asarray(r.buffers[3])[:32].view(np.uint32).copy(), r
    got, r = go(ptx)
    want, _ = go(kernel(REF_DIV_FMA))          # MUFU.RCP (rcp.approx.ftz for normal b) and one rounding
    two, _ = go(kernel(REF_DIV_TWO))
    assert (got == want).all() and (got != two).any()
    assert r.fidelity["unknown"] == 0 and r.fidelity["contraction"]["fused"] == 1
