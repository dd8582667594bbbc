// The approximate-math probe: the special-function unit (MUFU) of an NVIDIA GPU evaluated over
// every input, so that its results can be modelled bit for bit (gpu_check/sfu/measure.py drives it).
//
// f32 primitives, each reached through the PTX instruction that is a bare MUFU on sm_90:
//   EX2 ex2.approx.ftz.f32  RCP rcp.approx.ftz.f32  RSQ rsqrt.approx.ftz.f32  LG2 lg2.approx.ftz.f32
//   SQRT sqrt.approx.ftz.f32  TANH tanh.approx.f32  SIN/COS sin/cos.approx.ftz.f32
// sin/cos.approx lower to FMUL.RZ x, 1/(2 pi) then MUFU.SIN/COS. The driver loads this cubin twice:
// as built, and with that multiplier's 32-bit immediate patched to 1.0 ("patched"), where
// sin/cos.approx.ftz(t) is MUFU.SIN/COS(t) for any t. The other operations are the same in both.
//
// Kernels (every input u of a 2^32 range is the bit pattern of the f32 x, or of an f16x2 pair):
//   build_table    T[k] = MUFU(canonical input k) for a hypothesis' table (see canonical())
//   check          count inputs where MUFU(x) != predict(x): the hypothesis' model from the tables,
//                  per 9-bit sign+exponent bin of x, and keep the first mismatches
//   errhist        per bin, the distance in ulps of MUFU(x) from the correctly rounded (f64
//                  reference, rounded to nearest, subnormals flushed) value, and the largest |error|
//   compose        the PTX forms without .ftz against the SASS sequence ptxas emits for them
//                  (FSETP/FMUL/FSEL around the same MUFU), written here with IEEE intrinsics
//   sincos_dump / sincos_compare   sin/cos.approx(x) as built against MUFU(RZ(x * c)) in the
//                  patched module, chunk by chunk
//   dump16 / check16x2   the 16-bit forms over all 2^16 inputs, and their x2 forms over all pairs
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cstdint>

enum Op { EX2 = 0, RCP, RSQ, LG2, SQRT, SIN, COS, TANH };
// hypotheses: EX2/SIN/COS: mode | F << 4 (mode 0: floor, two's complement fraction; 1: truncation
// of |x|, sign handled by symmetry / a second table); LG2: rounding of e + L (0 rn, 1 rz, 2 rd, 3 ru, 4 rz with a nudge);
// TANH: K mantissa bits kept (K < 23: truncated; K | 32: rounded to nearest even; 64: odd symmetry)
#define NBINS 512
#define NSAMPLES 32

#define F32(INSTR) asm volatile(INSTR " %0, %1;" : "=f"(r) : "f"(x))

__device__ __forceinline__ float mufu(int op, float x) {
    float r;
    switch (op) {
    case EX2: F32("ex2.approx.ftz.f32"); break;
    case RCP: F32("rcp.approx.ftz.f32"); break;
    case RSQ: F32("rsqrt.approx.ftz.f32"); break;
    case LG2: F32("lg2.approx.ftz.f32"); break;
    case SQRT: F32("sqrt.approx.ftz.f32"); break;
    case SIN: F32("sin.approx.ftz.f32"); break;
    case COS: F32("cos.approx.ftz.f32"); break;
    default: F32("tanh.approx.f32"); break;
    }
    return r;
}

// The PTX forms without .ftz (sin/cos have none that differs: ptxas emits the same code).
__device__ __forceinline__ float ptx_full(int op, float x) {
    float r;
    switch (op) {
    case EX2: F32("ex2.approx.f32"); break;
    case RCP: F32("rcp.approx.f32"); break;
    case RSQ: F32("rsqrt.approx.f32"); break;
    case LG2: F32("lg2.approx.f32"); break;
    default: F32("sqrt.approx.f32"); break;
    }
    return r;
}

