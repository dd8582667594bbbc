// radix_sort over uint32_t: DeviceRadixSort and DeviceSegmentedRadixSort: keys and key-value pairs, ascending and descending
#include "radix_sort.cuh"

template void radix_all<uint32_t>(uint32_t*, uint32_t*, int*, int*, int, int*);
