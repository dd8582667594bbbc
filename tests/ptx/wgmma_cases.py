"""wgmma test kernels: one kernel per case, generated into kernels/build.py's BUILD as wgmma.cu.

Every kernel fills shared memory with plain stores (st.shared, one element each), in the tile
layout a CUDA programmer writes for each swizzle mode and major-ness (CuTe's canonical GMMA
layouts, spelled out below in `TILE`), builds the matrix descriptors itself, and runs KT / K
wgmma.mma_async k-blocks, moving the descriptor start by the k-block (as CUTLASS's mainloop
does). The first k-block takes scale-d from a kernel argument (a predicate), the others the
immediate 1. D (and, for RS cases, A) registers come from and go to global memory as raw
words; the swizzle mode of each operand is a kernel argument (0 none, 1 32B, 2 64B, 3 128B).

Kernel wg_<case>(const uint8_t* a, const uint8_t* b, const unsigned* c, unsigned* d,
                 int swa, int swb, int kt, int scale_d):
  a   SS: the logical A (64 x kt, row-major, raw elements); RS: A's register words per k-block
  b   the logical B (kt x N, row-major)
  c/d the accumulator's register words [128 threads][words] before / after
"""

# name, instruction (short catalog name), A from "ss" (shared) or "rs" (registers), trans-a,
# trans-b, imm-scale-a, imm-scale-b, .satfinite
CASES = [
    ("f16_n64", "m64n64k16.f32.f16.f16", "ss", 0, 0, 1, 1, False),
    ("f16_n64_t", "m64n64k16.f32.f16.f16", "ss", 1, 1, 1, -1, False),
    ("f16_n256_t", "m64n256k16.f32.f16.f16", "ss", 0, 1, -1, 1, False),
    ("f16acc_n8_rs", "m64n8k16.f16.f16.f16", "rs", 0, 0, -1, 1, False),
    ("bf16_n64_rs_t", "m64n64k16.f32.bf16.bf16", "rs", 0, 1, 1, 1, False),
    ("bf16_n8_t", "m64n8k16.f32.bf16.bf16", "ss", 1, 0, 1, 1, False),
    ("tf32_n64", "m64n64k8.f32.tf32.tf32", "ss", 0, 0, 1, -1, False),
    ("tf32_n8_rs", "m64n8k8.f32.tf32.tf32", "rs", 0, 0, 1, 1, False),
    ("e4m3_n64", "m64n64k32.f32.e4m3.e5m2", "ss", 0, 0, 1, 1, False),
    ("e4m3_n8_rs", "m64n8k32.f16.e4m3.e4m3", "rs", 0, 0, -1, -1, False),
    ("s8_n64", "m64n64k32.s32.s8.u8", "ss", 0, 0, 1, 1, False),
    ("s8_n8_rs_sat", "m64n8k32.s32.s8.s8", "rs", 0, 0, 1, 1, True),
    ("s8_n8_wrap", "m64n8k32.s32.s8.s8", "ss", 0, 0, 1, 1, False),
]

BYTES = {"f16": 2, "bf16": 2, "tf32": 4, "e4m3": 1, "e5m2": 1, "s8": 1, "u8": 1}
CTYPE = {1: "unsigned char", 2: "unsigned short", 4: "unsigned"}
A_BYTES, B_BYTES = 8192, 32768            # the largest tiles the cases use (see the tests)

