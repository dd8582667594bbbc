"""Linear filtering's arithmetic, probed: f32 textures whose texels come in designed pairs (1D) and
2x2 blocks (2D), sampled at exact weights, so each result is one filter operation on known values.

    python -m gpu_check.textures.filter_probe --out DIR [--dry-run]

1D: a 4096-texel f32 texture (clamp, unnormalized coordinates, linear); pair p is texels (2p, 2p+1)
= (a_p, b_p), sampled at x = 2p + 0.5 + k/256 for every k in 0..255: the filter's weight of b_p is
k/256 exactly (the coordinate is exact in f32), so out = F(a_p, b_p, k). The pairs: zeros against
random values (the products alone), equal values, small integers, neighbours (b = a (1 + eps)),
random values of one exponent, of spread exponents, signs mixed, and powers of two.
2D: a 64 x 64 texture of 2x2 blocks of random values (spread exponents), each block sampled at 64
(k, l) weight pairs: out = G(block, k, l).
Written: DIR/filter_probe.npz (1d/texels, 1d/in, 1d/out, 2d/texels, 2d/in, 2d/out) and
DIR/filter_probe.json (GPU, driver, date). --dry-run runs the executor instead of a GPU.
The analysis (which arithmetic gives these bits) is layoutsim/ptx/texture.py's linear filter.
"""
import argparse
import datetime
import json
import sys
from pathlib import Path

import numpy as np

from . import cases as C

PAIRS, STEPS = 2048, 256
BLOCKS, SAMPLES = 32, 64            # 2D: 32 x 32 blocks of 2 x 2 texels, 64 samples each


def _spread(r, n):
    return (r.standard_normal(n) * np.exp2(r.integers(-20, 21, n))).astype(np.float32)


def pairs(seed=7):
    """(a, b) float32 [PAIRS] each, in designed groups of 256."""
    r = np.random.default_rng(seed)
    one = np.float32(1)
    groups = []
    x = _spread(r, 256)
    groups.append((np.zeros(256, np.float32), x))                       # 0 .. b: w * b alone
    groups.append((x[::-1].copy(), np.zeros(256, np.float32)))           # a .. 0
    y = _spread(r, 256)
    groups.append((y, y.copy()))                                         # equal
    groups.append((r.integers(-8, 9, 256).astype(np.float32), r.integers(-8, 9, 256).astype(np.float32)))
    z = r.uniform(1, 2, 256).astype(np.float32)
    ulps = r.integers(1, 64, 256).astype(np.int32)
    groups.append((z, (z.view(np.int32) + ulps).view(np.float32)))      # neighbours
    e = np.exp2(r.integers(-4, 5, 256)).astype(np.float32)
    groups.append((r.uniform(1, 2, 256).astype(np.float32) * e, r.uniform(1, 2, 256).astype(np.float32) * e))
    s = _spread(r, 256)
    groups.append((s, -_spread(r, 256)))                                 # spread, signs mixed
    p = np.exp2(r.integers(-10, 11, 256)).astype(np.float32) * np.where(r.random(256) < 0.5, -one, one)
    groups.append((p, np.exp2(r.integers(-10, 11, 256)).astype(np.float32)))
    a = np.concatenate([g[0] for g in groups]).astype(np.float32)
    b = np.concatenate([g[1] for g in groups]).astype(np.float32)
    assert len(a) == PAIRS
    return a, b


def inputs_1d():
    a, b = pairs()
    texels = np.empty(2 * PAIRS, np.float32)
    texels[0::2], texels[1::2] = a, b
    p = np.repeat(np.arange(PAIRS), STEPS)
    k = np.tile(np.arange(STEPS), PAIRS)
    rows = np.zeros((PAIRS * STEPS, 4), np.float32)
    rows[:, 0] = (2 * p + 0.5 + k / 256.0).astype(np.float32)
    assert np.array_equal(rows[:, 0].astype(np.float64), 2 * p + 0.5 + k / 256.0)
    return texels, rows.view(np.uint32)


def inputs_2d(seed=11):
    r = np.random.default_rng(seed)
    n = 2 * BLOCKS
    texels = _spread(r, n * n).reshape(n, n)
    by, bx = np.divmod(np.repeat(np.arange(BLOCKS * BLOCKS), SAMPLES), BLOCKS)
    k = r.integers(0, 256, len(bx))
    m = r.integers(0, 256, len(bx))
    rows = np.zeros((len(bx), 4), np.float32)
    rows[:, 0] = (2 * bx + 0.5 + k / 256.0).astype(np.float32)
    rows[:, 1] = (2 * by + 0.5 + m / 256.0).astype(np.float32)
    return texels, rows.view(np.uint32)


def case(geom, n):
    obj = dict(fmt="f32", geom=geom, channels=1, address="clamp", filter="linear", read="element",
               normalized=False, layered=False, cubemap=False)
    return dict(name=f"filter_probe_{geom}", kernel=f"tex_{geom}_f32_f32", kind="tex", obj=obj, n=n, extra={})


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m gpu_check.textures.filter_probe", description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--dry-run", action="store_true", help="run the executor instead of a GPU")
    a = ap.parse_args(argv)
    data = {"1d": inputs_1d(), "2d": inputs_2d()}
    C.SIZES.update({"1d": data["1d"][0].shape, "2d": data["2d"][0].shape})    # this probe's own sizes
    if a.dry_run:
        from . import replay
        run, meta = replay.run_case, {"gpu": "dry run: the executor (layoutsim.ptx), not a GPU"}
    else:
        from .measure import Gpu
        gpu = Gpu()
        run, meta = gpu.run_case, gpu.meta()
    arrays = {}
    for geom, (texels, rows) in data.items():
        out, _ = run(case(geom, len(rows)), texels, rows)
        arrays.update({f"{geom}/texels": texels, f"{geom}/in": rows, f"{geom}/out": out[:len(rows)]})
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(out / "filter_probe.npz", **arrays)
    meta.update(date=datetime.date.today().isoformat(), what=__doc__.splitlines()[0])
    (out / "filter_probe.json").write_text(json.dumps(meta, indent=1) + "\n")
    print(f"filter probe: {sum(len(v) for k, v in arrays.items() if k.endswith('/out'))} samples -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
