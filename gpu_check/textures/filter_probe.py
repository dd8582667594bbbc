"""Linear filtering's arithmetic, probed: f32 textures whose texels come in designed pairs (1D) and
2x2 blocks (2D), sampled at exact weights, so each result is one filter operation on known values.

    python -m gpu_check.textures.filter_probe --out DIR [--dry-run]

1D: a 4096-texel f32 texture (clamp, unnormalized coordinates, linear); pair p is texels (2p, 2p+1)
= (a_p, b_p), sampled at x = 2p + 0.5 + k/256 for every k in 0..255: the filter's weight of b_p is
k/256 exactly (the coordinate is exact in f32), so out = F(a_p, b_p, k). The pairs: zeros against
random values (the products alone), equal values, small integers, neighbours (b = a (1 + eps)),
random values of one exponent, of spread exponents, signs mixed, and powers of two.
2D: a 64 x 64 texture of 2x2 blocks of random values (spread exponents), each block sampled at 64
(k, l) weight pairs: out = G(block, k, l). 3D: a 16 x 16 x 16 texture of 2x2x2 blocks, each at 64
(k, l, m) triples. The other formats, 1D pairs as above: f16 texels (1d_f16), and 8- and 16-bit
integers read as normalized floats (1d_u8n: unsigned bytes, 1d_s16n: signed shorts, 1d_s8n: signed
bytes). norm_bits: which bits of a normalized coordinate the sampler keeps (inputs_norm_bits);
a1d_border: a layered 1D texture with border addressing (inputs_a1d); 3d_pairs: 3D filtering's two
passes alone (inputs_3d_pairs).
Written: DIR/filter_probe.npz (<probe>/texels, <probe>/in, <probe>/out for each probe) and
DIR/filter_probe.json (GPU, driver, date). --dry-run runs the executor instead of a GPU.
The analysis (which arithmetic gives these bits) is layoutsim/ptx/texture.py's filter_unit.

    python -m gpu_check.textures.filter_probe --commit DIR

keeps a subset of a measurement (DIR/filter_probe.npz) in tests/data/textures/filter_probe.npz:
per probe the row indices KEEP selects and the result word of each (the inputs are this module's
own, regenerated from their seeds), with the GPU named in filter_probe.json;
tests/ptx/test_texture_filter_unit.py replays them.
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
BLOCKS_3D = 8                       # 3D: 8 x 8 x 8 blocks of 2 x 2 x 2 texels, SAMPLES each


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


def inputs_1d(a=None, b=None):
    if a is None:
        a, b = pairs()
    texels = np.empty(2 * len(a), a.dtype)
    texels[0::2], texels[1::2] = a, b
    p = np.repeat(np.arange(len(a)), STEPS)
    k = np.tile(np.arange(STEPS), len(a))
    rows = np.zeros((len(a) * STEPS, 4), np.float32)
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


def inputs_3d(seed=13):
    r = np.random.default_rng(seed)
    n = 2 * BLOCKS_3D
    texels = _spread(r, n ** 3).reshape(n, n, n)
    blk = np.repeat(np.arange(BLOCKS_3D ** 3), SAMPLES)
    bz, rest = np.divmod(blk, BLOCKS_3D ** 2)
    by, bx = np.divmod(rest, BLOCKS_3D)
    rows = np.zeros((len(blk), 4), np.float32)
    for col, b in enumerate((bx, by, bz)):
        rows[:, col] = (2 * b + 0.5 + r.integers(0, 256, len(blk)) / 256.0).astype(np.float32)
    return texels, rows.view(np.uint32)


def small_pairs(dtype, seed):
    """1024 pairs of a 16-bit or 8-bit format: every value class (random, equal, neighbours, extremes)."""
    r = np.random.default_rng(seed)
    n = PAIRS // 2
    if np.dtype(dtype).kind == "f":
        a = (r.standard_normal(n) * np.exp2(r.integers(-8, 9, n))).astype(dtype)
        b = (r.standard_normal(n) * np.exp2(r.integers(-8, 9, n))).astype(dtype)
        b[: n // 4] = a[: n // 4]
        b[n // 4: n // 2] = (a[n // 4: n // 2].view(np.int16) + 1).view(dtype)
        return a, b
    info = np.iinfo(dtype)
    a = r.integers(info.min, int(info.max) + 1, n).astype(dtype)
    b = r.integers(info.min, int(info.max) + 1, n).astype(dtype)
    b[: n // 8] = a[: n // 8] + np.where(a[: n // 8] < info.max, 1, 0).astype(dtype)
    a[n // 8: n // 4], b[n // 8: n // 4] = info.min, info.max
    return a, b


def inputs_3d_pairs(seed=41):
    """3D, the two passes alone: each 2x2x2 block of a 16^3 f32 texture holds one texel in each z
    slice (corner (0, 0) of both; the others 0), one large (random sign and exponent), the other
    2^-1 to 2^-30 of it (random sign and significand), z order alternating by block; sampled at x, y
    on the block's first texel centre (weights 0) and 64 random z weights: out = the large one's
    share plus the small one's, summed as the filter sums two passes (texture.filter_unit; the
    random 3D probe leaves 79 of 32768 samples unexplained there, all within an ulp of a tie)."""
    r = np.random.default_rng(seed)
    n = 2 * BLOCKS_3D
    texels = np.zeros((n, n, n), np.float32)
    blk = np.arange(BLOCKS_3D ** 3)
    bz, rest = np.divmod(blk, BLOCKS_3D ** 2)
    by, bx = np.divmod(rest, BLOCKS_3D)
    big = (r.uniform(1, 2, len(blk)) * np.exp2(r.integers(-8, 9, len(blk))) * r.choice([-1, 1], len(blk)))
    small = big * r.uniform(0.5, 1, len(blk)) * np.exp2(-r.integers(0, 30, len(blk))) * r.choice([-1, 1], len(blk))
    z0 = np.where(blk % 2 == 0, big, small)
    z1 = np.where(blk % 2 == 0, small, big)
    texels[2 * bz, 2 * by, 2 * bx], texels[2 * bz + 1, 2 * by, 2 * bx] = z0, z1
    b = np.repeat(blk, SAMPLES)
    rows = np.zeros((len(b), 4), np.float32)
    rows[:, 0], rows[:, 1] = 2 * bx[b] + 0.5, 2 * by[b] + 0.5
    rows[:, 2] = (2 * bz[b] + 0.5 + r.integers(1, 256, len(b)) / 256.0).astype(np.float32)
    return texels, rows.view(np.uint32)


NORM_BITS = (20, 21, 22, 23, 24)    # norm_bits: how many fraction bits a normalized coordinate keeps


def inputs_norm_bits(seed=31, width=13, n=8192):
    """A 1 x 13 f32 texture of T[i] = i (wrap, normalized coordinates): the result at x is
    i0 + a / 256 (or 12 (256 - a) / 256 across the seam), so each sample shows the texel index
    and the weight. The rows: x of every binade from 2^-7 to 4 and negative, where keeping 20, 21,
    22, 23 or 24 fraction bits (floor, texture.NORMALIZED_BITS) or as many significant bits gives
    different weights, and n / 8 random ones; y = 0.5 (the row's centre: weight 0)."""
    r = np.random.default_rng(seed)
    m = 1 << 20
    x = (r.uniform(1, 2, m) * np.exp2(r.integers(-7, 2, m)) * np.where(r.random(m) < 0.2, -1, 1))
    x = x.astype(np.float32).astype(np.float64)
    seen = []
    for b in NORM_BITS:
        for kept in (np.floor(x * 2.0 ** b) / 2.0 ** b,                          # fixed point
                     np.floor(np.ldexp(np.frexp(x)[0], b)) * np.exp2(np.frexp(x)[1] - b)):  # float
            u = kept * width - 0.5
            seen.append(np.round((u - np.floor(u)) * 256))
    seen = np.stack(seen)
    pick = np.flatnonzero((seen != seen[0]).any(0))[: n - n // 8]
    pick = np.concatenate([pick, r.integers(0, m, n - len(pick))])
    rows = np.zeros((n, 4), np.float32)
    rows[:, 0], rows[:, 1] = x[pick], 0.5
    return np.arange(width, dtype=np.float32)[None, :], rows.view(np.uint32)


def inputs_a1d(seed=37, width=13, layers=3):
    """Layered 1D u8 texels read as normalized floats (border): x from 1.5 texels outside to 1.5
    beyond in steps of 1/256, each layer; texture.Texture.fetch's 1D-as-2D rule halves them all."""
    r = np.random.default_rng(seed)
    texels = r.integers(0, 256, (layers, width)).astype(np.uint8)
    x = np.arange(-1.5 * 256, (width + 1.5) * 256) / 256.0
    rows = np.zeros((layers * len(x), 4), np.uint32)
    rows[:, 0] = np.repeat(np.arange(layers), len(x))
    rows[:, 1] = np.tile(x, layers).astype(np.float32).view(np.uint32)
    return texels, rows


def case(geom, n, fmt="f32", read="element", address="clamp", normalized=False):
    obj = dict(fmt=fmt, geom=geom, channels=1, address=address, filter="linear", read=read,
               normalized=normalized, layered=geom in ("a1d", "a2d"), cubemap=False)
    return dict(name=f"filter_probe_{geom}_{fmt}", kernel=f"tex_{geom}_f32_f32", kind="tex", obj=obj, n=n, extra={})


# probe: (geometry, format, read mode, inputs[, the sampler's address mode and normalized coordinates])
PROBES = {
    "1d": ("1d", "f32", "element", inputs_1d),
    "2d": ("2d", "f32", "element", inputs_2d),
    "3d": ("3d", "f32", "element", inputs_3d),
    "1d_f16": ("1d", "f16", "element", lambda: inputs_1d(*small_pairs(np.float16, 17))),
    "1d_u8n": ("1d", "u8", "normalized", lambda: inputs_1d(*small_pairs(np.uint8, 19))),
    "1d_s16n": ("1d", "s16", "normalized", lambda: inputs_1d(*small_pairs(np.int16, 23))),
    # not measured yet: s8 read as normalized floats (texture.NORMALIZED_16's s8 terms, fitted on
    # one recorded case), the normalized coordinate's bits, layered 1D with border addressing,
    # the sum of 3D's two passes
    "1d_s8n": ("1d", "s8", "normalized", lambda: inputs_1d(*small_pairs(np.int8, 29))),
    "norm_bits": ("2d", "f32", "element", inputs_norm_bits, dict(address="wrap", normalized=True)),
    "a1d_border": ("a1d", "u8", "normalized", inputs_a1d, dict(address="border")),
    "3d_pairs": ("3d", "f32", "element", inputs_3d_pairs),
}


def probe_case(name, n):
    """The case (measure.Gpu.run_case's and replay.run_case's argument) of probe `name`, n rows."""
    geom, fmt, read = PROBES[name][:3]
    return case(geom, n, fmt, read, **(PROBES[name][4] if len(PROBES[name]) > 4 else {}))


KEEP = {"1d": 16, "2d": 4, "3d": 1, "1d_f16": 8, "1d_u8n": 8, "1d_s16n": 8,      # every n-th row kept
        "1d_s8n": 8, "norm_bits": 1, "a1d_border": 1, "3d_pairs": 1}
COMMITTED = Path(__file__).resolve().parents[2] / "tests" / "data" / "textures"


def rows_kept(name, n):
    return np.arange(0, n, KEEP[name])


def commit(folder):
    """Keep the subset of a measurement in `folder` (see the module docstring) in COMMITTED, beside
    the probes committed before that it did not measure; filter_probe.json's "measured" names the
    GPU and date of each probe's run."""
    from gpu_check.kernel_corpus.corpus import npz_bytes, write_atomic
    run = json.loads((Path(folder) / "filter_probe.json").read_text())
    old = COMMITTED / "filter_probe.npz"
    kept = dict(np.load(old)) if old.is_file() else {}
    meta = json.loads((COMMITTED / "filter_probe.json").read_text()) if old.is_file() else dict(run)
    measured = meta.setdefault("measured", {})
    for name in (p for p in PROBES if f"{p}/out" in kept):            # committed before "measured" was
        measured.setdefault(name, {"gpu": meta.get("gpu"), "date": meta.get("date")})
    with np.load(Path(folder) / "filter_probe.npz") as z:
        for name in (p for p in PROBES if f"{p}/out" in z.files):      # a run may measure some (--only)
            out = z[f"{name}/out"]
            idx = rows_kept(name, len(out))
            kept[f"{name}/index"], kept[f"{name}/out"] = idx.astype(np.int32), out[idx, 0].copy()
            measured[name] = {"gpu": run.get("gpu"), "date": run.get("date")}
    meta["kept"] = {k: f"every {v}th row" for k, v in KEEP.items() if f"{k}/out" in kept}
    write_atomic(COMMITTED / "filter_probe.npz", npz_bytes(kept))
    write_atomic(COMMITTED / "filter_probe.json", (json.dumps(meta, indent=1) + "\n").encode())
    print(f"kept {sum(len(v) for k, v in kept.items() if k.endswith('/out'))} results -> {COMMITTED}")


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m gpu_check.textures.filter_probe", description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="the folder to write the measurement to")
    ap.add_argument("--commit", metavar="DIR", help="keep a subset of the measurement in DIR in tests/data/textures")
    ap.add_argument("--dry-run", action="store_true", help="run the executor instead of a GPU")
    ap.add_argument("--only", help=f"comma-separated probes of {', '.join(PROBES)} (default all)")
    a = ap.parse_args(argv)
    if a.commit:
        commit(a.commit)
        return 0
    if not a.out:
        ap.error("give --out DIR (or --commit DIR)")
    ap_only = a.only.split(",") if a.only else list(PROBES)
    unknown = [p for p in ap_only if p not in PROBES]
    if unknown:
        ap.error(f"--only {','.join(unknown)}: no such probe; valid: {', '.join(PROBES)}")
    if a.dry_run:
        from . import replay
        run, meta = replay.run_case, {"gpu": "dry run: the executor (layoutsim.ptx), not a GPU"}
    else:
        from .measure import Gpu
        gpu = Gpu()
        run, meta = gpu.run_case, gpu.meta()
    arrays = {}
    for name in ap_only:
        geom, make = PROBES[name][0], PROBES[name][3]
        texels, rows = make()
        C.SIZES[geom] = texels.shape                  # this probe's own size (measure.Gpu.array reads it)
        out, _ = run(probe_case(name, len(rows)), texels, rows)
        arrays.update({f"{name}/texels": texels, f"{name}/in": rows, f"{name}/out": out[:len(rows)]})
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(out / "filter_probe.npz", **arrays)
    meta.update(date=datetime.date.today().isoformat(), what=__doc__.splitlines()[0])
    (out / "filter_probe.json").write_text(json.dumps(meta, indent=1) + "\n")
    print(f"filter probe: {sum(len(v) for k, v in arrays.items() if k.endswith('/out'))} samples -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
