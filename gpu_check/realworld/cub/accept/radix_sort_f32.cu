// radix_sort over float: DeviceRadixSort and DeviceSegmentedRadixSort: keys and key-value pairs, ascending and descending
#include "radix_sort.cuh"

template void radix_all<float>(float*, float*, int*, int*, int, int*);
