"""layoutsim.numerics.sfu against the H200 measurements it was built from (GPU job of 2026-12-01,
gpu_check/sfu/measure.py, committed in layoutsim/numerics/data/sfu_sm90 by gpu_check/sfu/commit.py).
Missing data is a failure, never a skip."""
import numpy as np
import pytest

from layoutsim.errors import LayoutsimError
from layoutsim.numerics import sfu

M = sfu.measured()
F32_EXACT = ("ex2", "rcp", "rsqrt", "sqrt")


def _bits(values):
    return np.asarray(values, np.float32).view(np.uint32)


def _f(bits):
    return np.asarray(bits, np.uint32).view(np.float32)


# ---- the data ----------------------------------------------------------------------------------
def test_the_committed_data_is_complete_small_and_from_the_h200():
    want = {"measured.json", "f16.npz", "errhist.npz"} | {
        f"{op}.{t}.{k}.bz2" for op, ts in sfu.TABLES.items() for t in ts for k in ("ref", "err")}
    have = {p.name for p in sfu.DATA.iterdir() if p.is_file()}
    assert have == want
    assert sum((sfu.DATA / n).stat().st_size for n in have) <= 3 << 20       # the budget issue 10 set
    src = M["source"]
    assert src["gpu"] == "NVIDIA H200" and src["date"].startswith("2026-12-01") and not src["dry_run"]
    assert M["problems"] == [] and M["skipped"] == []


def test_every_table_decodes_to_its_recorded_sha256():
    for op, names in sfu.TABLES.items():
        for name in names:
            t = sfu.table(op, name)                              # decode() raises on a SHA-256 mismatch
            assert t.dtype == np.uint32 and t.size == M["tables"][f"{op}.{name}"]["n"]
    for ptx in sfu.TABLES16:
        assert sfu.table16(ptx).shape == (65536,)


def test_exact_means_no_mismatch_over_every_input_on_the_h200():
    """A model is exact only if the hypothesis it implements had 0 mismatches over all 2^32
    inputs, and the pieces around it (non-ftz sequences, sin/cos multiply, x2 halves) too."""
    for op, hyp in sfu.HYPOTHESIS.items():
        if op in sfu.INFERRED:                 # not run on the GPU: never exact
            assert not sfu.OPS[f"{op}.approx.ftz.f32"].exact
            continue
        rec = next(h for h in M["f32"][op]["hypotheses"] if h["hyp"] == hyp)
        assert sfu.OPS[f"{op}.approx.ftz.f32"].exact == (rec["mismatches"] == 0), op
    assert all(c["mismatches"] == 0 for c in M["compose"].values()) and len(M["compose"]) == 5
    assert all(c["mismatches"] == 0 for c in M["sincos_composition"].values())
    assert {k: v["mismatches"] for k, v in M["f16x2"].items()} == {
        "ex2.approx.f16x2": 0, "ex2.approx.ftz.bf16x2": 0, "tanh.approx.f16x2": 0, "tanh.approx.bf16x2": 0}
    # tanh: what had no mismatch were properties (odd symmetry, keeping every bit), not models
    assert all(h.get("property") for h in M["f32"]["tanh"]["hypotheses"] if h["mismatches"] == 0)
    assert not any(sfu.OPS[p].exact for p in ("tanh.approx.f32", "sin.approx.f32", "cos.approx.ftz.f32",
                                               "lg2.approx.f32", "lg2.approx.ftz.f32"))


# ---- exact models against H200 results ----------------------------------------------------------
def _recorded(op):
    """Every [x, H200 result] the run recorded for a primitive (samples of failed hypotheses)."""
    pairs = {(int(x, 16), int(hw, 16)) for h in M["f32"][op]["hypotheses"] for x, hw, _ in h["samples"]}
    x, hw = (np.array(v, np.uint32) for v in zip(*sorted(pairs)))
    return x, hw


def test_ex2_gives_every_recorded_h200_result():
    x, hw = _recorded("ex2")
    assert x.size >= 200
    got, exact = sfu.evaluate("ex2.approx.ftz.f32", x)
    assert exact and (got == hw).all()


def _probe_ordered(b):
    b = b.astype(np.int64)
    return np.where(b >> 31, -(b & 0x7FFFFFFF), b)


