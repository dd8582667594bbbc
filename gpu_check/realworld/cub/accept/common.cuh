// layoutsim's acceptance translation units over CUB (nvidia-cuda-cccl==13.0.85): each .cu here
// calls a family of CUB's device-wide algorithms over common types inside host functions that
// are never run, so that nvcc instantiates (and prints in the PTX) every kernel those calls
// launch. benchmarks/accept.py --project cub compiles them for sm_90 and sm_80 and loads every
// kernel with layoutsim.ptx.
#pragma once
#include <cub/cub.cuh>

#include <cstddef>
#include <cstdint>

#define TEMP void* d_temp_storage = nullptr; size_t temp_storage_bytes = 0

struct LessThan100
{
  template <class T>
  __host__ __device__ bool operator()(const T& x) const { return x < T(100); }
};

struct Mod3Equal
{
  template <class T>
  __host__ __device__ bool operator()(const T& a, const T& b) const { return (int(a) % 3) == (int(b) % 3); }
};

struct Square
{
  template <class T>
  __host__ __device__ T operator()(const T& x) const { return x * x; }
};
