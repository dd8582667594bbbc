// reduce over double: DeviceReduce and DeviceSegmentedReduce over int, unsigned, int64, float, double (common.cuh)
#include "reduce.cuh"

template void reduce_all<double>(double*, double*, int, int*, cub::KeyValuePair<int, double>*);
