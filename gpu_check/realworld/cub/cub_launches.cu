// layoutsim's host program over CUB's device-wide algorithms (the headers of the PyPI package
// nvidia-cuda-cccl==13.0.85, CCCL 3.0.1): each algorithm called as CUB documents it (a size query
// with d_temp_storage = nullptr, then the call), on small deterministic inputs. Written for this
// project; no CCCL source is copied here. capture.cpp (linked in) records every kernel launch the
// algorithms make when CUB_CAPTURE_DIR is set: gpu_check/realworld/cub_measure.py runs it.
#include <cub/cub.cuh>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

extern "C" void capture_label(const char* name);   // capture.cpp

static uint32_t mix(uint32_t x)
{
  x ^= x >> 16; x *= 0x7feb352dU; x ^= x >> 15; x *= 0x846ca68bU; x ^= x >> 16;
  return x;
}

static void check(cudaError_t e, const char* what)
{
  if (e != cudaSuccess) { std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e)); std::exit(1); }
}

template <class T>
static T* upload(const std::vector<T>& h)
{
  T* p = nullptr;
  check(cudaMalloc(&p, h.size() * sizeof(T)), "cudaMalloc");
  check(cudaMemcpy(p, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
  return p;
}

template <class T>
static T* output(size_t n)
{
  T* p = nullptr;
  check(cudaMalloc(&p, n * sizeof(T)), "cudaMalloc");
  check(cudaMemset(p, 0xCD, n * sizeof(T)), "cudaMemset");
  return p;
}

// the two calls CUB documents: the size query, then the algorithm with zeroed temporary storage
#define CUB_CALL(label, call)                                                              \
  do {                                                                                     \
    capture_label(label);                                                                  \
    void* d_temp_storage = nullptr; size_t temp_storage_bytes = 0;                         \
    check(call, label);                                                                    \
    check(cudaMalloc(&d_temp_storage, temp_storage_bytes ? temp_storage_bytes : 1), label); \
    check(cudaMemset(d_temp_storage, 0, temp_storage_bytes ? temp_storage_bytes : 1), label); \
    check(call, label);                                                                    \
    check(cudaDeviceSynchronize(), label);                                                 \
    check(cudaFree(d_temp_storage), label);                                                \
  } while (0)

struct IsSmall
{
  __host__ __device__ bool operator()(int x) const { return x < 300; }
};

int main()
{
  const int n = 8000;
  std::vector<int> hi(n), hb(n);
  std::vector<float> hf(n);
  std::vector<unsigned> hu(n);
  for (int i = 0; i < n; ++i)
  {
    uint32_t h = mix(uint32_t(i) + 1);
    hi[i] = int(h % 1000);                                   // 0..999
    hf[i] = float(int(h >> 8) - (1 << 23)) / float(1 << 20); // [-8, 8): sums depend on the order
    hu[i] = mix(h);
    hb[i] = int(h % 997);
  }
  int* d_i = upload(hi);
  float* d_f = upload(hf);
  unsigned* d_u = upload(hu);
  int* d_b = upload(hb);

  int* o_i = output<int>(n);
  float* o_f = output<float>(n);
  unsigned* o_u = output<unsigned>(n);
  int* o_n = output<int>(1);

  CUB_CALL("reduce_sum_i32", cub::DeviceReduce::Sum(d_temp_storage, temp_storage_bytes, d_i, o_i, n));
  CUB_CALL("reduce_sum_f32", cub::DeviceReduce::Sum(d_temp_storage, temp_storage_bytes, d_f, o_f, n));
  CUB_CALL("reduce_max_f32", cub::DeviceReduce::Max(d_temp_storage, temp_storage_bytes, d_f, o_f, n));
  CUB_CALL("scan_exclusive_sum_i32", cub::DeviceScan::ExclusiveSum(d_temp_storage, temp_storage_bytes, d_i, o_i, n));
  CUB_CALL("scan_inclusive_sum_f32", cub::DeviceScan::InclusiveSum(d_temp_storage, temp_storage_bytes, d_f, o_f, n));
  CUB_CALL("radix_sort_keys_u32", cub::DeviceRadixSort::SortKeys(d_temp_storage, temp_storage_bytes, d_u, o_u, n));
  CUB_CALL("histogram_even_i32", cub::DeviceHistogram::HistogramEven(d_temp_storage, temp_storage_bytes, d_b, o_i, 65,
                                                                     0, 997, n));
  CUB_CALL("select_if_i32", cub::DeviceSelect::If(d_temp_storage, temp_storage_bytes, d_i, o_i, o_n, n, IsSmall()));

  // DeviceSegmentedReduce::Sum over 100 segments of varying length (offsets[i], offsets[i + 1])
  const int segments = 100;
  std::vector<int> ho(segments + 1);
  for (int s = 0, at = 0; s <= segments; ++s)
  {
    ho[s] = at;
    at += int(mix(uint32_t(s) + 77) % 80);   // at most 100 * 79 < n
  }
  int* d_o = upload(ho);
  CUB_CALL("segmented_reduce_sum_f32",
           cub::DeviceSegmentedReduce::Sum(d_temp_storage, temp_storage_bytes, d_f, o_f, segments, d_o, d_o + 1));
  std::printf("cub_launches: done\n");
  return 0;
}
