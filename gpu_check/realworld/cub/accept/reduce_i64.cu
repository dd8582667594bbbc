// reduce over long long: DeviceReduce and DeviceSegmentedReduce over int, unsigned, int64, float, double (common.cuh)
#include "reduce.cuh"

template void reduce_all<long long>(long long*, long long*, int, int*, cub::KeyValuePair<int, long long>*);
