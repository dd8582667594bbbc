"""tcgen05.mma (sm_100a), cta_group::1, M = 128, dense, A and B K-major in shared memory, D in TMEM.

One CTA of 4 warps per case. Word layout per case:
  in  = [shared-memory image | C | scales]: the image holds A (128 x K, `a_bytes`) then B (N x K), each
        element where its sm_100 descriptor (no swizzle, K-major; start address relative to the buffer,
        whose shared address the kernel adds) puts it (layoutsim.smem.umma.element_addresses, the
        executor's own reading); C and D: 128 TMEM lanes x N columns, D[i][j] where the
        catalog's D map (Layout D) puts it; block-scaled: the 128 lanes x sf_columns words of TMEM
        columns SF_COLUMN.. where the catalog's SFA / SFB maps put the scales (SFB from column 4 on);
  out = D, 128 lanes x N columns, read back with tcgen05.ld.32x32b.x1 column by column.
The kernel copies the image into shared memory and the C/scale words into TMEM (tcgen05.st.32x32b.x1),
one thread issues the MMA (enable-input-d 1: D = A*B + C) with the instruction descriptor of the entry's
formats (isa/ptx_tcgen05_idesc) and commits it to an mbarrier that every thread waits on. Probes:
`c_ids` (A = B = 0, D = C: the D map) and `random` (random A, B, C, and scales of 2^-7..2^7), the
expected D layoutsim.mma's bit for bit: on a B200, the catalog's D and scale-factor maps, the descriptor
reading and the arithmetic in one comparison.
"""
import re

import numpy as np

from layoutsim.formats import get_format
from layoutsim.isa import ptx_tcgen05_idesc as IDESC
from layoutsim.packing import pack, unpack
from layoutsim.smem.umma import UmmaDescriptor, element_addresses

from ..checks.common import Result, diff_fragment
from ..codegen import cuda
from .base import Probe, Spec
from .tcgen05 import FENCE, tmem_alloc, tmem_dealloc

SF_COLUMN = 256                          # SFA at columns 256.. (M = 128: 4 columns), SFB at 260..
KINDS = ("f16", "tf32", "f8f6f4", "i8", "mxf8f6f4")
DEFAULT = ("tcgen05.mma.cta_group::1.kind::f16.m128n64k16", "tcgen05.mma.cta_group::1.kind::tf32.m128n64k8",
           "tcgen05.mma.cta_group::1.kind::f8f6f4.m128n64k32", "tcgen05.mma.cta_group::1.kind::i8.m128n64k32",
           "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::1X.m128n64k32")


