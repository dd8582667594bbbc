// radix_sort over double: DeviceRadixSort and DeviceSegmentedRadixSort: keys and key-value pairs, ascending and descending
#include "radix_sort.cuh"

template void radix_all<double>(double*, double*, int*, int*, int, int*);