// The SASS ptxas 13.0 emits for ptx_full on sm_90 (cuobjdump -sass), with the MUFU as above.
__device__ __forceinline__ float composed(int op, float x) {
    const float tiny = 1.17549435082228750797e-38f;   // 2^-126
    switch (op) {
    case EX2: {                                        // FSETP.GEU x, -126; @!P FMUL x*0.5; MUFU; @!P FMUL r*r
        bool big = x >= -126.f || x != x;
        float r = mufu(EX2, big ? x : __fmul_rn(x, 0.5f));
        return big ? r : __fmul_rn(r, r);
    }
    case RCP: {                                        // s = |x| < 2^-126 ? 2^24 : 1; |x| > 2^126 ? 0.25 : s; s * MUFU(x*s)
        float a = fabsf(x);
        float s = (a >= tiny || a != a) ? 1.f : 16777216.f;
        s = (a > 8.50705917302346158658e+37f) ? 0.25f : s;
        return __fmul_rn(s, mufu(RCP, __fmul_rn(x, s)));
    }
    case RSQ: case LG2: case SQRT: {                   // |x| < 2^-126: x * 2^24 first, then undo on the result
        float a = fabsf(x);
        bool normal = a >= tiny || a != a;
        float r = mufu(op, normal ? x : __fmul_rn(x, 16777216.f));
        if (normal) return r;
        if (op == RSQ) return __fmul_rn(r, 4096.f);
        if (op == LG2) return __fadd_rn(r, -24.f);
        return __fmul_rn(r, 0.000244140625f);
    }
    }
    return 0.f;
}

// ---- tables ----------------------------------------------------------------------------------------
// canonical input k of table `variant` of an op (F: fraction bits of the EX2/SIN/COS hypotheses)
__device__ __forceinline__ float canonical(int op, int F, int variant, uint32_t k) {
    switch (op) {
    case EX2: case SIN: case COS: {
        float f = ldexpf((float)k, -F);                // exact: k < 2^24
        return variant ? -f : f;
    }
    case RCP: case LG2: case RSQ: case SQRT: {
        uint32_t e = (op == LG2 ? 126u + (variant ? 0u : 1u) : 127u + (uint32_t)variant);  // LG2: [1,2) and [0.5,1)
        return __uint_as_float((e << 23) | k);         // RSQ/SQRT variant 1: [2,4)
    }
    default:                                           // TANH: k is the top bits of x (F = bits dropped)
        return __uint_as_float(k << F);
    }
}

extern "C" __global__ void build_table(int op, int F, int variant, uint32_t *T, uint32_t n) {
    for (uint32_t k = blockIdx.x * blockDim.x + threadIdx.x; k < n; k += gridDim.x * blockDim.x)
        T[k] = __float_as_uint(mufu(op, canonical(op, F, variant, k)));
}

__device__ __forceinline__ float ftz(float v) { return fabsf(v) < 1.17549435e-38f ? copysignf(0.f, v) : v; }
__device__ __forceinline__ float scaled(uint32_t t, int e) {   // T-entry * 2^e, rounded, flushed
    return ftz(__double2float_rn(ldexp((double)__uint_as_float(t), e)));
}
#define QNAN __uint_as_float(0x7fffffffu)

