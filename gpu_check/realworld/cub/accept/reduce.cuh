// DeviceReduce and DeviceSegmentedReduce over int, unsigned, int64, float, double (common.cuh)
// (the template; each <family>_<type>.cu instantiates it for one type: smaller translation units,
// compiled in parallel)
#pragma once
#include "common.cuh"

template <class T>
void reduce_all(T* in, T* out, int n, int* offsets, cub::KeyValuePair<int, T>* kv)
{
  TEMP;
  cub::DeviceReduce::Sum(d_temp_storage, temp_storage_bytes, in, out, n);
  cub::DeviceReduce::Min(d_temp_storage, temp_storage_bytes, in, out, n);
  cub::DeviceReduce::Max(d_temp_storage, temp_storage_bytes, in, out, n);
  cub::DeviceReduce::ArgMin(d_temp_storage, temp_storage_bytes, in, kv, n);
  cub::DeviceReduce::ArgMax(d_temp_storage, temp_storage_bytes, in, kv, n);
  cub::DeviceReduce::Reduce(d_temp_storage, temp_storage_bytes, in, out, n, cuda::maximum<>{}, T(0));
  cub::DeviceReduce::TransformReduce(d_temp_storage, temp_storage_bytes, in, out, n, cuda::std::plus<>{}, Square{}, T(0));
  cub::DeviceSegmentedReduce::Sum(d_temp_storage, temp_storage_bytes, in, out, 100, offsets, offsets + 1);
  cub::DeviceSegmentedReduce::Min(d_temp_storage, temp_storage_bytes, in, out, 100, offsets, offsets + 1);
  cub::DeviceSegmentedReduce::Max(d_temp_storage, temp_storage_bytes, in, out, 100, offsets, offsets + 1);
  cub::DeviceSegmentedReduce::ArgMax(d_temp_storage, temp_storage_bytes, in, kv, 100, offsets, offsets + 1);
  cub::DeviceSegmentedReduce::Reduce(d_temp_storage, temp_storage_bytes, in, out, 100, offsets, offsets + 1,
                                     cuda::minimum<>{}, T(0));
}

