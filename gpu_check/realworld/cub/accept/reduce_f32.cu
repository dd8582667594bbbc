// reduce over float: DeviceReduce and DeviceSegmentedReduce over int, unsigned, int64, float, double (common.cuh)
#include "reduce.cuh"

template void reduce_all<float>(float*, float*, int, int*, cub::KeyValuePair<int, float>*);
