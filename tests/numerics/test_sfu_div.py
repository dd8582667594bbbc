"""layoutsim.numerics.sfu_div (div.approx/div.full.f32 and .ftz): the SASS sequence ptxas emits,
the accuracy the PTX ISA states for it, and the replay of the H200 measurement
(`python -m gpu_check.sfu.div_measure`, committed as tests/data/sfu/sfu_div_sm90.{json,npz}; measured on an sm_90 card, the
H100 80GB HBM3 on 2026-12-07 (driver 580.159.04, CUDA 13.0): the json records which).

The replay checks every special x special result and, by default, a spread of blocks of each
group (a few seconds); LAYOUTSIM_SFU_DIV_FULL=1 replays every block (minutes: 1e11 divisions)."""
import json
import os
from pathlib import Path

import numpy as np
import pytest

from gpu_check.sfu import div_inputs as DI
from layoutsim.numerics import sfu_div
from layoutsim.ptx import lowering as L

DATA = Path(__file__).resolve().parents[1] / "data" / "sfu"
JSON, NPZ = DATA / "sfu_div_sm90.json", DATA / "sfu_div_sm90.npz"
FULL = os.environ.get("LAYOUTSIM_SFU_DIV_FULL") == "1"
SWEEP_BLOCKS = (0x000, 0x3F8, 0x7E8, 0x800, 0xBF8, 0xFE8)    # subnormal, ~1, > 2^126 divisors; and negative


def _f(bits):
    return np.asarray(bits, np.uint32).view(np.float32)


def _ulps(x, ref):
    """Distance in f32 ulps between finite f32 values x and float64 references."""
    return np.abs(x.astype(np.float64) - ref) / np.spacing(np.abs(ref).astype(np.float32)).astype(np.float64)


# ---- the PTX ISA's statements (PTX ISA 9.0, 9.7.3.8 div) -----------------------------------------
def test_within_two_ulps_where_the_ptx_isa_says_so():
    """div.approx.f32: 'for |b| in [2^-126, 2^126] the maximum ulp error is 2'; div.full.f32:
    'maximum ulp error is 2 across the full range of inputs' (PTX ISA 9.7.3.8), on results that
    are normal and finite."""
    a, b = DI.pairs(0, dict(seed=11, a_and=0x80FFFFFF, a_or=0x3E000000, b_and=DI.M, b_or=0), 0, 1 << 16)
    a, b = np.concatenate([a, DI.pairs(0, dict(seed=12, a_and=DI.M, a_or=0, b_and=DI.M, b_or=0), 0, 1 << 16)[0]]), \
        np.concatenate([b, DI.pairs(0, dict(seed=12, a_and=DI.M, a_or=0, b_and=DI.M, b_or=0), 0, 1 << 16)[1]])
    with np.errstate(all="ignore"):
        exact = _f(a).astype(np.float64) / _f(b).astype(np.float64)
    mag_b = np.abs(_f(b))
    with np.errstate(invalid="ignore"):
        normal = np.isfinite(exact) & (np.abs(exact) >= 2.0 ** -126) & (np.abs(exact) < 2.0 ** 127.9)
        normal &= np.isfinite(_f(a)) & (np.abs(_f(a)) >= 2.0 ** -126)    # .ftz flushes a subnormal a
    for ptx in ("div.approx.f32", "div.full.f32", "div.full.ftz.f32", "div.approx.ftz.f32"):
        r = _f(sfu_div.evaluate(ptx, a, b))
        sel = normal & (mag_b >= 2.0 ** -126) & ((mag_b <= 2.0 ** 126) if "approx" in ptx else True)
        assert sel.sum() > 40000
        assert _ulps(r[sel], exact[sel]).max() <= 2, ptx


def test_div_approx_gives_zero_for_divisors_beyond_two_to_the_126():
    """PTX ISA 9.7.3.8: 'for 2^126 < |b| < 2^128, if a is infinity div.approx.f32 returns NaN,
    otherwise it returns 0'; div.full scales such divisors (0.25) and does not."""
    b = np.array([2.0 ** 126 * 1.5, -2.0 ** 127, 3e38], np.float32).view(np.uint32)
    a = np.array([1.0, 5.0, 3e38], np.float32).view(np.uint32)
    assert (np.abs(_f(sfu_div.evaluate("div.approx.f32", a, b))) == 0).all()
    assert np.isnan(_f(sfu_div.evaluate("div.approx.f32", np.full(3, 0x7F800000, np.uint32), b))).all()
    full = _f(sfu_div.evaluate("div.full.f32", a, b))
    assert (full != 0).all() and _ulps(full, _f(a).astype(np.float64) / _f(b).astype(np.float64)).max() <= 2


