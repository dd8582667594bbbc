"""Texture objects: the `TextureArg` a launch takes and the sampler arithmetic of tex / tld4 / txq.

A kernel receives a texture object as a 64-bit value (`cudaTextureObject_t`, a `.param .u64`
parameter; nvcc emits `tex.2d.v4.f32.f32 {..}, [%rd, {x, y}]` for `tex2D<float>(obj, x, y)`).
The launch is given a `TextureArg` for that parameter:

    TextureArg(img)                                        # 2D f32 texture, point, clamp, texel coords
    TextureArg(img, channels=4, filter="linear", address="border", normalized=True)
    TextureArg(bytes_u8, read="normalized", filter="linear")   # u8 read as [0, 1] floats
    TextureArg(vol, address=("wrap", "clamp", "mirror"), normalized=True)          # 3D
    TextureArg(stack, layered=True)   # (layers, H, W): tex.a2d;  cubemap=True: (6, W, W): tex.cube

The array's axes are (layers or faces,) (depth,) (height,) width (, channels): the texel x is the
last axis but the channel axis, which is there when `channels` is 2 or 4. Its dtype is the
channel format: u8 s8 u16 s16 u32 s32 (cudaChannelFormatKindUnsigned/Signed) or f16 f32 (Float).

The rules come from the CUDA C++ Programming Guide, appendix "Texture Fetching" (nearest-point
sampling: T[floor(x)]; linear filtering: tex(x) = (1 - a) T[i] + a T[i + 1] with i = floor(x - 0.5),
a = frac(x - 0.5) "stored in 9-bit fixed point format with 8 bits of fractional value", in 2D and
3D the products of the per-axis weights; wrap and mirror addressing only with normalized
coordinates; border returns the border colour), its "Cubemap Textures" table (face selection),
"Read Mode" (8- and 16-bit integers read as normalized floats: u/(2^n - 1), s/(2^(n-1) - 1)
clamped to -1) and cudaCreateTextureObject's refusals (linear filtering needs a float result;
normalized reads only of 8/16-bit integers), and the PTX ISA 9.0 section 9.7.10 (tex 9.7.10.3,
tld4 9.7.10.4, txq 9.7.10.5). What the documents leave open is written as one `Rules` value
(RULES) whose fields the H200 measurement (gpu_check/textures) settles, each rule a small
function here; `CANDIDATES` lists the alternatives a replay can try.
"""
from dataclasses import dataclass, replace

import numpy as np

from ..errors import LayoutsimError
from .fround import decode_raw, round_to, sum_odd

FORMATS = {np.dtype(k): v for k, v in (("u1", "u8"), ("i1", "s8"), ("<u2", "u16"), ("<i2", "s16"),
                                         ("<u4", "u32"), ("<i4", "s32"), ("<f2", "f16"), ("<f4", "f32"))}
ADDRESS = ("wrap", "clamp", "mirror", "border")
FILTERS = ("point", "linear")
READ_MODES = ("element", "normalized")
GEOMETRIES = {"1d": (1, False), "2d": (2, False), "3d": (3, False), "a1d": (1, True), "a2d": (2, True),
              "cube": (3, False)}
MAX_TEXELS = 1 << 26
HANDLE = 0x7E8 << 32                  # the value the kernel receives for texture i: HANDLE + i


@dataclass(frozen=True)
class Rules:
    """What the documents leave open; each field names one function of this module's tables."""
    coords: str = "exact"         # texel coordinate from x: "exact" (f64), or "fixed8": 8 fraction bits, floor
    alpha: str = "nearest"        # the weight's rounding to 1/256: "nearest" or "floor"
    combine: str = "filter_unit"  # the weighted sum: "filter_unit" (the texture unit's fixed-point sum,
                                  # filter_unit()), "f64" (exact, one rounding to f32), "f32_terms"
                                  # (each w*T rounded, summed in order), "lerp" (f32 lerps)
    missing: tuple = (0, 0, 0, 0)   # the channels a texture lacks (0 or 1, 1 as 1.0 for float results):
                                    # zeros, alpha too (tests/data/textures, every format, an H100)


