// radix_sort over uint16_t: DeviceRadixSort and DeviceSegmentedRadixSort: keys and key-value pairs, ascending and descending
#include "radix_sort.cuh"

template void radix_all<uint16_t>(uint16_t*, uint16_t*, int*, int*, int, int*);
