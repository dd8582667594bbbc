// merge_sort over int: DeviceMergeSort, DeviceSegmentedSort and DeviceMerge over int, float, int64
#include "merge_sort.cuh"

template void merge_all<int>(int*, int*, int*, int*, int, int*);