// The model of MUFU(x) under a hypothesis, from the tables T0 (variant 0) and T1 (variant 1).
__device__ float predict(int op, int hyp, float x, const uint32_t *T0, const uint32_t *T1) {
    const uint32_t u = __float_as_uint(x), mag = u & 0x7fffffffu;
    const bool neg = u >> 31, nan = mag > 0x7f800000u, inf = mag == 0x7f800000u, small = mag < 0x00800000u;
    const int E = (int)(mag >> 23) - 127;
    const uint32_t j = u & 0x7fffffu;
    switch (op) {
    case EX2: case SIN: case COS: {
        if (nan) return QNAN;
        if (inf) return op == EX2 ? (neg ? 0.f : x) : QNAN;
        if (small) x = neg ? -0.f : 0.f;                // ftz: a subnormal input is a zero of its sign
        const int mode = hyp & 15, F = hyp >> 4;
        const long long one = 1ll << F, mask = one - 1;
        if (op == EX2 && fabsf(x) > 4096.f) return neg ? 0.f : __int_as_float(0x7f800000);
        double q;
        if (mode == 0) q = floor((double)x * (double)one);
        else q = trunc(fabs((double)x) * (double)one);
        if (op == EX2) {
            long long qi = (long long)q, i = qi >> F, k = qi & mask;
            if (mode == 0) return scaled(T0[k], (int)i);
            return neg ? scaled(T1[k], (int)-i) : scaled(T0[k], (int)i);
        }
        long long k = fabs((double)x) >= 16777216.0 ? 0 : (((long long)q) & mask);
        float r = __uint_as_float(T0[k]);
        return (op == SIN && mode == 1 && neg) ? -r : r;
    }
    case RCP:
        if (nan) return QNAN;
        if (inf) return neg ? -0.f : 0.f;
        if (small) return __int_as_float(neg ? 0xff800000 : 0x7f800000);
        return neg ? -scaled(T0[j], -E) : scaled(T0[j], -E);
    case RSQ: case SQRT: {
        if (nan || (neg && !small)) return QNAN;
        if (small) return op == RSQ ? __int_as_float(neg ? 0xff800000 : 0x7f800000) : (neg ? -0.f : 0.f);
        if (inf) return op == RSQ ? 0.f : x;
        const int p = E & 1, h = (E - p) / 2;
        return scaled((p ? T1 : T0)[j], op == RSQ ? -h : h);
    }
    case LG2: {
        if (nan || (neg && !small)) return QNAN;
        if (small) return __int_as_float(0xff800000);
        if (inf) return x;
        const float t0 = __uint_as_float(T0[j]);
        const double L = t0 >= 0.5f ? (double)__uint_as_float(T1[j]) + 1.0 : (double)t0;
        const double v = (double)E + L;
        switch (hyp) {
        case 0: return __double2float_rn(v);
        case 1: return __double2float_rz(v);
        case 2: return __double2float_rd(v);
        case 3: return __double2float_ru(v);
        default: {                  // 4: rz of e + L + an infinitesimal: -, where L came from T1 (T1 was
                                    // rounded toward zero, so up); +, for x < 1 (e < 0)
            const int nudge = (t0 >= 0.5f ? -1 : 0) + (E < 0 ? 1 : 0);
            float r = __double2float_rz(v);
            if ((double)r == v && ((v > 0 && nudge < 0) || (v < 0 && nudge > 0))) r = nextafterf(r, 0.f);
            return r;
        }
        }
    }
    default: {                                          // TANH
        if (hyp == 64) return -mufu(TANH, -x);
        const int K = hyp & 31, s = 23 - K;
        uint32_t v = u;
        if (s > 0) {
            if (hyp & 32) v = u + ((1u << (s - 1)) - 1u) + ((u >> s) & 1u);   // nearest, ties to even
            v &= ~((1u << s) - 1u);
            if (nan) v = u;
        }
        return mufu(TANH, __uint_as_float(v));
    }
    }
}

// Per-block bin counts in shared memory, added to the global ones at the end. A thread counts a
// run of equal bins in a register first (grid-stride neighbours share bins), so that a badly wrong
// hypothesis does not turn into one shared atomic per input.
struct Run {
    int key = -1;
    unsigned n = 0;
    __device__ __forceinline__ void add(unsigned *bins, int k) {
        if (k != key) {
            if (n) atomicAdd(&bins[key], n);
            key = k;
            n = 0;
        }
        n++;
    }
    __device__ __forceinline__ void done(unsigned *bins) {
        if (n) atomicAdd(&bins[key], n);
    }
};

__device__ __forceinline__ void flush(unsigned *bins, unsigned long long *counts, int nbins = NBINS) {
    __syncthreads();
    for (int b = threadIdx.x; b < nbins; b += blockDim.x)
        if (bins[b]) atomicAdd(&counts[b], (unsigned long long)bins[b]);
}

__device__ __forceinline__ void keep(uint32_t *samples, unsigned *nsamples, uint32_t a, uint32_t b, uint32_t c) {
    if (*(volatile unsigned *)nsamples >= NSAMPLES) return;
    unsigned i = atomicAdd(nsamples, 1u);
    if (i < NSAMPLES) { samples[3 * i] = a; samples[3 * i + 1] = b; samples[3 * i + 2] = c; }
}

