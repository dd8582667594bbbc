// reduce over int: DeviceReduce and DeviceSegmentedReduce over int, unsigned, int64, float, double (common.cuh)
#include "reduce.cuh"

template void reduce_all<int>(int*, int*, int, int*, cub::KeyValuePair<int, int>*);
