"""gfx12 WMMA arithmetic against every capture AMD published from gfx1201 hardware (rocjitsu
via bjacob/goc, MIT; tests/data/numerics/amd/). Expected values are hardware results; the
model is layoutsim.mma under profiles.GFX12_PROFILE, registers mapped through the catalog."""
import numpy as np

import layoutsim
from layoutsim.numerics.profiles import GFX11_CAPTURES, GFX12_CAPTURES, profile_for

from amd_captures import (packed_narrowed_once, replay_dot2, replay_gfx11, replay_integer,
                          replay_packed, replay_wmma)


def test_dot2_captures():
    rows = replay_dot2()
    bad = [f"{fmt} case {i}: got {g:#010x}, captured {e:#010x}" for fmt, i, e, g in rows if e != g]
    assert not bad, "\n".join(bad)
    assert len(rows) == GFX12_CAPTURES["dot2"]


def test_wmma_captures_both_wave_sizes():
    rows = replay_wmma()
    bad = [f"{fmt} wave{w} case {i}: got {[hex(x) for x in g]}, captured {e:#010x}"
           for fmt, w, i, e, g in rows if g != [e]]
    assert not bad, "\n".join(bad)
    assert len(rows) == GFX12_CAPTURES["wmma"]
    # some captures differ between wave32 and wave64: the same registers hold other k there
    captured = {(fmt, w, i): e for fmt, w, i, e, _ in rows}
    assert any(captured[f, 32, i] != captured[f, 64, i] for f, w, i, _, _ in rows)


def test_packed_16bit_wmma_captures_both_wave_sizes():
    """f16 and bf16 results, narrowed after every DOT4 step (f16: RNE; bf16: the fp32 RNE result
    truncated), NaN payloads, overflow, underflow and cancellation cases (the header's seeds)."""
    rows = replay_packed()
    bad = [f"wave{w} {fmt} fixture {f} D[{e // 16}][{e % 16}]: got {g:#06x}, captured {x:#06x}"
           for w, fmt, f, e, x, g in rows if x != g]
    assert not bad, "\n".join(bad[:10]) + f"\n... {len(bad)} in all"
    assert len(rows) == GFX12_CAPTURES["packed"]
    # the captures hold what sets 16-bit results apart: both NaN payloads of each format, and
    # per-step narrowing: narrowing once at the end disagrees with hundreds of them
    assert {0xFE3D, 0xFE00, 0xFFFD, 0xFFC0} <= {x for *_, x, _ in rows}
    assert sum(x != g for x, g in packed_narrowed_once()) > 1000
    # the same arrays, loaded for each wave size, give other bits in places
    per = {(w, fmt, f, e): x for w, fmt, f, e, x, _ in rows}
    assert sum(per[32, fmt, f, e] != x for (w, fmt, f, e), x in per.items() if w == 64) > 100


def test_integer_wmma_and_swmmac_digests():
    rows = replay_integer()
    bad = [f"{m} sample {s} mode {mode}: digest {g:#018x}, captured {e:#018x}"
           for m, s, mode, e, g in rows if e != g]
    assert not bad, "\n".join(bad[:10])
    assert len(rows) == GFX12_CAPTURES["integer"]


def test_gfx1100_dot2_and_wmma_captures():
    # gfx11's sign-frame step (rocjitsu gfx11_dot2.h) against the W7900 captures: the DOT2
    # cases, and one f32 WMMA matrix of small integers whose results are not integers (the
    # complemented terms), computed from f16 and from bf16 inputs
    rows = replay_gfx11()
    bad = [f"{w} {i}: got {g:#010x}, captured {e:#010x}" for w, i, e, g in rows if e != g]
    assert not bad, "\n".join(bad[:10])
    assert sum(w.startswith("dot2") for w, *_ in rows) == GFX11_CAPTURES["dot2"]
    assert sum(w == "wmma f16" for w, *_ in rows) == GFX11_CAPTURES["wmma"]


def test_profile_says_what_the_captures_cover():
    p = profile_for("gfx1201")
    assert "captured on AMD hardware" in p.label("f16") and "UNVERIFIED" not in p.label("f16")
    assert "UNVERIFIED ASSUMPTION" in p.label("e4m3")
    assert "captured on AMD hardware" in profile_for("gfx1100").label("bf16", "f32")
    assert "UNVERIFIED ASSUMPTION" in profile_for("gfx1100").label("u8", "s32")


def test_wave_sizes_agree_on_the_same_matrices():
    # the characterised steps visit the ISA's k 0-3, 4-7, 8-11, 12-15 in both wave sizes
    rng = np.random.default_rng(5)
    a = rng.integers(0, 1 << 16, (4, 16, 16)).astype(np.uint16) & 0xBFFF   # no Inf/NaN
    b = rng.integers(0, 1 << 16, (4, 16, 16)).astype(np.uint16) & 0xBFFF
    c = rng.integers(0, 1 << 32, (4, 16, 16), dtype=np.uint64).astype(np.uint32) & 0xBFFFFFFF
    d32 = layoutsim.mma(layoutsim.get("v_wmma_f32_16x16x16_f16", arch="gfx1201"), a, b, c,
                        arch="gfx1201", raw=True)
    d64 = layoutsim.mma(layoutsim.get("v_wmma_f32_16x16x16_f16", arch="gfx1201", wave=64), a, b,
                        c, arch="gfx1201", raw=True)
    assert np.array_equal(d64, d32)
