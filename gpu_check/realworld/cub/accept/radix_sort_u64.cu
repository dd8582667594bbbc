// radix_sort over uint64_t: DeviceRadixSort and DeviceSegmentedRadixSort: keys and key-value pairs, ascending and descending
#include "radix_sort.cuh"

template void radix_all<uint64_t>(uint64_t*, uint64_t*, int*, int*, int, int*);