RULES = Rules()
NORMALIZED_BITS = 22                  # see texel_coordinate
CANDIDATES = {"coords": ("exact", "fixed8"), "alpha": ("nearest", "floor"),
              "combine": ("filter_unit", "f64", "f32_terms", "lerp")}


@dataclass(frozen=True, eq=False)
class TextureArg:
    """A texture object over a CUDA array (see the module docstring)."""
    array: object
    channels: int = 1
    address: object = "clamp"       # one mode, or one per dimension (x, y, z)
    filter: str = "point"
    read: str = "element"           # "element" (cudaReadModeElementType) or "normalized"
    normalized: bool = False        # normalized coordinates
    layered: bool = False
    cubemap: bool = False
    border_color: object = 0        # only (0, 0, 0, 0) is modelled


def _choice(value, valid, what, where):
    if value not in valid:
        raise LayoutsimError(f"{where}: {what} {value!r}: valid {', '.join(map(str, valid))}")
    return value


def texel_array(array, channels, what, where, extra_axes):
    """(format name, array as (..., channels)) of a texture's or surface's array, checked."""
    a = array
    if not isinstance(a, np.ndarray) or a.dtype.newbyteorder("<") not in FORMATS:
        fmts = ", ".join(FORMATS.values())
        raise LayoutsimError(f"{where}: give the {what} as a numpy array of {fmts}, not "
                             f"{getattr(a, 'dtype', type(a).__name__)}")
    _choice(channels, (1, 2, 4), "channels", where)
    shape = a.shape if channels == 1 else a.shape[:-1]
    if channels > 1 and (a.ndim < 2 or a.shape[-1] != channels):
        raise LayoutsimError(f"{where}: channels={channels}: the array's last axis must be the {channels} "
                             f"channels; its shape is {a.shape}")
    if not 1 <= len(shape) - extra_axes <= 3 or min(shape, default=0) < 1:
        raise LayoutsimError(f"{where}: array shape {a.shape}: give {'(layers, ) ' * extra_axes}width, "
                             f"height x width or depth x height x width texels (x last) with channels="
                             f"{channels}")
    if a.size > MAX_TEXELS:
        raise LayoutsimError(f"{where}: {a.size} elements; a {what} may hold at most {MAX_TEXELS}")
    return FORMATS[a.dtype.newbyteorder("<")], np.ascontiguousarray(a).reshape(shape + (channels,))