# ---- the SASS the models follow ---------------------------------------------------------------
DIVS = {"div.approx.ftz.f32": ["MUFU.RCP", "FMUL.FTZ"],
        "div.approx.f32": ["FSETP.GEU.AND", "FMUL", "FMUL", "MUFU.RCP", "FMUL"],
        "div.full.ftz.f32": ["FSETP.GT.FTZ.AND", "FMUL.FTZ", "FMUL.FTZ", "MUFU.RCP", "FMUL.FTZ"],
        "div.full.f32": ["FSETP.GT.AND", "FSETP.GEU.AND", "FMUL", "FMUL", "FMUL", "FMUL", "MUFU.RCP", "FMUL"]}


def _kernel(ptx_op):
    return f"""
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 po)
{{
    .reg .f32 %f<4>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [pa];
    ld.param.u64 %rd2, [pb];
    ld.param.u64 %rd3, [po];
    ld.global.f32 %f1, [%rd1];
    ld.global.f32 %f2, [%rd2];
    {ptx_op} %f3, %f1, %f2;
    st.global.f32 [%rd3], %f3;
    ret;
}}
"""


@pytest.mark.parametrize("ptx", sorted(DIVS))
def test_ptxas_emits_the_sequence_the_model_follows(ptx):
    """The division's SASS from ptxas -arch=sm_90 here (nvdisasm), less moves and constants: the
    sequence sfu_div's docstring spells out and its functions compute."""
    if not (L.find_ptxas() and L.find_nvdisasm()):
        pytest.skip("ptxas and nvdisasm are needed to read the SASS")
    text = _kernel(ptx)
    rows, _ = L.lower(text, "sm_90", keep=None)
    line = next(i for i, t in enumerate(text.splitlines(), 1) if t.strip().startswith(ptx))
    got = [s for r in rows["k"] if r["line"] == line for s in r["sass"] if s.startswith(("F", "MUFU"))]
    assert got == DIVS[ptx]


def test_the_executor_runs_the_model():
    from layoutsim.ptx import run
    a = DI.special()
    b = a[::-1].copy()
    for ptx in DIVS:
        r = run(_kernel(ptx).replace("ld.global.f32 %f1, [%rd1];", "mov.u32 %r0, %tid.x; cvt.u64.u32 %rd0, %r0; "
                                     "shl.b64 %rd0, %rd0, 2; add.s64 %rd1, %rd1, %rd0; add.s64 %rd2, %rd2, %rd0; "
                                     "add.s64 %rd3, %rd3, %rd0; ld.global.f32 %f1, [%rd1];")
                .replace(".reg .b64 %rd<4>;", ".reg .b64 %rd<4>; .reg .b32 %r<1>;"),
                "k", (1, 1, 1), (256, 1, 1), [_f(a), _f(b), np.zeros(256, np.float32)])
        assert (np.asarray(r.buffers[2]).view(np.uint32) == sfu_div.evaluate(ptx, a, b)).all(), ptx


# ---- the H200 measurement ----------------------------------------------------------------------
def _measured():
    if not (JSON.exists() and NPZ.exists()):
        pytest.skip(f"no H200 measurement yet: run `python -m gpu_check.sfu.div_measure --out DIR` on the H200 "
                    f"and commit DIR/sfu_div_sm90.json and .npz into {DATA}")
    doc = json.loads(JSON.read_text())
    env = doc["environment"]
    # The SFU and its SASS sequence are sm_90's: an H100 and an H200 run the same; a dry run is the model itself.
    assert env["gpu"] in ("NVIDIA H200", "NVIDIA H100 80GB HBM3") and not env["dry_run"], env
    return doc, np.load(NPZ)


def test_every_special_pair_is_the_h200_result():
    doc, z = _measured()
    a, b = DI.pairs(1, {}, 0, 1 << 16)
    for ptx in DI.OPS:
        hw = z[f"{ptx}|special results"]
        got = sfu_div.evaluate(ptx, a, b)
        bad = np.flatnonzero(got != hw)
        assert bad.size == 0, (f"{ptx}: {bad.size} of 65536 differ, e.g. {a[bad[0]]:#010x} / {b[bad[0]]:#010x}: "
                               f"H200 {hw[bad[0]]:#010x}, model {got[bad[0]]:#010x}")


@pytest.mark.parametrize("ptx", DI.OPS)
def test_block_hashes_are_the_h200s(ptx):
    doc, z = _measured()
    for name, mode, n, log2_block, params in DI.groups():
        hw = z[f"{ptx}|{name}"]
        rec = doc["ops"][ptx]["groups"][name]
        assert rec["pairs"] == n and rec["log2_block"] == log2_block and hw.size == n >> log2_block
        nb = hw.size
        if FULL:
            blocks = range(nb)
        elif mode == 2:
            blocks = SWEEP_BLOCKS
        else:
            blocks = sorted({0, nb - 1})
        for k in blocks:
            a, b = DI.pairs(mode, params, k << log2_block, 1 << log2_block)
            got = DI.block_hashes(sfu_div.evaluate(ptx, a, b), k << log2_block, log2_block)
            assert got[0] == hw[k], f"{ptx}, {name}: block {k} differs from the H200's"
