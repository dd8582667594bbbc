"""wgmma (A from registers, B from shared memory by descriptor), one warpgroup (block) per case:
  in[case] = [thread 0..127][A words | D-init words]  then  [B image words]
  aux = [descriptor template lo, hi] (start address 0; the kernel adds its smem address)
  out[case][thread][D words]
The B image and its descriptor come from `layoutsim.sim.descriptor`; probes: `operand_maps`.
"""
from functools import cached_property

import numpy as np

from layoutsim.formats import bits as format_bits
from layoutsim.packing import pack, unpack, words_per_lane

from ..codegen import cuda
from .operand_maps import OperandMapSpec

B_PAD_BYTES = 48     # extra bytes between N-groups of core matrices, so SBO != the dense value
# the entries checked by default: every type combination at the smallest N, and several N for
# the D layout (--all-wgmma checks every N)
DEFAULT = (
    *(f"wgmma.m64n8k16.{d}.f16.f16" for d in ("f16", "f32")),
    "wgmma.m64n8k16.f32.bf16.bf16", "wgmma.m64n8k8.f32.tf32.tf32",
    *(f"wgmma.m64n8k32.{d}.{a}.{b}" for a in ("e4m3", "e5m2") for b in ("e4m3", "e5m2") for d in ("f16", "f32")),
    *(f"wgmma.m64n8k32.s32.{a}.{b}" for a in ("s8", "u8") for b in ("s8", "u8")),
    *(f"wgmma.m64n{n}k16.f32.f16.f16" for n in (16, 24, 32, 64, 128, 256)),
    "wgmma.m64n256k16.f16.f16.f16", "wgmma.m64n256k16.f32.bf16.bf16", "wgmma.m64n256k8.f32.tf32.tf32",
    "wgmma.m64n256k32.f32.e4m3.e4m3", "wgmma.m64n256k32.s32.s8.s8", "wgmma.m64n160k32.s32.u8.s8",
)


