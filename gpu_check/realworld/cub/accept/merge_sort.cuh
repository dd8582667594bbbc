// DeviceMergeSort, DeviceSegmentedSort and DeviceMerge over int, float, int64
// (the template; each <family>_<type>.cu instantiates it for one type: smaller translation units,
// compiled in parallel)
#pragma once
#include "common.cuh"

template <class K>
void merge_all(K* keys, K* keys_out, int* values, int* values_out, int n, int* offsets)
{
  TEMP;
  cub::DeviceMergeSort::SortKeys(d_temp_storage, temp_storage_bytes, keys, n, cuda::std::less<K>{});
  cub::DeviceMergeSort::SortPairs(d_temp_storage, temp_storage_bytes, keys, values, n, cuda::std::less<K>{});
  cub::DeviceMergeSort::StableSortKeys(d_temp_storage, temp_storage_bytes, keys, n, cuda::std::greater<K>{});
  cub::DeviceSegmentedSort::SortKeys(d_temp_storage, temp_storage_bytes, keys, keys_out, n, 100, offsets, offsets + 1);
  cub::DeviceSegmentedSort::StableSortPairs(d_temp_storage, temp_storage_bytes, keys, keys_out, values, values_out, n,
                                            100, offsets, offsets + 1);
  cub::DeviceMerge::MergeKeys(d_temp_storage, temp_storage_bytes, keys, n, keys_out, n, keys, cuda::std::less<K>{});
}

