"""gpu-check discover: nvcuda::wmma fragments are opaque. One warp loads a matrix of unique
ids with wmma::load_matrix_sync and writes x[i] of every lane; nothing else.
  in = the matrix (raw element bits, packed little-endian into words), out[lane][MAXE] + [n]
A 64-bit element (double) takes two words of out, low word first.

Ids (element index e = row * cols + col, row-major whatever the memory layout):
  floats  one image: the raw bits of 1.0 plus (e + 1) units of the format's lowest stored bit,
          normal numbers all (tf32: the 13 low bits stay clear, so a rounding to tf32 would keep
          them; load_matrix_sync moves raw words, crt/mma.hpp __mma_tf32_m16n16k8_ld_a)
  ints    one image per base-255 digit of e (descriptors/ids.py: codes 1..255 of a byte, 0 for
          "no element"), so s8/u8 matrices of 512 elements take two loads; the host combines them
The memory image is padded to a leading dimension of a multiple of 16 bytes (load_matrix_sync's
ldm rule); the padding holds 0, which is no id.
"""
import numpy as np

from layoutsim.formats import bits, encode, get_format

from ..codegen import SIGNATURE, ident
from ..descriptors import ids as ID

MAXE = 64
SHAPES = ((16, 16, 16), (32, 8, 16), (8, 32, 16))
# C element type, the cast of one element to its raw bits (unsigned), the pointer type it loads from
_CTYPE = {"f16": ("half", "__half_as_ushort"), "bf16": ("__nv_bfloat16", "__bfloat16_as_ushort"),
          "f32": ("float", "__float_as_uint"), "tf32": ("nvcuda::wmma::precision::tf32", "__float_as_uint"),
          "s8": ("signed char", "(unsigned char)"), "u8": ("unsigned char", ""), "s32": ("int", ""),
          "f64": ("double", None)}
