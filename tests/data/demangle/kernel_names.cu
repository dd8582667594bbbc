// Kernels whose mangled names cover what CUDA kernel names use: the names of tests/ptx/test_kernel_names.py
// (nvcc -ptx -std=c++17 --extended-lambda -arch=sm_90; kernel_names.tsv has each entry and c++filt's reading).
#include <cuda_fp16.h>
#include <type_traits>
__global__ void scale(float *x) { x[0] *= 2; }
template <typename T> __global__ void scale(T *x) {}
template __global__ void scale<float>(float *);
template __global__ void scale<int>(int *);
template __global__ void scale<double>(double *);
namespace ns { namespace inner {
__global__ void axpy(int n, float a, const float *__restrict__ x, float *y) { y[0] = a * x[0] + n; }
} }
template <int N> __global__ void tile(float *x) { x[0] = N; }
template __global__ void tile<32>(float *);
template <int N, bool B> __global__ void tile2(float *x) { x[0] = B ? N : 0; }
template __global__ void tile2<64, true>(float *);
template __global__ void tile2<-8, false>(float *);
template <unsigned N, long L, unsigned long long U, char C> __global__ void lits(int *x) { x[0] = N + L + U + C; }
template __global__ void lits<4u, -5l, 7ull, 'A'>(int *);
namespace { __global__ void hidden(float *x) { x[0] = 1; } }
void launch_hidden(float *x) { hidden<<<1, 1>>>(x); }
namespace ns {
template <typename T, int W> struct Vec { T v[W]; };
struct Op { float k; };
enum class Mode { Slow, Fast };
template <typename V> __global__ void kern(V v, V *out) { out[0] = v; }
template __global__ void kern<Vec<float, 4>>(Vec<float, 4>, Vec<float, 4> *);
template <typename F, Mode M> __global__ void apply(F f, float *x) { x[0] = f.k + (int)M; }
template __global__ void apply<Op, Mode::Fast>(Op, float *);
}
__global__ void mixed(const float *a, const float *b, float *c, unsigned long long n, half h, double2 d,
                      char ch, bool flag, short s, signed char sc, long l, volatile int *vi) { c[0] = a[0] + b[0]; }
__global__ void pointers(float (*rows)[4], const char *const *names, void (*cb)(int)) { rows[0][0] = 1; }
template <typename... Ts> __global__ void variadic(Ts... xs) {}
template __global__ void variadic<int, float>(int, float);
template __global__ void variadic<>();
template <typename T> __global__ void traits(T *x, std::integral_constant<int, 3>) { x[0] = 3; }
template __global__ void traits<float>(float *, std::integral_constant<int, 3>);
template <typename A, typename B> __global__ void same(A *a, B *b, A *c, ns::Vec<A, 2> *d) {}
template __global__ void same<float, half>(float *, half *, float *, ns::Vec<float, 2> *);
extern "C" __global__ void plain_c(float *x) { x[0] = 0; }
__global__ void noargs() {}

// More: const and pointer template arguments, a device lambda (--extended-lambda), repeated std:: templates,
// an anonymous namespace inside a namespace, the remaining builtin types.

template __global__ void scale<const float>(const float *);
template __global__ void scale<float *>(float **);
template __global__ void scale<unsigned int>(unsigned int *);
template <typename T> __global__ void each(T f, float *x) { x[0] = f(1); }
void host_fn(float *x) { each<<<1, 1>>>([] __device__ (int i) { return 2.0f * i; }, x); }
template <typename A, typename B> __global__ void pair(std::integral_constant<A, 1>, std::integral_constant<B, 2>, std::integral_constant<A, 3>) {}
template __global__ void pair<int, long>(std::integral_constant<int, 1>, std::integral_constant<long, 2>, std::integral_constant<int, 3>);
namespace outer { namespace { template <int K> __global__ void deep(float *x, float *y) {} } void go(float *x) { deep<3><<<1,1>>>(x, x); } }
__global__ void refs(float *__restrict__ a, const double *const b, unsigned char *c, unsigned short *d, wchar_t *w, long long *ll, __int128 *big, long double *ld) {}
// A template template parameter, a CUTLASS-like kernel<Operator::Params>, std:: templates as arguments.
template <template <typename, int> class V> __global__ void tt(V<float, 2> *v) {}
template __global__ void tt<ns::Vec>(ns::Vec<float, 2> *);
namespace ns { template <typename T> struct Gemm { struct Params { T *a; }; }; }
template <typename P> __global__ void device_kernel(P params) {}
template __global__ void device_kernel<ns::Gemm<float>::Params>(ns::Gemm<float>::Params);
template <typename T, typename U> __global__ void two(T *, U, std::integral_constant<bool, true>, size_t) {}
template __global__ void two<std::integral_constant<int, 1>, std::integral_constant<int, 1>>(
    std::integral_constant<int, 1> *, std::integral_constant<int, 1>, std::integral_constant<bool, true>, size_t);