class Texture:
    """A TextureArg resolved: texels as (L, D, H, W, C), the sampler state, the geometry."""

    def __init__(self, arg, where):
        self.arg, self.where = arg, where
        extra = int(bool(arg.layered or arg.cubemap))
        if arg.layered and arg.cubemap:
            raise LayoutsimError(f"{where}: layered cubemaps (tex.acube) are not modelled")
        self.format, a = texel_array(arg.array, arg.channels, "texture", where, extra)
        self.dims = a.ndim - 1 - extra
        _choice(arg.filter, FILTERS, "filter", where)
        _choice(arg.read, READ_MODES, "read", where)
        modes = (arg.address,) * 3 if isinstance(arg.address, str) else tuple(arg.address)
        if len(modes) < self.dims:
            raise LayoutsimError(f"{where}: address {arg.address!r}: give one mode or one per dimension "
                                 f"({self.dims})")
        self.modes = tuple(_choice(m, ADDRESS, "address mode", where) for m in modes[:self.dims])
        # the y mode of a 1D texture's hidden second axis (see fetch): y's if given, else x's
        self.hidden_mode = _choice(modes[min(1, len(modes) - 1)], ADDRESS, "address mode", where)
        if not arg.normalized and any(m in ("wrap", "mirror") for m in self.modes):
            raise LayoutsimError(f"{where}: address {self.modes}: wrap and mirror need normalized=True "
                                 f"(CUDA Programming Guide, Texture Fetching: only with normalized coordinates)")
        small_int = self.format in ("u8", "s8", "u16", "s16")
        if arg.read == "normalized" and not small_int:
            raise LayoutsimError(f"{where}: read='normalized' reads 8- and 16-bit integers as floats; "
                                 f"this texture is {self.format}")
        self.float_result = self.format in ("f16", "f32") or arg.read == "normalized"
        if arg.filter == "linear" and not self.float_result:
            raise LayoutsimError(f"{where}: filter='linear' needs a float result (f16/f32 texels or "
                                 f"read='normalized'); cudaCreateTextureObject refuses {self.format} "
                                 f"with read='element'")
        if np.any(np.asarray(arg.border_color) != 0):
            raise LayoutsimError(f"{where}: border_color {arg.border_color!r}: only 0 is modelled")
        if arg.cubemap and (self.dims != 2 or a.shape[0] != 6 or a.shape[1] != a.shape[2]):
            raise LayoutsimError(f"{where}: a cubemap is (6, W, W[, channels]) texels; shape {arg.array.shape}")
        while a.ndim < 5:
            a = a[:, None] if extra else a[None]
        self.texels = a                                          # (L, D, H, W, C)
        self.geometry = "cube" if arg.cubemap else ("a" if arg.layered else "") + f"{self.dims}d"
        self.values = _channel_values(a, self.format, arg.read)  # float64 (the float result's value)

    def size(self, axis):
        """Texels along axis 0 (x), 1 (y), 2 (z); layers: axis 'layers'."""
        L, D, H, W, _ = self.texels.shape
        return {0: W, 1: H, 2: D, "layers": L}[axis]

    def check(self, geom, rtype):
        """Why a fetch of geometry `geom` with result type `rtype` is undefined here, or None."""
        if geom != self.geometry:
            return f"a tex.{geom} fetch from a {self.geometry} texture"
        if (rtype == "f32") != self.float_result:
            got = "float" if self.float_result else f"{self.format} (read='element')"
            return f"a .{rtype} result from a texture that returns {got}"
        return None

    def fetch(self, geom, coords, layer, integer, rules=None):
        """Result words uint32 [n, 4] of tex.geom at coords (x[, y[, z]] float64 or int64 arrays)."""
        rules = rules or RULES
        if geom == "cube":
            layer, coords = cube_face(*coords)
            normalized = True
        else:
            normalized = self.arg.normalized and not integer
            # the layer index is unsigned: a negative one is the last layer, not the first
            # (tests/data/textures, a2d_s16_element, measured on an H100)
            layer = np.zeros(len(coords[0]), np.int64) if layer is None else \
                np.minimum(np.asarray(layer, np.int64) & 0xFFFFFFFF, self.size("layers") - 1)
        n = self.dims
        if self.arg.filter == "point" or integer:
            idx, ok = [], np.ones(len(layer), bool)
            if integer and geom == "1d":
                # tex.1d with .s32 coordinates is tex1Dfetch, a read of a linear-memory texture: on a
                # CUDA array (all a TextureArg is) the GPU returns zeros (tests/data/textures,
                # 1d_f32_point_int, 1d_s32_int, 1d_f32_linear_int_border, measured on an H100)
                ok[:] = False
            for ax in range(n):
                u = texel_coordinate(coords[ax], self.size(ax), normalized, integer, rules)
                # integer coordinates are a texel fetch: outside the texture it reads zeros whatever
                # the address mode (2d_f32_linear_int, 3d_f32_point_int: clamp textures)
                i, v = address(np.floor(u).astype(np.int64), self.size(ax), "border" if integer else self.modes[ax])
                idx.append(i)
                ok &= v
            return self._words(self._texel(layer, idx, ok), rules)
        # a 1D texture (layered too) is filtered as a 2D one of height 1 sampled at y = 0: texel
        # row -1 (y's address mode applies) weighs half, row 0 the other half, so that with
        # border addressing the result is half the 1D filter's (tests/data/textures,
        # 1d_u8_norm_linear_border, every word, an H100; a1d: not measured)
        axes = [(coords[ax], self.size(ax), self.modes[ax]) for ax in range(n)]
        if n == 1:
            axes.append((np.zeros(len(layer)), 1, self.hidden_mode))
        base, alphas, weights = [], [], []
        for x, size, mode in axes:
            u = texel_coordinate(x, size, normalized, False, rules) - 0.5
            if mode == "clamp":
                # clamp clamps the coordinate (to the centres of the first and last texel), so
                # that the weight toward the clamped side is 0. It shows in 3D only, where the z
                # weight splits the x and y weights (corner_weights): with texel indices clamped
                # instead, 361 words of 3d_f32_linear differ, 360 of them samples outside the
                # texture; with the coordinate clamped, 1 (inside)
                u = np.clip(u, 0, size - 1)
            i0 = np.floor(u)
            base.append(i0.astype(np.int64))
            alphas.append(ALPHA[rules.alpha](u - i0))
        corners, raws = [], []
        for k in range(1 << len(axes)):
            idx, ok, w = [], np.ones(len(layer), bool), np.ones(len(layer), np.int64)
            for ax, (_, size, mode) in enumerate(axes):
                bit = (k >> ax) & 1
                i, v = address(base[ax] + bit, size, mode)
                idx.append(i)
                ok &= v
                w = w * (alphas[ax] if bit else 256 - alphas[ax])
            corners.append(self._values(layer, idx, ok))
            raws.append(self._raw(layer, idx, ok))
            weights.append(w)
        if rules.combine == "filter_unit":
            vals = np.stack(corners, 1) if self.format in ("f16", "f32") else np.stack(raws, 1)
            out = filter_unit(self.format, vals, np.stack(corner_weights(alphas), 1))
        else:
            out = COMBINE[rules.combine](np.stack(corners, 1), np.stack(weights, 1), len(axes), alphas)
        return self._float_words(out, rules)

    def gather(self, comp, coords, rules=None):
        """tld4.comp.2d: channel `comp` of the 2x2 footprint of bilinear filtering, in the PTX ISA's
        order (i, j+1), (i+1, j+1), (i+1, j), (i, j) (9.7.10.4)."""
        rules = rules or RULES
        layer = np.zeros(len(coords[0]), np.int64)
        base = []
        for ax in range(2):
            u = texel_coordinate(coords[ax], self.size(ax), self.arg.normalized, False, rules) - 0.5
            # the footprint of the coordinate with the filter's 8 fraction bits (rounded as the
            # weights are): 1.998 texels gathers from texel 2 (tests/data/textures, tld4_*, an H100)
            i0 = np.floor(u)
            base.append(i0.astype(np.int64) + (ALPHA[rules.alpha](u - i0) >> 8))
        out = np.zeros((len(layer), 4), np.uint32)
        for slot, (dx, dy) in enumerate(((0, 1), (1, 1), (1, 0), (0, 0))):
            ix, okx = address(base[0] + dx, self.size(0), self.modes[0])
            iy, oky = address(base[1] + dy, self.size(1), self.modes[1])
            out[:, slot] = self._words(self._texel(layer, [ix, iy], okx & oky), rules)[:, comp]
        return out

    # ---- texels to result words -------------------------------------------------------------
    def _texel(self, layer, idx, ok):
        """(channel values [n, C] as stored, inside mask) of texels; outside: the border (zeros)."""
        t = self.texels
        i = list(idx) + [np.zeros_like(layer)] * (3 - len(idx))
        vals = t[layer, i[2], i[1], np.where(ok, i[0], 0)] if len(idx) else t[layer, 0, 0, 0]
        return vals, ok

    def _raw(self, layer, idx, ok):
        """The stored integers of texels (zeros outside): what the filter of a normalized read sums."""
        i = list(idx) + [np.zeros_like(layer)] * (3 - len(idx))
        v = self.texels[layer, i[2], i[1], np.where(ok, i[0], 0)].astype(np.int64)
        return np.where(ok[:, None], v, 0)

    def _values(self, layer, idx, ok):
        i = list(idx) + [np.zeros_like(layer)] * (3 - len(idx))
        v = self.values[layer, i[2], i[1], np.where(ok, i[0], 0)]
        return np.where(ok[:, None], v, 0.0)

    def _words(self, got, rules):
        vals, ok = got
        if self.float_result:
            f = self.values_of(vals)
            return self._float_words(np.where(ok[:, None], f, 0.0), rules)
        raw = vals.astype(np.int64)
        raw = np.where(ok[:, None], raw, 0)
        out = np.tile(np.asarray(rules.missing, np.int64), (len(raw), 1))
        out[:, :raw.shape[1]] = raw
        return (out & 0xFFFFFFFF).astype(np.uint32)

    def values_of(self, vals):
        return _channel_values(vals, self.format, self.arg.read)

    def _float_words(self, f, rules):
        out = np.tile(np.where(np.asarray(rules.missing) == 1, np.float32(1), np.float32(0)),
                      (len(f), 1)).astype(np.float32)
        out[:, :f.shape[1]] = f.astype(np.float32)
        return out.view(np.uint32)

    def query(self, what):
        """txq.width / .height / .depth / .array_size (9.7.10.5)."""
        L, D, H, W, _ = self.texels.shape
        return {"width": W, "height": H, "depth": D,
                "array_size": L if self.arg.layered else 0}[what]


