// radix_sort over uint8_t: DeviceRadixSort and DeviceSegmentedRadixSort: keys and key-value pairs, ascending and descending
#include "radix_sort.cuh"

template void radix_all<uint8_t>(uint8_t*, uint8_t*, int*, int*, int, int*);