TILE = r"""
// byte offset of element (mn, k) from a tile's start, before the swizzle: CuTe's canonical GMMA
// layouts (cute/atom/mma_traits_sm90_gmma.hpp) tiled MN first; T elements per 16-byte chunk,
// span = 16 << sw bytes a swizzled row, MN the operand's M or N extent, KT its K extent
__device__ unsigned tile_offset(unsigned mn, unsigned k, unsigned e, unsigned sw, bool mn_major,
                                unsigned MN, unsigned KT) {
  unsigned T = 16 / e, span = 16u << sw, W = span / 16;
  if (!mn_major) {
    if (sw == 0) return (mn % 8) * 16 + (mn / 8) * (128 * (KT / T)) + (k / T) * 128 + (k % T) * e;
    return (mn % 8) * span + (mn / 8) * (8 * span) + (k / T) * 16 + (k % T) * e;
  }
  if (sw == 0) return (k % 8) * 16 + (k / 8) * (128 * (MN / T)) + (mn / T) * 128 + (mn % T) * e;
  unsigned atoms = (MN + T * W - 1) / (T * W);
  return (k % 8) * span + (k / 8) * (8 * span * atoms) + ((mn / T) % W) * 16 + (mn / (T * W)) * (8 * span)
         + (mn % T) * e;
}

// the swizzle of a shared address: chunk bits 4.. XOR the bits from 7 on (Swizzle<sw,4,3>)
__device__ unsigned swz(unsigned a, unsigned sw) { return sw ? a ^ (((a >> 7) & ((1u << sw) - 1)) << 4) : a; }

// the matrix descriptor (PTX ISA 'Matrix Descriptor Format'): start, LBO, SBO >> 4; mode bits 62-63
__device__ unsigned long long make_desc(unsigned addr, unsigned lbo, unsigned sbo, unsigned sw) {
  const unsigned long long code[4] = {0, 3, 2, 1};        // none, 32B, 64B, 128B
  return ((addr & 0x3FFFF) >> 4) | ((unsigned long long)(lbo >> 4) << 16)
         | ((unsigned long long)(sbo >> 4) << 32) | (code[sw] << 62);
}

// LBO and SBO of a dense canonical tile
__device__ void strides(unsigned e, unsigned sw, bool mn_major, unsigned MN, unsigned KT,
                        unsigned& lbo, unsigned& sbo) {
  unsigned T = 16 / e, span = 16u << sw, W = span / 16;
  if (!mn_major) { lbo = sw ? 16 : 128; sbo = sw ? 8 * span : 128 * (KT / T); return; }
  unsigned atoms = (MN + T * W - 1) / (T * W);
  if (sw == 0) { lbo = 128 * (MN / T); sbo = 128; return; }
  lbo = 8 * span; sbo = 8 * span * atoms;
}
"""


def parse(instr):
    shape, d, a, b = instr.split(".")
    n = int(shape.split("n")[1].split("k")[0])
    k = int(shape.split("k")[1])
    return n, k, d, a, b


def d_words(instr):
    n, k, d, a, b = parse(instr)
    return 64 * n // 128 // (2 if d == "f16" else 1)


def a_words(instr):
    n, k, d, a, b = parse(instr)
    return 64 * k * BYTES[a] // 128 // 4