_REFERENCE = {"ex2": np.exp2, "rcp": lambda v: 1.0 / v, "rsqrt": lambda v: 1.0 / np.sqrt(v), "sqrt": np.sqrt}


@pytest.mark.parametrize("op, b", [("ex2", 256 + 130), ("rcp", 127 + 40), ("rsqrt", 127 + 41), ("sqrt", 127 - 40)])
def test_a_whole_bin_is_as_far_from_correctly_rounded_as_on_the_h200(op, b):
    """All 2^23 inputs of one sign+exponent bin: the histogram of ulp distances between the model
    and the correctly rounded value equals the H200's (probe.cu errhist, committed errhist.npz)."""
    u = (np.uint32(b) << np.uint32(23)) | np.arange(1 << 23, dtype=np.uint32)
    x = _f(u).astype(np.float64)
    with np.errstate(all="ignore"):
        r = _bits(_REFERENCE[op](np.where(np.abs(x) < 2.0 ** -126, np.copysign(0.0, x), x)))
    r = np.where((r & 0x7FFFFFFF) < 0x00800000, r & 0x80000000, r)
    y, exact = sfu.evaluate(f"{op}.approx.ftz.f32", u)
    assert exact
    d = _probe_ordered(y) - _probe_ordered(r)
    hist = np.bincount(np.where(np.abs(d) > 16, 33, d + 16), minlength=35)
    with np.load(sfu.DATA / "errhist.npz") as z:
        assert hist.tolist() == z[op][b].tolist()


def test_lg2_model_gives_the_h200_value_on_every_recorded_input():
    """Every [x, H200] the run recorded for lg2 (the samples of hypotheses 0 to 3, each chosen where
    that hypothesis differed from the H200): the model, hypothesis 4 (sfu.INFERRED), gives the
    H200's value on all of them; hypothesis 1, its form without the nudge, misses the samples of
    its own mismatches."""
    x, hw = _recorded("lg2")
    got, exact = sfu.evaluate("lg2.approx.ftz.f32", x)
    assert not exact and len(x) >= 100 and (got == hw).all()
    rec = next(h for h in M["f32"]["lg2"]["hypotheses"] if h["hyp"] == 1)
    xs, hws, h1 = (np.array([int(s[i], 16) for s in rec["samples"]], np.uint32) for i in range(3))
    assert (h1 != hws).all() and (sfu.evaluate("lg2.approx.ftz.f32", xs)[0] == hws).all()
    info = sfu.info("lg2.approx.f32")
    assert "model_mismatches" not in info and "12,463,768" in info["model_evidence"]


def test_stand_ins_are_within_the_measured_error_of_the_h200():
    """sin/cos/tanh: the correctly rounded value stands in; on every recorded H200 result it is
    within the largest |error| the run measured over all inputs (plus half an ulp of rounding)."""
    for op in ("sin", "cos", "tanh"):
        x, hw = _recorded(op)
        err = M["f32"][op]["error_vs_correctly_rounded"]["max_abs_error"]
        got = _f(getattr(sfu, f"mufu_{op}")(x))
        g, h = got.astype(np.float64), _f(hw).astype(np.float64)
        half_ulp = np.abs(np.spacing(got)).astype(np.float64) / 2
        assert (np.abs(g - h) <= err + half_ulp).all(), op


# ---- the PTX forms without .ftz ----------------------------------------------------------------
def test_non_ftz_forms_keep_subnormals_where_the_ftz_forms_flush():
    """PTX ISA 9.0, ex2/rcp/sqrt/lg2.approx.f32: subnormal inputs and results are supported
    without .ftz; with .ftz they are flushed to zero."""
    x = _bits([-140.0, -138.0])                          # 2^x is subnormal; MUFU.EX2(x/2) is exact there
    full, _ = sfu.evaluate("ex2.approx.f32", x)
    ftz, _ = sfu.evaluate("ex2.approx.ftz.f32", x)
    assert _f(full).tolist() == [2.0 ** -140, 2.0 ** -138] and (ftz == 0).all()
    tiny = np.array([0x00000400, 0x00200000], np.uint32)  # 2^-139, 2^-128: subnormal inputs
    near = np.array([0x00400000, 0x00600000], np.uint32)  # 2^-127, 1.5 * 2^-127: 1/x is finite
    assert (sfu.evaluate("rcp.approx.ftz.f32", near)[0] == 0x7F800000).all()
    r = _f(sfu.evaluate("rcp.approx.f32", near)[0]).astype(np.float64)
    assert np.allclose(r, [2.0 ** 127, 2.0 ** 127 / 1.5], rtol=2 ** -22, atol=0)
    s = _f(sfu.evaluate("sqrt.approx.f32", tiny)[0]).astype(np.float64)
    assert np.allclose(s, [2.0 ** -69.5, 2.0 ** -64], rtol=2 ** -22, atol=0)
    assert (sfu.evaluate("sqrt.approx.ftz.f32", tiny)[0] == 0).all()
    lg = _f(sfu.evaluate("lg2.approx.f32", tiny)[0]).astype(np.float64)
    assert np.allclose(lg, [-139.0, -128.0], rtol=0, atol=2 ** -16)
    assert (sfu.evaluate("lg2.approx.ftz.f32", tiny)[0] == 0xFF800000).all()