// Over inputs u = start + j (j < n): count (per bin of u) and sample where the pair (a, b) that
// `pair(u, j)` gives differs.
template <typename Pair>
__device__ void count_mismatches(Pair pair, unsigned long long *counts, uint32_t *samples, unsigned *nsamples,
                                 unsigned long long start, unsigned long long n) {
    __shared__ unsigned bins[NBINS];
    for (int b = threadIdx.x; b < NBINS; b += blockDim.x) bins[b] = 0;
    __syncthreads();
    Run run;
    for (unsigned long long j = blockIdx.x * blockDim.x + threadIdx.x; j < n; j += (unsigned long long)gridDim.x * blockDim.x) {
        const uint32_t u = (uint32_t)(start + j);
        const uint2 ab = pair(u, j);
        if (ab.x != ab.y) {
            run.add(bins, u >> 23);
            keep(samples, nsamples, u, ab.x, ab.y);
        }
    }
    run.done(bins);
    flush(bins, counts);
}

extern "C" __global__ void check(int op, int hyp, const uint32_t *T0, const uint32_t *T1, unsigned long long *counts,
                                 uint32_t *samples, unsigned *nsamples, unsigned long long start, unsigned long long n) {
    count_mismatches([=](uint32_t u, unsigned long long) {
        const float x = __uint_as_float(u);
        return make_uint2(__float_as_uint(mufu(op, x)), __float_as_uint(predict(op, hyp, x, T0, T1)));
    }, counts, samples, nsamples, start, n);
}

// ---- error against the correctly rounded value -------------------------------------------------------
__device__ double reference(int op, float xf) {
    const double x = xf;
    switch (op) {
    case EX2: return exp2(x);
    case RCP: return 1.0 / x;
    case RSQ: return rsqrt(x);
    case LG2: return log2(x);
    case SQRT: return sqrt(x);
    case SIN: return sinpi(2.0 * x);
    case COS: return cospi(2.0 * x);
    default: return tanh(x);
    }
}

__device__ __forceinline__ long long ordered(uint32_t b) {   // monotone in the float value
    return (b >> 31) ? -(long long)(b & 0x7fffffffu) : (long long)b;
}

#define NHIST 35   // ulp distance -16..16, then "beyond", then "NaN on one side only"
// dynamic shared memory: NBINS * NHIST counts, then NBINS largest |errors| (f64 bits)
extern "C" __global__ void errhist(int op, unsigned long long *hist, unsigned long long *maxabs,
                                   unsigned long long start, unsigned long long n) {
    extern __shared__ unsigned h[];
    unsigned long long *hmax = reinterpret_cast<unsigned long long *>(h + NBINS * NHIST);
    for (int b = threadIdx.x; b < NBINS * NHIST; b += blockDim.x) h[b] = 0;
    for (int b = threadIdx.x; b < NBINS; b += blockDim.x) hmax[b] = 0;
    __syncthreads();
    Run run;
    int maxbin = 0;
    unsigned long long curmax = 0;
    for (unsigned long long i = start + blockIdx.x * blockDim.x + threadIdx.x; i < start + n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        const uint32_t u = (uint32_t)i;
        const float x = __uint_as_float(u);
        // ftz: subnormal inputs act as zeros of their sign, subnormal results flush
        const float xin = fabsf(x) < 1.17549435e-38f ? copysignf(0.f, x) : x;
        const double ref = reference(op, xin);
        const uint32_t y = __float_as_uint(mufu(op, x)), r = __float_as_uint(ftz(__double2float_rn(ref)));
        const bool yn = (y & 0x7fffffffu) > 0x7f800000u, rn = (r & 0x7fffffffu) > 0x7f800000u;
        int bucket;
        if ((int)(u >> 23) != maxbin) {
            if (curmax) atomicMax(&hmax[maxbin], curmax);
            maxbin = u >> 23;
            curmax = 0;
        }
        if (yn || rn) bucket = (yn && rn) ? 16 : 34;
        else {
            long long d = ordered(y) - ordered(r);
            bucket = d < -16 || d > 16 ? 33 : (int)d + 16;
            const double e = fabs((double)__uint_as_float(y) - ref);
            if (e < 1e300) {                                // not NaN, not infinite
                unsigned long long eb = (unsigned long long)__double_as_longlong(e);
                curmax = eb > curmax ? eb : curmax;
            }
        }
        run.add(h, (int)(u >> 23) * NHIST + bucket);
    }
    run.done(h);
    if (curmax) atomicMax(&hmax[maxbin], curmax);
    flush(h, hist, NBINS * NHIST);
    for (int b = threadIdx.x; b < NBINS; b += blockDim.x)
        if (hmax[b]) atomicMax(&maxabs[b], hmax[b]);
}

