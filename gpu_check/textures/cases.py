"""The cases of the texture/surface measurement: which object (format, channels, geometry,
address, filter, read mode, normalized coordinates), which probe kernel (probes.py) and the
deterministic inputs (texels and coordinate rows). measure.py runs them on the GPU; the replay
(tests/ptx/test_textures_h200.py) runs the recorded inputs through the executor.

A case is a dict: name, kernel, kind ("tex", "query", "suld", "sust"), obj (the TextureArg /
SurfaceArg keywords but the array), n (threads); `inputs(case)` -> (texels, in-rows uint32 [n, 4]).
"""
import zlib

import numpy as np

DTYPES = {"u8": np.uint8, "s8": np.int8, "u16": np.uint16, "s16": np.int16, "u32": np.uint32,
          "s32": np.int32, "f16": np.float16, "f32": np.float32}
SIZES = {"1d": (13,), "2d": (6, 8), "3d": (4, 5, 8), "a1d": (3, 13), "a2d": (3, 6, 8), "cube": (6, 8, 8)}
N = 2048


def _rng(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


def texels(name, fmt, geom, channels):
    """Deterministic texels: floats with spread exponents, integers over the whole range."""
    r = _rng(name + "/texels")
    shape = SIZES[geom] + ((channels,) if channels > 1 else ())
    dt = np.dtype(DTYPES[fmt])
    if dt.kind == "f":
        v = r.standard_normal(shape) * np.exp2(r.integers(-6, 9, shape))
        return v.astype(dt)
    info = np.iinfo(dt)
    return r.integers(info.min, int(info.max) + 1, shape, dtype=np.int64).astype(dt)


def _sizes(geom):
    """(x, y, z) texel counts of a geometry's coordinate axes."""
    s = SIZES[geom]
    s = s[1:] if geom in ("a1d", "a2d", "cube") else s
    return tuple(reversed(s))


def tex_coords(name, geom, normalized, integer, n=N):
    """Rows [n, 4] of coordinate words: a fine sweep of one texel in 1/512 steps along x then y,
    half-texel and integer positions, and random points from 3 texels outside to 3 beyond."""
    r = _rng(name + "/coords")
    sizes = _sizes(geom)
    dims = 3 if geom == "cube" else len(sizes)
    rows = np.zeros((n, 4), np.float64)
    if geom == "cube":
        d = r.standard_normal((n, 3))
        d[: n // 8] = np.round(d[: n // 8])                     # axis-aligned and tied directions
        rows[:, :3] = d
        rows[:, 3] = 0
        return rows.astype(np.float32).view(np.uint32)
    q = n // 4
    pos = np.stack([r.uniform(-3, s + 3, n) for s in sizes], 1)
    pos[:q, 0] = 2 + np.arange(q) / q                        # steps of 1/512 (n = 2048)
    pos[q:2 * q, min(1, dims - 1)] = 1 + np.arange(q) / q
    half = np.arange(q) % (2 * sizes[0] + 13) / 2.0 - 3
    pos[2 * q:3 * q, 0] = half
    if integer:
        ints = np.floor(pos).astype(np.int64)
        layer = r.integers(-2, SIZES[geom][0] + 2, n)
        out = np.zeros((n, 4), np.int64)
        out[:, :dims] = ints
        if geom in ("a1d", "a2d"):
            out[:, 1:1 + dims], out[:, 0] = ints, layer
        return out.astype(np.int32).view(np.uint32)
    if normalized:
        pos = pos / np.asarray(sizes, np.float64)
    f = pos.astype(np.float32)
    if geom in ("a1d", "a2d"):
        out = np.zeros((n, 4), np.uint32)
        out[:, 0] = r.integers(-2, SIZES[geom][0] + 2, n).astype(np.int32).view(np.uint32)
        out[:, 1:1 + dims] = f.view(np.uint32)
        return out
    rows = np.zeros((n, 4), np.float32)
    rows[:, :dims] = f
    return rows.view(np.uint32)


def _tex(name, kernel, fmt, geom, channels=1, address="clamp", filter="point", read="element",
         normalized=False, extra=None):
    obj = dict(fmt=fmt, geom=geom, channels=channels, address=address, filter=filter, read=read,
               normalized=normalized, layered=geom in ("a1d", "a2d"), cubemap=geom == "cube")
    return dict(name=name, kernel=kernel, kind="tex", obj=obj, n=N, extra=extra or {})


def tex_cases():
    out = []
    for filt in ("point", "linear"):
        for addr, norm in (("clamp", False), ("border", False), ("clamp", True), ("border", True),
                           ("wrap", True), ("mirror", True)):
            out.append(_tex(f"2d_f32_{filt}_{addr}_{'norm' if norm else 'texel'}", "tex_2d_f32_f32", "f32",
                            "2d", address=addr, filter=filt, normalized=norm))
    out += [_tex("2d_f32x4_linear", "tex_2d_f32_f32", "f32", "2d", 4, filter="linear"),
            _tex("2d_f32x2_point_border", "tex_2d_f32_f32", "f32", "2d", 2, "border"),
            _tex("2d_f16_linear", "tex_2d_f32_f32", "f16", "2d", filter="linear"),
            _tex("2d_f16x4_point", "tex_2d_f32_f32", "f16", "2d", 4)]
    for fmt in ("u8", "s8", "u16", "s16"):
        out += [_tex(f"2d_{fmt}_norm_linear", "tex_2d_f32_f32", fmt, "2d", filter="linear", read="normalized"),
                _tex(f"2d_{fmt}_norm_point_border", "tex_2d_f32_f32", fmt, "2d", address="border",
                     read="normalized")]
    out += [_tex("2d_u8x4_norm_linear", "tex_2d_f32_f32", "u8", "2d", 4, filter="linear", read="normalized"),
            _tex("2d_s16x2_norm_linear_wrap", "tex_2d_f32_f32", "s16", "2d", 2, "wrap", "linear", "normalized",
                 True)]
    for fmt in ("u8", "s8", "u16", "s16", "u32", "s32"):
        for r in ("s32", "u32"):
            out.append(_tex(f"2d_{fmt}_element_{r}", f"tex_2d_{r}_f32", fmt, "2d", address="border"))
    out += [_tex("2d_u8x4_element", "tex_2d_u32_f32", "u8", "2d", 4),
            _tex("1d_f32_linear", "tex_1d_f32_f32", "f32", "1d", filter="linear"),
            _tex("1d_f32_linear_wrap", "tex_1d_f32_f32", "f32", "1d", address="wrap", filter="linear",
                 normalized=True),
            _tex("1d_u8_norm_linear_border", "tex_1d_f32_f32", "u8", "1d", address="border", filter="linear",
                 read="normalized"),
            _tex("1d_f32_point_int", "tex_1d_f32_s32", "f32", "1d"),
            _tex("1d_f32_linear_int_border", "tex_1d_f32_s32", "f32", "1d", address="border", filter="linear"),
            _tex("1d_s32_int", "tex_1d_s32_s32", "s32", "1d"),
            _tex("2d_f32_linear_int", "tex_2d_f32_s32", "f32", "2d", filter="linear"),
            _tex("2d_u16_int_border", "tex_2d_u32_s32", "u16", "2d", address="border"),
            _tex("3d_f32_linear", "tex_3d_f32_f32", "f32", "3d", filter="linear"),
            _tex("3d_f32_point_border_norm", "tex_3d_f32_f32", "f32", "3d", address="border", normalized=True),
            _tex("3d_u8_norm_linear_mirror", "tex_3d_f32_f32", "u8", "3d", address="mirror", filter="linear",
                 read="normalized", normalized=True),
            _tex("3d_f32_point_int", "tex_3d_f32_s32", "f32", "3d"),
            _tex("a1d_f32_linear", "tex_a1d_f32_f32", "f32", "a1d", filter="linear"),
            _tex("a2d_f32_linear_border", "tex_a2d_f32_f32", "f32", "a2d", address="border", filter="linear"),
            _tex("a2d_s16_element", "tex_a2d_s32_f32", "s16", "a2d"),
            _tex("cube_f32_point", "tex_cube_f32_f32", "f32", "cube", normalized=True),
            _tex("cube_f32_linear", "tex_cube_f32_f32", "f32", "cube", filter="linear", normalized=True),
            _tex("cube_u8_norm_linear", "tex_cube_f32_f32", "u8", "cube", filter="linear", read="normalized",
                 normalized=True),
            _tex("2d_f32_linear_level", "tex_level_2d_f32_f32", "f32", "2d", filter="linear",
                 extra={"lod": True}),
            _tex("2d_f32_linear_grad", "tex_grad_2d_f32_f32", "f32", "2d", filter="linear",
                 extra={"lod": True})]
    for comp in "rgba":
        out.append(_tex(f"tld4_{comp}_f32x4", f"tld4_{comp}_2d_f32", "f32", "2d", 4, "border"))
        out.append(_tex(f"tld4_{comp}_f32x1", f"tld4_{comp}_2d_f32", "f32", "2d", 1, "clamp", normalized=True))
    out += [_tex("tld4_g_s8x4", "tld4_g_2d_s32", "s8", "2d", 4),
            _tex("tld4_r_u8x2", "tld4_r_2d_u32", "u8", "2d", 2, "border"),
            _tex("tld4_a_u8x2_norm", "tld4_a_2d_f32", "u8", "2d", 2, read="normalized")]
    return out


def query_cases():
    out = []
    for geom, fmt, ch, kw in (("2d", "f32", 1, dict(address="border", filter="linear", normalized=True)),
                              ("3d", "u8", 4, dict(address="wrap", normalized=True, read="normalized")),
                              ("a2d", "s16", 2, {}), ("1d", "u32", 1, {}), ("cube", "f16", 1, dict(normalized=True))):
        for k in ("txq", "txq_more"):
            c = _tex(f"{k}_{geom}", k, fmt, geom, ch, **kw)
            c.update(kind="query" if k == "txq" else "query_more", n=1)
            out.append(c)
    for geom, fmt, ch in (("2d", "u32", 1), ("3d", "u8", 4), ("a2d", "u16", 1)):
        for k in ("suq", "suq_more"):
            out.append(dict(name=f"{k}_{geom}", kernel=k, kind="query" if k == "suq" else "query_more", n=1,
                            obj=dict(fmt=fmt, geom=geom, channels=ch, surface=True, layered=geom[0] == "a")))
    return out


SURF_FORMATS = {1: ("u8", 1), 2: ("u16", 1), 4: ("u32", 1), 8: ("u32", 2), 16: ("u32", 4)}


def surface_cases():
    out = []
    for nbytes, (fmt, ch) in SURF_FORMATS.items():
        for mode in ("trap", "clamp", "zero"):
            out.append(dict(name=f"suld_2d_{nbytes}_{mode}", kernel=f"suld_2d_{nbytes}_{mode}", kind="suld",
                            n=512, obj=dict(fmt=fmt, geom="2d", channels=ch, surface=True), mode=mode))
        out.append(dict(name=f"sust_2d_{nbytes}_zero", kernel=f"sust_2d_{nbytes}_zero", kind="sust", n=512,
                        obj=dict(fmt=fmt, geom="2d", channels=ch, surface=True), mode="zero"))
    for geom in ("1d", "3d", "a1d", "a2d"):
        for mode in ("clamp", "zero"):
            out.append(dict(name=f"suld_{geom}_4_{mode}", kernel=f"suld_{geom}_4_{mode}", kind="suld", n=512,
                            obj=dict(fmt="u32", geom=geom, channels=1, surface=True, layered=geom[0] == "a"),
                            mode=mode))
        out.append(dict(name=f"sust_{geom}_4_zero", kernel=f"sust_{geom}_4_zero", kind="sust", n=512,
                        obj=dict(fmt="u32", geom=geom, channels=1, surface=True, layered=geom[0] == "a"),
                        mode="zero"))
    for k in range(6):                    # one out-of-range clamped store per launch (no collisions)
        out.append(dict(name=f"sust_2d_4_clamp_{k}", kernel="sust_2d_4_clamp", kind="sust", n=1,
                        obj=dict(fmt="u32", geom="2d", channels=1, surface=True), mode="clamp", single=k))
    return out


def surface_rows(case):
    """In-rows of a surface case: x in bytes (element multiples), y, z or the layer, the value."""
    r = _rng(case["name"] + "/coords")
    geom, n = case["obj"]["geom"], case["n"]
    e = int(case["kernel"].split("_")[2])
    sizes = _sizes(geom) if geom not in ("a1d", "a2d") else _sizes(geom)
    layered = geom in ("a1d", "a2d")
    inside = case["mode"] == "trap"
    cols = []
    for ax, s in enumerate(sizes):
        cols.append(r.integers(0, s, n) if inside else r.integers(-2, s + 2, n))
    cols[0] = cols[0] * e
    if case["kind"] == "sust" and case["mode"] == "zero" and n > 1:
        # every in-range element once, in a random order, then out-of-range rows (dropped by .zero)
        grid = np.stack(np.meshgrid(*[np.arange(s) for s in sizes], indexing="ij"), -1).reshape(-1, len(sizes))
        grid = grid[r.permutation(len(grid))][:n]
        for ax in range(len(sizes)):
            cols[ax][:len(grid)] = grid[:, ax] * (e if ax == 0 else 1)
            cols[ax][len(grid):] = np.where(r.random(n - len(grid)) < 0.5, -1, sizes[ax]) * (e if ax == 0 else 1)
    if "single" in case:
        corner = [(-1, 2), (8, 3), (3, -1), (4, 6), (-5, -7), (100, 100)][case["single"]]
        cols = [np.array([corner[0] * e]), np.array([corner[1]])]
    rows = np.zeros((n, 4), np.int64)
    if layered:
        layer = r.integers(0, SIZES[geom][0], n) if inside else r.integers(-1, SIZES[geom][0] + 1, n)
        rows[:, 0] = layer
        rows[:, 1:1 + len(cols)] = np.stack(cols, 1)
    else:
        rows[:, :len(cols)] = np.stack(cols, 1)
    rows[:, 3] = r.integers(0, 1 << 32, n)
    return rows.astype(np.uint32) if rows.min() >= 0 else (rows & 0xFFFFFFFF).astype(np.uint32)


def inputs(case):
    """(texels or surface array, in-rows uint32 [n, 4]) of a case."""
    o = case["obj"]
    arr = texels(case["name"], o["fmt"], o["geom"], o["channels"])
    if case["kind"] in ("suld", "sust"):
        return arr, surface_rows(case)
    if case["kind"] in ("query", "query_more"):
        return arr, np.zeros((4, 4), np.uint32)
    integer = case["kernel"].endswith("_s32") and case["kernel"].startswith("tex_")
    rows = tex_coords(case["name"], o["geom"], o["normalized"], integer, case["n"])
    if case["extra"].get("lod"):
        r = _rng(case["name"] + "/lod")
        rows[:, 2:4] = r.uniform(-2, 4, (case["n"], 2)).astype(np.float32).view(np.uint32)
    return arr, rows


def cases():
    return tex_cases() + query_cases() + surface_cases()