_POINTER = {"tf32": "float"}


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
        self.words = max(1, self.elem_bits // 32)          # words of out per element
        self.integer = get_format(fmt).kind in ("int", "uint")
        outer = self.rows if layout == "row" else self.cols
        self.in_words = outer * self.ldm * self.elem_bits // 32
        self.out_words = 32 * MAXE + 1
        self.aux = np.zeros(1, np.uint32)
        if self.integer:
            self.nbase = ID.byte_base(self.elem_bits // 8)
            self.passes = ID.passes(self.rows * self.cols, self.nbase)
        else:
            self.passes = 1
            self.id_base = int(encode(fmt, 1.0))
            self.id_step = 1 << get_format(fmt).shift

    def available(self, target):
        return True

    def grid(self, ncases):
        return 1

    @property
    def ldm(self):
        """Leading dimension in elements: the natural one, padded to a multiple of 16 bytes."""
        natural = self.cols if self.layout == "row" else self.rows
        unit = max(1, 128 // self.elem_bits)
        return -(-natural // unit) * unit

    def source(self):
        m, n, k = self.shape
        ctype, cast = _CTYPE[self.fmt]
        ptr = f"reinterpret_cast<const {_POINTER.get(self.fmt, ctype)} *>(in)"
        if self.use == "c":
            frag = f"nvcuda::wmma::fragment<nvcuda::wmma::accumulator, {m}, {n}, {k}, {ctype}> f;"
            load = f"nvcuda::wmma::load_matrix_sync(f, {ptr}, {self.ldm}, nvcuda::wmma::mem_{self.layout}_major);"
        else:
            use = {"a": "matrix_a", "b": "matrix_b"}[self.use]
            frag = (f"nvcuda::wmma::fragment<nvcuda::wmma::{use}, {m}, {n}, {k}, {ctype}, "
                    f"nvcuda::wmma::{self.layout}_major> f;")
            load = f"nvcuda::wmma::load_matrix_sync(f, {ptr}, {self.ldm});"
        if self.words == 2:
            body = (f"        out[lane * {MAXE} + 2 * i] = (unsigned)__double2loint(f.x[i]);\n"
                    f"        out[lane * {MAXE} + 2 * i + 1] = (unsigned)__double2hiint(f.x[i]);\n")
        else:
            body = f"        out[lane * {MAXE} + i] = (unsigned){cast}(f.x[i]);\n"
        body = f"    for (int i = 0; i < f.num_elements && i < {MAXE // self.words}; ++i) {{\n{body}    }}\n"
        return (f'extern "C" __global__ void {self.name}{SIGNATURE} {{\n'
                f"    const int lane = threadIdx.x & 31;\n    {frag}\n    {load}\n"
                f"{body}"
                f"    if (lane == 0) out[32 * {MAXE}] = f.num_elements;\n}}\n")

    def element_ids(self, p=0):
        """Raw element bits (uint64 [rows, cols]) of image p: the id code of each element."""
        e = np.arange(self.rows * self.cols, dtype=np.int64)
        if self.integer:
            raw = ID.byte_image(self.elem_bits // 8, len(e), p)
        else:
            raw = (np.uint64(self.id_base) + (e + 1).astype(np.uint64) * np.uint64(self.id_step))
        return raw.astype(np.uint64).reshape(self.rows, self.cols)

    def images(self):
        """The memory images to load, one per pass (uint32 words, ldm padding zero)."""
        out = []
        for p in range(self.passes):
            mat = self.element_ids(p)
            mat = mat if self.layout == "row" else mat.T
            mem = np.zeros((mat.shape[0], self.ldm), np.uint64)
            mem[:, :mat.shape[1]] = mat
            out.append(_words(mem.ravel(), self.elem_bits))
        return out

    def decode(self, outs):
        """(elements per lane, table [32, n, 2] of (row, col), invalid count) from the kernel's out
        of each image (a list, one per pass, or one out when there is one pass)."""
        if isinstance(outs, np.ndarray):
            outs = [outs]
        outs = [np.asarray(o, np.uint32).reshape(-1) for o in outs]
        n = int(outs[0][32 * MAXE])
        raws = [self._raw(o, n) for o in outs]
        size = self.rows * self.cols
        if self.integer:
            e = ID.combine([ID.byte_digits(r) for r in raws], self.nbase)
            valid = (e >= 0) & (e < size)
        else:
            off = raws[0].astype(np.int64) - self.id_base
            valid = (off > 0) & (off % self.id_step == 0) & (off <= size * self.id_step)
            e = off // self.id_step - 1
        if any(int(o[32 * MAXE]) != n for o in outs):
            valid[:] = False
        rc = np.stack(np.divmod(np.where(valid, e, 0), self.cols), axis=-1)
        rc[~valid] = -1
        return n, rc, int((~valid).sum())

    def _raw(self, out, n):
        """[32, n] raw element bits (uint64) of one out."""
        w = out[:32 * MAXE].reshape(32, MAXE)[:, :n * self.words].astype(np.uint64)
        if self.words == 2:
            return w[:, 0::2] | (w[:, 1::2] << np.uint64(32))
        return w


def _words(raw, elem_bits):
    """uint64 element bits -> little-endian uint32 words."""
    dt = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[elem_bits]
    return np.ascontiguousarray(raw.astype(dt)).view(np.uint32)


# the element types of each fragment use per shape (nvcuda::wmma, crt/mma.h; PTX ISA wmma.load)
_AB = {(16, 16, 16): ("f16", "bf16", "s8", "u8"), (32, 8, 16): ("f16", "bf16", "s8", "u8"),
       (8, 32, 16): ("f16", "bf16", "s8", "u8"), (16, 16, 8): ("tf32",), (8, 8, 4): ("f64",)}
_C = {(16, 16, 16): ("f32", "f16", "s32"), (32, 8, 16): ("f32", "f16", "s32"),
      (8, 32, 16): ("f32", "f16", "s32"), (16, 16, 8): ("f32",), (8, 8, 4): ("f64",)}


def specs():
    out = []
    for shape, operand_fmts in _AB.items():
        for fmt in operand_fmts:
            for use in ("a", "b"):
                for layout in ("row", "col"):
                    out.append(WmmaLoadSpec(use, shape, fmt, layout))
        for fmt in _C[shape]:
            for layout in ("row", "col"):
                out.append(WmmaLoadSpec("c", shape, fmt, layout))
    return out