// ---- the PTX forms without .ftz --------------------------------------------------------------------
extern "C" __global__ void compose(int op, unsigned long long *counts, uint32_t *samples, unsigned *nsamples,
                                   unsigned long long start, unsigned long long n) {
    count_mismatches([=](uint32_t u, unsigned long long) {
        const float x = __uint_as_float(u);
        return make_uint2(__float_as_uint(ptx_full(op, x)), __float_as_uint(composed(op, x)));
    }, counts, samples, nsamples, start, n);
}

// sin/cos.approx(x) of the module as built; compared in the patched module with MUFU(RZ(x * c)).
extern "C" __global__ void sincos_dump(int op, float *out, unsigned long long start, unsigned long long n) {
    for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (unsigned long long)gridDim.x * blockDim.x)
        out[i] = mufu(op, __uint_as_float((uint32_t)(start + i)));
}

extern "C" __global__ void sincos_compare(int op, float c, const float *built, unsigned long long *counts,
                                          uint32_t *samples, unsigned *nsamples, unsigned long long start,
                                          unsigned long long n) {
    count_mismatches([=](uint32_t u, unsigned long long j) {
        return make_uint2(__float_as_uint(built[j]), __float_as_uint(mufu(op, __fmul_rz(__uint_as_float(u), c))));
    }, counts, samples, nsamples, start, n);
}

// ---- 16-bit forms ------------------------------------------------------------------------------------
// op16: 0 ex2.approx.f16, 1 ex2.approx.ftz.bf16, 2 tanh.approx.f16, 3 tanh.approx.bf16,
//       4 hexp2, 5 hexp, 6 hexp10, 7 h2exp2 (low half of a pair with both halves equal)
__device__ __forceinline__ uint16_t op16(int op, uint16_t x) {
    uint16_t r;
    switch (op) {
    case 0: asm volatile("ex2.approx.f16 %0, %1;" : "=h"(r) : "h"(x)); return r;
    case 1: asm volatile("ex2.approx.ftz.bf16 %0, %1;" : "=h"(r) : "h"(x)); return r;
    case 2: asm volatile("tanh.approx.f16 %0, %1;" : "=h"(r) : "h"(x)); return r;
    case 3: asm volatile("tanh.approx.bf16 %0, %1;" : "=h"(r) : "h"(x)); return r;
    case 4: return __half_as_ushort(hexp2(__ushort_as_half(x)));
    case 5: return __half_as_ushort(hexp(__ushort_as_half(x)));
    case 6: return __half_as_ushort(hexp10(__ushort_as_half(x)));
    default: return __half_as_ushort(__low2half(h2exp2(__half2half2(__ushort_as_half(x)))));
    }
}

extern "C" __global__ void dump16(int op, uint16_t *out) {
    for (uint32_t u = blockIdx.x * blockDim.x + threadIdx.x; u < 65536u; u += gridDim.x * blockDim.x)
        out[u] = op16(op, (uint16_t)u);
}

// op: 0 ex2.approx.f16x2, 1 ex2.approx.ftz.bf16x2, 2 tanh.approx.f16x2, 3 tanh.approx.bf16x2, against
// the 16-bit table of the same function applied to each half; bins by the high half's top 9 bits.
__device__ __forceinline__ uint32_t op16x2(int op, uint32_t x) {
    uint32_t r;
    switch (op) {
    case 0: asm volatile("ex2.approx.f16x2 %0, %1;" : "=r"(r) : "r"(x)); return r;
    case 1: asm volatile("ex2.approx.ftz.bf16x2 %0, %1;" : "=r"(r) : "r"(x)); return r;
    case 2: asm volatile("tanh.approx.f16x2 %0, %1;" : "=r"(r) : "r"(x)); return r;
    default: asm volatile("tanh.approx.bf16x2 %0, %1;" : "=r"(r) : "r"(x)); return r;
    }
}

extern "C" __global__ void check16x2(int op, const uint16_t *T, unsigned long long *counts, uint32_t *samples,
                                     unsigned *nsamples, unsigned long long start, unsigned long long n) {
    count_mismatches([=](uint32_t u, unsigned long long) {
        return make_uint2(op16x2(op, u), (uint32_t)T[u & 0xffffu] | ((uint32_t)T[u >> 16] << 16));
    }, counts, samples, nsamples, start, n);
}
