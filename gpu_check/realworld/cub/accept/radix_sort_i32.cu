// radix_sort over int: DeviceRadixSort and DeviceSegmentedRadixSort: keys and key-value pairs, ascending and descending
#include "radix_sort.cuh"

template void radix_all<int>(int*, int*, int*, int*, int, int*);