def _kernel(case):
    name, instr, src, ta, tb, sa, sb, sat = case
    n, k, d, a, b = parse(instr)
    ea, eb = BYTES[a], BYTES[b]
    nd, na = d_words(instr), a_words(instr)
    rs = src == "rs"
    dt = "float" if d == "f32" else "unsigned"
    dc = "f" if d == "f32" else "r"
    full = f"wgmma.mma_async.sync.aligned.{instr.split('.')[0]}{'.satfinite' if sat else ''}." + \
        ".".join(instr.split(".")[1:])
    dlist = ", ".join(f"%{i}" for i in range(nd))
    j = nd
    if rs:
        aop = "{" + ", ".join(f"%{j + i}" for i in range(na)) + "}"
        j += na
    else:
        aop = f"%{j}"
        j += 1
    bop, sop = f"%{j}", f"%{j + 1}"
    floating = a not in ("s8", "u8")
    tail = (f", {sa}, {sb}" if floating else "") + \
        ((f", {tb}" if rs else f", {ta}, {tb}") if a in ("f16", "bf16") else "")
    outs = ", ".join(f'"+{dc}"(acc[{i}])' for i in range(nd))
    ins = (", ".join(f'"r"(ar[{i}])' for i in range(na)) if rs else '"l"(da)') + ', "l"(db), "r"(sd)'
    lines = [
        f'extern "C" __global__ void wg_{name}(const unsigned char* a, const unsigned char* b, const unsigned* c,',
        "    unsigned* d, int swa, int swb, int kt, int scale_d) {",
        f"  // {full}: A {'registers' if rs else 'shared'}{', MN-major' if ta else ''}, B shared"
        f"{', MN-major' if tb else ''}, imm-scale {sa}/{sb}",
        f"  __shared__ __align__(1024) unsigned char sa[{A_BYTES}];",
        f"  __shared__ __align__(1024) unsigned char sb[{B_BYTES}];",
        "  unsigned t = threadIdx.x;",
        "  unsigned base_a = (unsigned)__cvta_generic_to_shared(sa), base_b = (unsigned)__cvta_generic_to_shared(sb);",
    ]
    if not rs:
        lines += ["  for (unsigned i = t; i < 64u * kt; i += 128) {",
                  "    unsigned m = i / kt, kk = i % kt;",
                  f"    unsigned at = swz(base_a + tile_offset(m, kk, {ea}, swa, {'true' if ta else 'false'}, 64, kt), swa);",
                  f"    *({CTYPE[ea]}*)(sa + (at - base_a)) = (({const(CTYPE[ea])}*)a)[i];",
                  "  }"]
    lines += [f"  for (unsigned i = t; i < {n}u * kt; i += 128) {{",
              f"    unsigned kk = i / {n}, nn = i % {n};",
              f"    unsigned at = swz(base_b + tile_offset(nn, kk, {eb}, swb, {'true' if tb else 'false'}, {n}, kt), swb);",
              f"    *({CTYPE[eb]}*)(sb + (at - base_b)) = (({const(CTYPE[eb])}*)b)[i];",
              "  }",
              '  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");   // st.shared -> the async proxy',
              "  __syncthreads();",
              f"  {dt} acc[{nd}];",
              f"  for (int i = 0; i < {nd}; i++) acc[i] = {'__uint_as_float(c[t * ' + str(nd) + ' + i])' if dt == 'float' else 'c[t * ' + str(nd) + ' + i]'};",
              "  unsigned lba, sba, lbb, sbb;",
              f"  strides({ea}, swa, {'true' if ta else 'false'}, 64, kt, lba, sba);",
              f"  strides({eb}, swb, {'true' if tb else 'false'}, {n}, kt, lbb, sbb);",
              '  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");',
              f"  for (int kb = 0; kb < kt / {k}; kb++) {{",
              *([] if rs else [f"    unsigned long long da = make_desc(base_a + tile_offset(0, kb * {k}, {ea}, swa, {'true' if ta else 'false'}, 64, kt), lba, sba, swa);"]),
              f"    unsigned long long db = make_desc(base_b + tile_offset(0, kb * {k}, {eb}, swb, {'true' if tb else 'false'}, {n}, kt), lbb, sbb, swb);",
              "    unsigned sd = kb == 0 ? scale_d : 1;"]
    if rs:
        lines += [f"    unsigned ar[{na}];",
                  f"    for (int i = 0; i < {na}; i++) ar[i] = ((const unsigned*)a)[(kb * 128 + t) * {na} + i];"]
    asm = (f'"{{\\n.reg .pred p;\\nsetp.ne.b32 p, {sop}, 0;\\n{full} {{{dlist}}}, {aop}, {bop}, p{tail};\\n}}\\n"')
    lines += [f"    asm volatile({asm}", f"        : {outs}", f"        : {ins});", "  }",
              '  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");',
              '  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");',
              f"  for (int i = 0; i < {nd}; i++) d[t * {nd} + i] = "
              f"{'__float_as_uint(acc[i])' if dt == 'float' else 'acc[i]'};", "}"]
    return "\n".join(lines)


def const(t):
    return f"const {t}"


def kernel_source():
    head = ["// arch: sm_90a", "// wgmma test kernels (tests/ptx/wgmma_cases.py)", TILE]
    return "\n".join(head + [_kernel(c) + "\n" for c in CASES])
