// DeviceRadixSort and DeviceSegmentedRadixSort: keys and key-value pairs, ascending and descending
// (the template; each <family>_<type>.cu instantiates it for one type: smaller translation units,
// compiled in parallel)
#pragma once
#include "common.cuh"

template <class K>
void radix_all(K* keys, K* keys_out, int* values, int* values_out, int n, int* offsets)
{
  TEMP;
  cub::DeviceRadixSort::SortKeys(d_temp_storage, temp_storage_bytes, keys, keys_out, n);
  cub::DeviceRadixSort::SortKeysDescending(d_temp_storage, temp_storage_bytes, keys, keys_out, n);
  cub::DeviceRadixSort::SortPairs(d_temp_storage, temp_storage_bytes, keys, keys_out, values, values_out, n);
  cub::DeviceRadixSort::SortPairsDescending(d_temp_storage, temp_storage_bytes, keys, keys_out, values, values_out, n);
  cub::DoubleBuffer<K> kb(keys, keys_out);
  cub::DeviceRadixSort::SortKeys(d_temp_storage, temp_storage_bytes, kb, n);
  cub::DeviceSegmentedRadixSort::SortKeys(d_temp_storage, temp_storage_bytes, keys, keys_out, n, 100, offsets,
                                          offsets + 1);
  cub::DeviceSegmentedRadixSort::SortPairs(d_temp_storage, temp_storage_bytes, keys, keys_out, values, values_out, n,
                                           100, offsets, offsets + 1);
}

