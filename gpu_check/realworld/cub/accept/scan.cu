// DeviceScan (sums, scans with a max operator, by key) over int, int64, float, double
#include "common.cuh"

template <class T>
void scan_all(T* in, T* out, int* keys, int n)
{
  TEMP;
  cub::DeviceScan::ExclusiveSum(d_temp_storage, temp_storage_bytes, in, out, n);
  cub::DeviceScan::InclusiveSum(d_temp_storage, temp_storage_bytes, in, out, n);
  cub::DeviceScan::ExclusiveScan(d_temp_storage, temp_storage_bytes, in, out, cuda::maximum<>{}, T(0), n);
  cub::DeviceScan::InclusiveScan(d_temp_storage, temp_storage_bytes, in, out, cuda::maximum<>{}, n);
  cub::DeviceScan::ExclusiveSumByKey(d_temp_storage, temp_storage_bytes, keys, in, out, n);
  cub::DeviceScan::InclusiveSumByKey(d_temp_storage, temp_storage_bytes, keys, in, out, n);
}

template void scan_all<int>(int*, int*, int*, int);
template void scan_all<long long>(long long*, long long*, int*, int);
template void scan_all<float>(float*, float*, int*, int);
template void scan_all<double>(double*, double*, int*, int);
