"""Surface objects: the `SurfaceArg` a launch takes and where suld.b / sust.b / suq land.

A kernel receives a surface object as a 64-bit value (`cudaSurfaceObject_t`, a `.param .u64`
parameter; `surf2Dread(&v, obj, x_bytes, y)` is `suld.b.2d.b32.trap {%r}, [%rd, {x, y}]`). The
launch is given a `SurfaceArg` over a numpy array laid out as a TextureArg's (texture.py: axes
(layers,) (depth,) (height,) width (, channels)); Run.buffers[i] of its argument is the array's
final content.

    SurfaceArg(np.zeros((64, 64), np.float32))
    SurfaceArg(np.zeros((8, 32, 32, 4), np.uint8), channels=4, layered=True)     # suld.b.a2d

PTX ISA 9.0 section 9.7.11 (suld 9.7.11.1, sust 9.7.11.2, suq 9.7.11.4): the unformatted forms
(.b) move raw bits; the x coordinate is in bytes, the others in elements; a layered form's
first coordinate is the layer. An access outside the surface traps (.trap, the GPU's launch
error), reads zeros and is not written (.zero), or goes to the nearest element (.clamp). The
model asks that the access be the element's size (a b32 access of a 4-byte element, v4.b8 of a
u8 x 4 element) and that x be a multiple of it; both are fetches the H200 measurement covers
(gpu_check/textures), and anything else is a fault, not a guess.
"""
from dataclasses import dataclass

import numpy as np

from .state import Fault
from .texture import texel_array

MODES = ("trap", "clamp", "zero")
HANDLE = 0x5F8 << 32                  # the value the kernel receives for surface i: HANDLE + i
GEOMETRIES = {"1d": (1, False), "2d": (2, False), "3d": (3, False), "a1d": (1, True), "a2d": (2, True)}


@dataclass(frozen=True, eq=False)
class SurfaceArg:
    """A surface object over a CUDA array (see the module docstring)."""
    array: object
    channels: int = 1
    layered: bool = False


class Surface:
    """A SurfaceArg resolved: its bytes as (L, D, H, W, element bytes)."""

    def __init__(self, arg, where):
        self.arg, self.where = arg, where
        extra = int(bool(arg.layered))
        self.format, a = texel_array(arg.array, arg.channels, "surface", where, extra)
        self.dims = a.ndim - 1 - extra
        self.geometry = ("a" if arg.layered else "") + f"{self.dims}d"
        raw = np.ascontiguousarray(a).view(np.uint8).reshape(a.shape[:-1] + (-1,))
        while raw.ndim < 5:
            raw = raw[:, None] if extra else raw[None]
        self.data = raw.copy()                     # (L, D, H, W, e) bytes
        self.e = self.data.shape[-1]

    def final(self):
        """The array's content now (same dtype and shape as given)."""
        a = self.arg.array
        return self.data.reshape(-1).view(a.dtype).reshape(a.shape).copy()

    def query(self, what):
        """suq.width / .height / .depth / .array_size (9.7.11.4); width in elements."""
        L, D, H, W, _ = self.data.shape
        return {"width": W, "height": H, "depth": D, "array_size": L if self.arg.layered else 0}[what]

    def locate(self, geom, coords, layer, nbytes, mode, threads, what):
        """(element index tuples (l, z, y, x), inside mask) of accesses at coords (x in bytes)."""
        if geom != self.geometry:
            raise Fault(threads[0], 0, f"{what}: a .{geom} access to a {self.geometry} surface",
                        "invalid_texture", "surface")
        if nbytes != self.e:
            raise Fault(threads[0], 0, f"{what}: a {nbytes}-byte access to a surface of {self.e}-byte "
                                       f"elements (the model asks for the element's size)",
                        "invalid_texture", "surface")
        x = np.asarray(coords[0], np.int64)
        bad = np.flatnonzero(x % self.e)
        if len(bad):
            raise Fault(threads[bad[0]], int(x[bad[0]]), f"{what}: x = {int(x[bad[0]])} bytes is not a "
                        f"multiple of the {self.e}-byte element", "misaligned", "surface")
        L, D, H, W, _ = self.data.shape
        n = len(x)
        zero = np.zeros(n, np.int64)
        # the layer index is unsigned: with .clamp a negative one is the last layer (tests/data/textures,
        # suld_a1d_4_clamp and suld_a2d_4_clamp, measured on an H100)
        idx = [np.asarray(layer, np.int64) & 0xFFFFFFFF if layer is not None else zero, zero, zero, x // self.e]
        for k, c in enumerate(coords[1:]):
            idx[2 - k] = np.asarray(c, np.int64)
        sizes = (L, D, H, W)
        inside = np.ones(n, bool)
        for i, s in zip(idx, sizes):
            inside &= (i >= 0) & (i < s)
        if mode == "trap" and not inside.all():
            j = int(np.flatnonzero(~inside)[0])
            raise Fault(threads[j], int(x[j]), f"{what}: element ({', '.join(str(int(i[j])) for i in idx[::-1])})"
                        f" is outside the {'x'.join(map(str, sizes[::-1]))} surface (.trap)",
                        "out_of_bounds", "surface")
        idx = [np.clip(i, 0, s - 1) for i, s in zip(idx, sizes)]
        return tuple(idx), (inside if mode == "zero" else np.ones(n, bool))

    def load(self, where):
        idx, ok = where
        out = self.data[idx]
        out[~ok] = 0
        return out

    def store(self, where, data):
        idx, ok = where
        sel = tuple(i[ok] for i in idx)
        self.data[sel] = data[ok]
