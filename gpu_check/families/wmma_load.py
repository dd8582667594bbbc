"""gpu-check discover: nvcuda::wmma fragments are opaque. One warp loads a matrix of unique
ids with wmma::load_matrix_sync and writes x[i] of every lane; nothing else.
  in = the matrix (raw element bits, packed little-endian into words), out[lane][MAXE] + [n]
"""
import numpy as np

from layoutsim.formats import bits, encode

from ..codegen import SIGNATURE, ident

MAXE = 64
SHAPES = ((16, 16, 16), (32, 8, 16), (8, 32, 16))
_CTYPE = {"f16": ("half", "__half_as_ushort"), "bf16": ("__nv_bfloat16", "__bfloat16_as_ushort"),
          "f32": ("float", "__float_as_uint")}


class WmmaLoadSpec:
    """One wmma fragment kind: use a/b/c, shape, element type, memory layout row/col."""
    kind = "wmma"
    threads = 32
    cases_per_block = 1
    smem_bytes = 0
    needs = ("wmma",)

    def __init__(self, use, shape, fmt, layout):
        self.use, self.shape, self.fmt, self.layout = use, tuple(shape), fmt, layout
        m, n, k = self.shape
        self.rows, self.cols = {"a": (m, k), "b": (k, n), "c": (m, n)}[use]
        self.entry = f"wmma.load.{use}.sync.aligned.{layout}.m{m}n{n}k{k}.{fmt}"
        self.name = ident(self.entry)
        self.elem_bits = bits(fmt)
        self.in_words = self.rows * self.cols * self.elem_bits // 32
        self.out_words = 32 * MAXE + 1
        self.aux = np.zeros(1, np.uint32)
        # ids are raw bit patterns of normal numbers (no subnormals on any path): 1.0 + 1..rows*cols
        self.id_base = int(encode(fmt, 1.0))

    def available(self, target):
        return True

    def grid(self, ncases):
        return 1

    @property
    def ldm(self):
        return self.cols if self.layout == "row" else self.rows

    def source(self):
        m, n, k = self.shape
        ctype, cast = _CTYPE[self.fmt]
        if self.use == "c":
            frag = f"nvcuda::wmma::fragment<nvcuda::wmma::accumulator, {m}, {n}, {k}, {ctype}> f;"
            load = (f"nvcuda::wmma::load_matrix_sync(f, reinterpret_cast<const {ctype} *>(in), {self.ldm}, "
                    f"nvcuda::wmma::mem_{self.layout}_major);")
        else:
            use = {"a": "matrix_a", "b": "matrix_b"}[self.use]
            frag = (f"nvcuda::wmma::fragment<nvcuda::wmma::{use}, {m}, {n}, {k}, {ctype}, "
                    f"nvcuda::wmma::{self.layout}_major> f;")
            load = f"nvcuda::wmma::load_matrix_sync(f, reinterpret_cast<const {ctype} *>(in), {self.ldm});"
        return (f'extern "C" __global__ void {self.name}{SIGNATURE} {{\n'
                f"    const int lane = threadIdx.x & 31;\n    {frag}\n    {load}\n"
                f"    for (int i = 0; i < f.num_elements && i < {MAXE}; ++i)\n"
                f"        out[lane * {MAXE} + i] = (unsigned){cast}(f.x[i]);\n"
                f"    if (lane == 0) out[32 * {MAXE}] = f.num_elements;\n}}\n")

    def ids(self):
        """Row-major logical ids 1..rows*cols and the memory image (raw element bits base + id)."""
        ids = np.arange(1, self.rows * self.cols + 1, dtype=np.uint32).reshape(self.rows, self.cols)
        mem = (ids if self.layout == "row" else ids.T) + np.uint32(self.id_base)
        flat = mem.ravel()
        if self.elem_bits == 16:
            flat = (flat[0::2] | (flat[1::2] << 16)).astype(np.uint32)
        return ids, flat.astype(np.uint32)

    def decode(self, out):
        """(elements per lane, table [32, n, 2] of (row, col), invalid count) from the kernel's out."""
        out = np.asarray(out, np.uint32).reshape(-1)
        n = int(out[32 * MAXE])
        raw = out[:32 * MAXE].reshape(32, MAXE)[:, :n].astype(np.int64) - self.id_base
        valid = (raw >= 1) & (raw <= self.rows * self.cols)
        rc = np.stack(np.divmod(np.where(valid, raw - 1, 0), self.cols), axis=-1)
        rc[~valid] = -1
        return n, rc, int((~valid).sum())


def specs():
    out = []
    for shape in SHAPES:
        for fmt in ("f16", "bf16"):
            for use in ("a", "b"):
                for layout in ("row", "col"):
                    out.append(WmmaLoadSpec(use, shape, fmt, layout))
        for fmt in ("f32", "f16"):
            for layout in ("row", "col"):
                out.append(WmmaLoadSpec("c", shape, fmt, layout))
    return out
