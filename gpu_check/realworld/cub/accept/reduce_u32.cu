// reduce over unsigned: DeviceReduce and DeviceSegmentedReduce over int, unsigned, int64, float, double (common.cuh)
#include "reduce.cuh"

template void reduce_all<unsigned>(unsigned*, unsigned*, int, int*, cub::KeyValuePair<int, unsigned>*);