class WgmmaSpec(OperandMapSpec):
    """wgmma.mma_async with A from registers and B through a no-swizzle K-major descriptor."""
    kind = "wgmma"
    catalog_families = ("wgmma",)
    checked_by = ("layouts", "numerics")
    default_entries = DEFAULT
    named_by_entry = True
    threads = 128
    d_threads = 128
    cases_per_block = 1

    def __init__(self, instr):
        super().__init__(instr)
        ops = instr.operands
        self.fa, self.fd = ops["A"].fragment, ops["D"].fragment
        self.fmt = {"a": ops["A"].fmt, "b": instr.formats["b"], "c": ops["D"].fmt, "d": ops["D"].fmt}
        self.wa, self.wd = words_per_lane(self.fa), words_per_lane(self.fd)
        self.thread_in = self.wa + self.wd
        m, n, k = instr.shape
        self.M, self.N, self.K = m, n, k
        self.b_bits = format_bits(self.fmt["b"])
        self.b_words = self.b_image_bytes // 4
        self.in_words = 128 * self.thread_in + self.b_words
        self.out_words = 128 * self.wd
        lo, hi = self.desc_template & 0xFFFFFFFF, self.desc_template >> 32
        self.aux = np.array([lo, hi], np.uint32)

    @cached_property
    def desc(self):
        from layoutsim.sim.descriptor import SmemDesc
        return SmemDesc.k_major(0, self.N, self.K, self.b_bits, pad_bytes=B_PAD_BYTES)

    @property
    def desc_template(self):
        return int(self.desc.encode())

    @cached_property
    def b_addresses(self):
        """Byte address in the B image of element B[k][n], as [K, N] (the image holds B^T K-major)."""
        return self.desc.addresses(self.N, self.K, self.b_bits).T

    @property
    def b_image_bytes(self):
        e = self.b_bits // 8
        end = int(self.desc.addresses(self.N, self.K, self.b_bits).max()) + e
        return -(-end // 16) * 16

    def body(self):
        ops = self.instr.operands
        anames, ac, _ = cuda.registers("a", ops["A"])
        dnames, dc, _ = cuda.registers("d", ops["D"])
        loads = [cuda.load(v, ac, "p", i) for i, v in enumerate(anames)]
        loads += [cuda.load(v, dc, "p", self.wa + i) for i, v in enumerate(dnames)]
        nd, na = len(dnames), len(anames)
        ops_txt = f"{cuda.operand_list(0, nd)}, {cuda.operand_list(nd, na)}, %{nd + na}, p"
        a = self.fmt["a"]
        if a in ("f16", "bf16"):
            ops_txt += ", 1, 1, 0"          # imm-scale-a, imm-scale-b, imm-trans-b (K-major B)
        elif a in ("tf32", "e4m3", "e5m2"):
            ops_txt += ", 1, 1"
        text = ("{\\n .reg .pred p;\\n setp.ne.b32 p, %" + str(nd + na + 1) + ", 0;\\n "
                f"{self.entry} {ops_txt};\\n}}")
        outs = [f'"+{dc}"({v})' for v in dnames]
        ins = [f'"{ac}"({v})' for v in anames] + ['"l"(desc)', '"r"(1)']
        stores = [cuda.store(v, dc, "q", i) for i, v in enumerate(dnames)]
        body = [
            "__shared__ __align__(128) unsigned sB[%d];" % max(self.b_words, 4),
            "const int t = threadIdx.x;",
            "const unsigned long long desc = (((unsigned long long)aux[1] << 32) | aux[0])",
            "    + ((((unsigned)__cvta_generic_to_shared(sB)) & 0x3FFFF) >> 4);",
            "for (int cs = blockIdx.x; cs < ncases; cs += gridDim.x) {",
            f"    const unsigned *img = in + (size_t)cs * {self.in_words};",
            f"    for (int i = t; i < {self.b_words}; i += 128) sB[i] = img[{128 * self.thread_in} + i];",
            '    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");',
            "    __syncthreads();",
            f"    const unsigned *p = img + t * {self.thread_in};",
            f"    unsigned *q = out + ((size_t)cs * 128 + t) * {self.wd};",
            *("    " + x for x in loads),
            '    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");',
            "    " + cuda.asm(text, outs, ins, clobber_memory=True),
            '    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");',
            '    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");',
            *("    " + x for x in stores),
            "    __syncthreads();",
            "}",
        ]
        return cuda.lines(body)

    def b_image(self, b):
        """(n, K, N) raw bits -> (n, b_words) uint32: B^T in the descriptor's K-major core matrices."""
        b = np.asarray(b).astype(np.uint64)
        e = self.b_bits // 8
        n = b.shape[0]
        img = np.zeros((n, self.b_image_bytes), np.uint8)
        addr = self.b_addresses
        for byte in range(e):
            img[:, addr + byte] = ((b >> np.uint64(8 * byte)) & np.uint64(0xFF)).astype(np.uint8)
        return img.view(np.uint32)

    def b_from_image(self, words):
        img = np.ascontiguousarray(np.asarray(words, np.uint32)).view(np.uint8)
        e = self.b_bits // 8
        addr = self.b_addresses
        b = np.zeros((img.shape[0], self.K, self.N), np.uint64)
        for byte in range(e):
            b |= img[:, addr + byte].astype(np.uint64) << np.uint64(8 * byte)
        return b

    def pack_inputs(self, a, b, c, extra=None):
        regs = np.concatenate([pack(self.fa, a), pack(self.fd, c)], axis=2)
        return np.concatenate([regs.reshape(len(regs), -1), self.b_image(b)], axis=1)

    def unpack_inputs(self, inp):
        inp = np.asarray(inp, np.uint32).reshape(-1, self.in_words)
        regs = inp[:, :128 * self.thread_in].reshape(-1, 128, self.thread_in)
        a = unpack(self.fa, regs[..., :self.wa])[:, 0]
        c = unpack(self.fd, regs[..., self.wa:])[:, 0]
        b = self.b_from_image(inp[:, 128 * self.thread_in:])
        return a, b, c