class Tcgen05MmaSpec(Spec):
    """One tcgen05.mma entry: D = A*B + C through shared-memory descriptors and tensor memory."""
    kind = "tcgen05_mma"
    catalog_families = ("tcgen05.mma",)
    default_entries = DEFAULT
    named_by_entry = True
    threads = 128
    cases_per_block = 1

    @classmethod
    def supports(cls, instr):
        o = instr.options
        return (instr.family in cls.catalog_families and o.get("kind") in KINDS and o.get("cta_group") == 1
                and not o.get("ws") and not o.get("sparse") and instr.shape[0] == 128
                and o.get("scale_vec") in (None, "1X"))

    def __init__(self, instr):
        super().__init__(instr)
        m, self.n, self.k = instr.shape
        f = instr.formats
        self.scaled = "SFA" in instr.operands
        self.types = f"{f['d']}.{f['a']}.{f['b']}" + (f".{f['scale']}" if self.scaled else "")
        self.fd = instr.operand("D").fragment
        self.row_bytes = self.k * get_format(f["a"]).bits // 8         # 32: every kind's K is 32 bytes
        self.a_bytes, self.b_bytes = 128 * self.row_bytes, self.n * self.row_bytes
        self.descs = [UmmaDescriptor(start, 128, 128 * (self.row_bytes // 16)).encode()
                      for start in (0, self.a_bytes)]
        kind = instr.options["kind"]
        self.idesc = (IDESC.encode_scaled(128, self.n, self.types, kind=kind) if self.scaled
                      else IDESC.encode(kind, 128, self.n, self.types))
        self.image_words = (self.a_bytes + self.b_bytes) // 4
        self.sf_columns = 4 + -(-self.n // 32)                        # SFA's 4, SFB's N/32
        self.sf_words = 128 * self.sf_columns if self.scaled else 0
        self.in_words = self.image_words + 128 * self.n + self.sf_words
        self.out_words = 128 * self.n
        self.smem_bytes = self.a_bytes + self.b_bytes + 64                 # + the mbarrier

    # device side -----------------------------------------------------------------------
    def body(self):
        n, iw = self.n, self.image_words
        opcode = re.sub(r"\.m\d+n\d+k\d+$", "", self.entry)        # the shape is the idesc's, not PTX's
        mma = f"{opcode} [%0], %1, %2, %3, " + ("[%4], [%5], 1;" if self.scaled else "1;")
        ins = ['"r"(taddr)', '"l"(adesc)', '"l"(bdesc)', f'"r"({self.idesc:#x}u)']
        if self.scaled:
            ins += [f'"r"(taddr + {SF_COLUMN}u)', f'"r"(taddr + {SF_COLUMN + 4}u)']
        st = cuda.asm("tcgen05.st.sync.aligned.32x32b.x1.b32 [%0], {%1};", [], ['"r"(slab + c)', '"r"(v)'],
                      clobber_memory=True)
        ld = cuda.asm("tcgen05.ld.sync.aligned.32x32b.x1.b32 {%0}, [%1];\\n\\ttcgen05.wait::ld.sync.aligned;",
                      ['"=r"(v)'], ['"r"(slab + c)'], clobber_memory=True)
        lines = [
            "extern __shared__ __align__(1024) unsigned smem_[];",
            *tmem_alloc(),
            "const int lane = threadIdx.x & 31;",
            "const unsigned base = (unsigned)__cvta_generic_to_shared(smem_);",
            f"const unsigned mbar = base + {self.a_bytes + self.b_bytes}u;",
            "const unsigned taddr = tmem_base_;",
            "const unsigned slab = taddr + (((unsigned)warp * 32u) << 16);",
            "for (int cs = blockIdx.x, phase = 0; cs < ncases; cs += gridDim.x, phase ^= 1) {",
            f"    const unsigned *p = in + (size_t)cs * {self.in_words};",
            f"    for (int i = threadIdx.x; i < {iw}; i += blockDim.x) smem_[i] = p[i];",
            f"    for (int c = 0; c < {n}; ++c) {{ const unsigned v = p[{iw} + (warp * 32 + lane) * {n} + c]; {st} }}",
            *([f"    for (int c = 0; c < {self.sf_columns}; ++c) {{ const unsigned v = p[{iw + 128 * n} + (warp * 32 + lane)"
               f" * {self.sf_columns} + c]; const unsigned c0 = c + {SF_COLUMN}u; "
               + st.replace("slab + c", "slab + c0") + " }"] if self.scaled else []),
            '    asm volatile("tcgen05.wait::st.sync.aligned;" ::: "memory");',
            '    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");',
            "    if (threadIdx.x == 0 && cs == blockIdx.x) "
            + cuda.asm("mbarrier.init.shared::cta.b64 [%0], 1;", [], ['"r"(mbar)'], clobber_memory=True),
            *("    " + x for x in FENCE),
            "    if (threadIdx.x == 0) {",
            f"        const unsigned long long adesc = {self.descs[0]:#x}ull + (unsigned long long)((base >> 4) & 0x3FFF);",
            f"        const unsigned long long bdesc = {self.descs[1]:#x}ull + (unsigned long long)((base >> 4) & 0x3FFF);",
            "        " + cuda.asm(mma, [], ins, clobber_memory=True),
            "        " + cuda.asm("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];", [],
                                  ['"r"(mbar)'], clobber_memory=True),
            "    }",
            "    unsigned done = 0;",
            "    while (!done) " + cuda.asm("{\\n\\t.reg .pred P1;\\n\\tmbarrier.try_wait.parity.shared::cta.b64 P1, [%1], %2;"
                                          "\\n\\tselp.u32 %0, 1, 0, P1;\\n\\t}", ['"=r"(done)'],
                                          ['"r"(mbar)', '"r"(phase)'], clobber_memory=True),
            '    asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");',
            f"    for (int c = 0; c < {n}; ++c) {{ unsigned v; {ld} "
            f"out[(size_t)cs * {128 * n} + (warp * 32 + lane) * {n} + c] = v; }}",
            *("    " + x for x in FENCE),
            "}",
            tmem_dealloc(),
        ]
        return cuda.lines(lines)

    # host side -------------------------------------------------------------------------
    def _image(self, A, B):
        """The shared-memory bytes of A [cases, 128, K] and B [cases, K, N] (raw element bits)."""
        f, cases = self.instr.formats, len(A)
        img = np.zeros((cases, self.a_bytes + self.b_bytes), np.uint8)
        for x, d, rows, fmt in ((A, self.descs[0], 128, f["a"]), (np.swapaxes(B, 1, 2), self.descs[1], self.n, f["b"])):
            w = get_format(fmt).bits // 8
            addr = element_addresses(d, rows, self.k, 8 * w)               # [rows, K] byte address
            raw = np.ascontiguousarray(x).astype(np.dtype(f"<u{w}")).view(np.uint8).reshape(cases, rows, self.k, w)
            img[:, addr[..., None] + np.arange(w)] = raw
        return img.view("<u4")

    def _scales(self, sa, sb):
        """TMEM words [cases, 128, sf_columns] of the scales (the catalog's SFA / SFB maps, every 32-lane copy)."""
        from layoutsim.warpcore.tcgen05 import scale_cells
        words = np.zeros((len(sa), 128, self.sf_columns), np.uint32)
        for op, s, col0 in (("SFA", sa, 0), ("SFB", sb, 4)):
            _, lanes, col, byte, r, c = scale_cells(self.instr, op, 0)
            vals = s[:, r, c].astype(np.uint32) << (8 * byte).astype(np.uint32)
            for k in range(lanes.shape[1]):
                np.add.at(words, (slice(None), lanes[:, k], col0 + col), vals)
        return words

    def pack_inputs(self, A, B, C, sa=None, sb=None):
        cases = len(A)
        parts = [self._image(A, B).reshape(cases, -1), pack(self.fd, C[:, None]).reshape(cases, -1)]
        if self.scaled:
            parts.append(self._scales(sa, sb).reshape(cases, -1))
        return np.concatenate(parts, 1)

    def unpack_inputs(self, inp):
        """(A, B, C, SFA, SFB) raw from the input words (the image read back through the descriptors)."""
        inp = np.asarray(inp, np.uint32).reshape(-1, self.in_words)
        f = self.instr.formats
        w = get_format(f["a"]).bits // 8
        img = np.ascontiguousarray(inp[:, :self.image_words]).view(np.uint8)
        out = []
        for d, rows in ((self.descs[0], 128), (self.descs[1], self.n)):
            addr = element_addresses(d, rows, self.k, 8 * w)
            out.append(img[:, addr[..., None] + np.arange(w)].copy().view(f"<u{w}")[..., 0])
        A, Bt = out
        C = unpack(self.fd, inp[:, self.image_words:self.image_words + 128 * self.n].reshape(-1, 128, self.n))[:, 0]
        sfa = sfb = None
        if self.scaled:
            from layoutsim.warpcore.tcgen05 import scales
            cells = inp[:, self.image_words + 128 * self.n:].reshape(-1, 128, self.sf_columns)
            sfa = np.stack([scales(self.instr, "SFA", x[None], 0, (128, 1))[0] for x in cells])
            sfb = np.stack([scales(self.instr, "SFB", x[None, :, 4:], 0, (1, self.n))[0] for x in cells])
        return A, np.swapaxes(Bt, 1, 2), C, sfa, sfb

    def probes(self, rng, cases=2):
        f, n = self.instr.formats, self.n
        zeros = (np.zeros((1, 128, self.k), np.uint64), np.zeros((1, self.k, n), np.uint64))
        c_ids = np.arange(1, 128 * n + 1, dtype=np.uint32).reshape(1, 128, n)
        c_ids = np.asarray(_values(f["d"], c_ids), np.uint64)
        unit = np.full((1, 128, 1), 127, np.uint8), np.full((1, 1, n), 127, np.uint8)
        out = [Probe("c_ids", self.pack_inputs(*zeros, c_ids, *unit), {})]
        A, B = _random(rng, f["a"], (cases, 128, self.k)), _random(rng, f["b"], (cases, self.k, n))
        C = _random(rng, f["d"], (cases, 128, n))
        sa, sb = (rng.integers(120, 135, s).astype(np.uint8) for s in ((cases, 128, 1), (cases, 1, n)))
        out.append(Probe("random", self.pack_inputs(A, B, C, sa, sb), {}))
        return out

    def expected(self, inp):
        import layoutsim
        A, B, C, sa, sb = self.unpack_inputs(inp)
        kw = {"scale_a": sa, "scale_b": sb} if self.scaled else {}
        D = layoutsim.mma(self.instr, A, B, C, arch=self.instr.archs[0], raw=True, types=self.types, **kw)
        return pack(self.fd, D[:, None])

    def compare(self, check, inp, out, meta, aux=None):
        expected = self.expected(inp)
        got = np.asarray(out, np.uint32).reshape(-1, 128, self.n)
        bad, compared, details = diff_fragment(self.fd, self.instr.formats["d"], expected, got, letter="D")
        return Result("layouts", self.entry, check, cases=len(got), compared=compared, mismatches=bad,
                      details=details).finish()


def _values(fmt, ids):
    """Distinct exact raw bits of fmt for the integers `ids` (f32 / s32 / f16 accumulators)."""
    from layoutsim.formats import encode_exact
    if fmt == "f16":
        from layoutsim.formats import positive_normals
        return positive_normals(fmt, ids.size).reshape(ids.shape)
    return encode_exact(fmt, ids)


def _random(rng, fmt, shape):
    """Random raw bits of fmt without NaN or Inf (values near 1 for the 16/32-bit floats)."""
    g = get_format(fmt)
    if g.kind != "float":
        return rng.integers(0, 1 << g.bits, shape, dtype=np.uint64).astype(np.dtype(f"u{max(g.bits // 8, 1)}"))
    from layoutsim.formats import encode
    if g.bits >= 16:
        v = rng.standard_normal(shape) * 2.0 ** rng.integers(-4, 4, shape)
        return encode(fmt, v)
    x = rng.integers(0, 1 << g.bits, shape).astype(np.uint8)
    nan = {"e4m3": (x & 0x7F) == 0x7F, "e5m2": (x & 0x7C) == 0x7C}.get(fmt)
    return np.where(nan, 0, x).astype(np.uint8) if nan is not None else x