def _channel_values(a, fmt, read):
    """Float64 value of each stored channel as a float result reads it (read mode applied)."""
    v = a.astype(np.float64)
    if read == "normalized":
        bits = a.dtype.itemsize * 8
        if fmt[0] == "u":
            v = v / ((1 << bits) - 1)
        else:
            v = np.maximum(v / ((1 << (bits - 1)) - 1), -1.0)
        v = v.astype(np.float32).astype(np.float64)   # rounded once to f32 (see the module docstring)
    return v


# ---- per-axis rules ---------------------------------------------------------------------------
def texel_coordinate(x, size, normalized, integer, rules):
    """The coordinate in texels (float64) of texture coordinate x along an axis of `size` texels."""
    if integer:
        return np.asarray(x, np.float64)
    if normalized:
        # a normalized coordinate keeps NORMALIZED_BITS fraction bits (floor) before it is scaled:
        # 0x3e2aaaab (1/6 rounded up) times 6 texels is row 0 on the GPU, row 1 exactly
        # (tests/data/textures, the three 2d_f32_point_*_norm cases, an H100: any of 16..25 bits
        # gives their rows). Of the linear cases, 2d_s16x2_norm_linear_wrap needs at most 22
        # (y = 0x3fb5caab: 23 bits put its weight at 5.50006 / 256, rounded to 6; the GPU used
        # 5) and 1d_f32_linear_wrap, 2d_f32_linear_mirror_norm at least 21: 21 and 22 give every
        # recorded case; filter_probe's "norm_bits" probe decides between them
        x = np.floor(np.asarray(x, np.float64) * 2.0 ** NORMALIZED_BITS) / 2.0 ** NORMALIZED_BITS
    u = np.asarray(x, np.float64) * (size if normalized else 1)
    if rules.coords == "fixed8":
        u = np.floor(u * 256) / 256
    return u