def test_sin_and_cos_scale_by_one_over_two_pi_rounding_toward_zero():
    x = _bits([1.0, 3.0, -3.0, 1e30])
    t = (x.view(np.float32).astype(np.float64) * np.float64(np.uint32(0x3E22F983).view(np.float32)))
    rz = t.astype(np.float32)
    rz = np.where(np.abs(rz.astype(np.float64)) > np.abs(t), np.nextafter(rz, np.float32(0)), rz)
    want = sfu.mufu_sin(rz.astype(np.float32).view(np.uint32))
    assert (sfu.evaluate("sin.approx.f32", x)[0] == want).all()
    assert (sfu.evaluate("sin.approx.ftz.f32", x)[0] == want).all()


# ---- 16-bit forms and the API -------------------------------------------------------------------
def test_x2_forms_are_the_16_bit_form_on_each_half():
    rng = np.random.default_rng(10)
    pairs = rng.integers(0, 1 << 32, 4096, dtype=np.uint64).astype(np.uint32)
    for ptx in sfu.TABLES16:
        one = sfu.table16(ptx)
        got, exact = sfu.evaluate(ptx + "x2", pairs)
        assert exact and (got & 0xFFFF == one[pairs & 0xFFFF]).all() and (got >> 16 == one[pairs >> 16]).all()
        half, _ = sfu.evaluate(ptx, np.arange(65536, dtype=np.uint16))
        assert half.dtype == np.uint16 and (half == one).all()


def test_ex2_f16_of_zero_and_one_are_one_and_two():
    """ex2.approx.f16 at 0 and 1 (f16 bits 0x0000, 0x3c00): 1 and 2 (0x3c00, 0x4000) on the H200."""
    assert sfu.evaluate("ex2.approx.f16", np.array([0, 0x3C00], np.uint16))[0].tolist() == [0x3C00, 0x4000]


def test_api_shapes_models_and_errors():
    x = _bits(np.arange(12, dtype=np.float32).reshape(3, 4) - 6)
    out, exact = sfu.evaluate("rcp.approx.f32", x)
    assert out.shape == (3, 4) and out.dtype == np.uint32 and exact
    assert sfu.evaluate("rcp.approx.f32", x.view(np.int32))[0].tolist() == out.tolist()
    assert sfu.model("ex2.approx.f32").exact and sfu.model("lg2.approx.f32") is None
    assert sfu.model("lg2.approx.f32", exact_only=False).exact is False
    assert sfu.model("rsqrt.approx.f64") is None                       # not measured
    assert sfu.info("sin.approx.f32")["label"] == "not proven exact"
    with pytest.raises(LayoutsimError, match="takes raw bits as uint32"):
        sfu.evaluate("ex2.approx.f32", np.zeros(3, np.float32))
    with pytest.raises(LayoutsimError, match=r"no model of 'ex3.approx.f32'; modelled: cos.approx.f32"):
        sfu.evaluate("ex3.approx.f32", x)
    assert len(sfu.names()) == 23


def test_the_docs_example_runs():
    """docs/numerics.md, 'Approximate math': its Python block runs as written (it asserts)."""
    import re
    from pathlib import Path
    text = (Path(__file__).resolve().parents[2] / "docs" / "numerics.md").read_text()
    section = text.split("## Approximate math", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 1
    exec(compile(blocks[0], "docs/numerics.md", "exec"), {})
