// merge_sort over float: DeviceMergeSort, DeviceSegmentedSort and DeviceMerge over int, float, int64
#include "merge_sort.cuh"

template void merge_all<float>(float*, float*, int*, int*, int, int*);