def address(i, size, mode):
    """(index inside 0..size-1, inside mask) of integer texel index i under an address mode."""
    if mode == "clamp":
        return np.clip(i, 0, size - 1), np.ones(i.shape, bool)
    if mode == "border":
        ok = (i >= 0) & (i < size)
        return np.where(ok, i, 0), ok
    if mode == "wrap":
        return np.mod(i, size), np.ones(i.shape, bool)
    m = np.mod(i, 2 * size)                                  # mirror
    return np.where(m < size, m, 2 * size - 1 - m), np.ones(i.shape, bool)


ALPHA = {"nearest": lambda f: np.floor(f * 256 + 0.5).astype(np.int64),
         "floor": lambda f: np.floor(f * 256).astype(np.int64)}


def _combine_f64(vals, weights, n, alphas):
    """sum(w_k T_k) / 256^n in float64 (weights are integers 0..256 per axis), rounded once."""
    return (vals * weights[..., None]).sum(1) / float(256 ** n)


def _combine_terms(vals, weights, n, alphas):
    w = (weights / float(256 ** n)).astype(np.float32)
    acc = np.zeros(vals.shape[::2], np.float32)
    for k in range(vals.shape[1]):
        acc = (acc + w[:, k, None] * vals[:, k].astype(np.float32)).astype(np.float32)
    return acc


