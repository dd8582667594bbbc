// merge_sort over long long: DeviceMergeSort, DeviceSegmentedSort and DeviceMerge over int, float, int64
#include "merge_sort.cuh"

template void merge_all<long long>(long long*, long long*, int*, int*, int, int*);