def _combine_lerp(vals, weights, n, alphas):
    """Lerps along x, then y, then z, in f32: a + w (b - a) with one rounding (fma)."""
    cur = vals.astype(np.float32)
    for ax in range(n):
        w = (alphas[ax] / 256.0)[:, None]
        a, b = cur[:, 0::2], cur[:, 1::2]
        d = (b.astype(np.float64) - a).astype(np.float32)
        cur = (a + w[:, None] * d).astype(np.float32)
    return cur[:, 0]


def corner_weights(alphas):
    """The filter's corner weights in 1/256 (they sum to 256), corner k's bit ax set for the +1
    texel along axis ax (k = x + 2 y + 4 z). The filter splits 256 along z (exactly: 256 - a_z and
    a_z; 1D and 2D: one part, 256), each part W along x (x + 1 takes W a_x / 256 rounded to
    nearest, ties up), each column C along y so that the corner on the diagonal takes a tie:
    w(+1, +1) = C a_y / 256 and w(0, 0) = C (256 - a_y) / 256, rounded to nearest, ties up, the
    other corner the rest. In 2D that is a_x a_y / 256 rounded half up at (+1, +1) and the others
    from the per-axis sums (gpu_check/textures/filter_probe.py, 65536 samples on an H100,
    2026-12-07, all equal). 3D: of the six orders of the three splits, z-x-y is the one whose
    weights give the probe's 3D samples (32768 2x2x2 blocks of random texels at random weights:
    32689 equal with filter_unit's passes, the next order 532 differ), and of the 64 ways to give
    each split's ties to one side, the one above (79 differ, the next 446). alphas: 2 or 3 arrays
    (a 1D texture is filtered as a 2D one, see Texture.fetch)."""
    ax, ay = alphas[:2]
    parts = [256 - alphas[2], alphas[2]] if len(alphas) > 2 else [np.full(len(ax), 256, np.int64)]
    out = [None] * (4 * len(parts))
    for p, part in enumerate(parts):
        x1 = (part * ax + 128) >> 8
        for xb, col in enumerate((part - x1, x1)):
            diag = (col * (ay if xb else 256 - ay) + 128) >> 8
            out[4 * p + xb], out[4 * p + 2 + xb] = (col - diag, diag) if xb else (diag, col - diag)
    return out


def filter_unit(fmt, vals, weights):
    """Linear filtering's sum as the texture unit computes it, bit for bit (gpu_check/textures/
    filter_probe.py: designed texels at exact weights on an H100, 2026-12-07; 1D and 2D f32, 1D f16,
    u8 and s16 read as normalized floats, every sample equal; 3D f32: 32689 of 32768). vals [n,
    corners, channels] (float values of f16/f32 texels, else the stored integers), weights [n,
    corners] in 1/256 (corner_weights). Floats: the filter works in passes of a 2x2 footprint (3D:
    one per z); in a pass each texel with a nonzero weight is made a fixed-point number on the
    grid 2^(M - F), M the binary exponent of the pass's largest (|T| < 2^M), truncated toward zero,
    F the format's significand bits + 4 (f32: 28, f16: 15); the weighted sum of both passes is
    exact; the result is it over 256, rounded to the texel's format to nearest, ties away from
    zero (3D: a grid for all eight texels gives 6019 of the probe's samples wrong, one per pass
    79; the 79 are one ulp off and no grid explains them). Normalized integers: the stored
    integers' weighted sum times the 16-bit scale of NORMALIZED_16 in steps of 1/8 (each term
    floored), rounded half up (toward +inf), then divided by 65535 (unsigned) or 32767 (signed, at
    least -1) and rounded to f32."""
    w = weights[..., None]
    if fmt in ("f16", "f32"):
        bits = {"f32": 24, "f16": 11}[fmt]
        total = 0.0
        for p in range(0, vals.shape[1], 4):           # one pass per 2x2 footprint (3D: per z)
            v, wp = vals[:, p:p + 4], w[:, p:p + 4]
            live = (wp > 0) & (v != 0) & np.isfinite(v)
            lowest = np.iinfo(np.int32).min
            exps = np.where(live, np.frexp(np.where(live, v, 1.0))[1], lowest)
            m = exps.max(axis=1, keepdims=True)
            grid = np.exp2(np.where(m == lowest, 0, m) - (bits + FILTER_GUARD_BITS)).astype(np.float64)
            # a pass's sum is exact in float64 (at most 28 + 8 bits per term, 4 terms); the
            # passes' sum is rounded to odd, so that the one rounding below stays exact
            total = sum_odd(total, (np.trunc(v / grid) * grid * wp).sum(1) / 256.0)
        out = decode_raw(round_to(total, fmt, "rna"), fmt)
        bad = ~np.isfinite(vals).all(1)         # infinities and NaNs: not probed; the plain sum stands in
        return np.where(bad, (vals * w).sum(1) / 256.0, out)
    # the 16-bit result k in units of 1/8 (floor), then rounded half up: k = s m with s the stored
    # integers' weighted sum (weights in 1/256) and m the sum of 2^e over NORMALIZED_16's terms
    terms, den = NORMALIZED_16[fmt]
    s = (vals.astype(np.int64) * w).sum(1)
    acc = sum(s >> (8 - 3 - e) if e <= 5 else s << (e - 5) for e in terms)
    return np.maximum(((acc + 4) >> 3) / den, -1.0).astype(np.float32).astype(np.float64)


FILTER_GUARD_BITS = 4         # the fixed-point grid's bits beyond the texel format's significand
# a normalized read's texel as the filter's 16-bit integer: the powers of two e of its scale
# sum(2^e) / 256 per stored unit, and the divisor of the result. u8: 2^16 - 1 over 2^8 - 1 =
# 2^8 + 2^0 (the byte repeated: u * 257); u16, s16: as stored; s8: 32767 over 127 = 2^8 + 2^1 +
# 2^-7 + 2^-14 + ..., its first three terms (tests/data/textures, 2d_s8_norm_linear, an H100: all
# 2048 samples, 1473 distinct sums, with these three and the 1/8 steps of filter_unit; with a
# fourth term, or 2 or 4 guard bits, 58 and more differ; u8's and the 16-bit formats' results
# are the same with or without the 1/8 steps)
NORMALIZED_16 = {"u8": ((8, 0), 65535), "u16": ((0,), 65535), "s16": ((0,), 32767), "s8": ((8, 1, -7), 32767)}


COMBINE = {"f64": _combine_f64, "f32_terms": _combine_terms, "lerp": _combine_lerp}


def cube_face(x, y, z):
    """(face, (s, t) normalized) of a cubemap direction: the CUDA Programming Guide's table
    (Cubemap Textures): the major axis picks the face, s = (sc / |ma| + 1) / 2, t likewise. On a
    tie z wins over y and y over x, and (0, 0, 0) is the +z face (tests/data/textures,
    cube_f32_point, an H100)."""
    x, y, z = (np.asarray(c, np.float64) for c in (x, y, z))
    ax, ay, az = np.abs(x), np.abs(y), np.abs(z)
    zm = (az >= ax) & (az >= ay)
    ym = ~zm & (ay >= ax)
    xm = ~zm & ~ym
    face = np.where(xm, np.where(x >= 0, 0, 1), np.where(ym, np.where(y >= 0, 2, 3), np.where(z >= 0, 4, 5)))
    ma = np.where(xm, ax, np.where(ym, ay, az))
    sc = np.choose(face, (-z, z, x, x, x, -x))
    tc = np.choose(face, (-y, -y, z, -z, -y, -y))
    ma = np.where(ma == 0, 1.0, ma)
    s = ((sc / ma).astype(np.float32) + np.float32(1)) * np.float32(0.5)
    t = ((tc / ma).astype(np.float32) + np.float32(1)) * np.float32(0.5)
    return face.astype(np.int64), [s.astype(np.float64), t.astype(np.float64)]


def with_rules(**kw):
    """RULES with some fields replaced (the replay's candidates)."""
    return replace(RULES, **kw)
