// DeviceSelect, DevicePartition and DeviceRunLengthEncode over int, float, int64
#include "common.cuh"

template <class T>
void select_all(T* in, T* out, char* flags, int* num, int* counts, int n)
{
  TEMP;
  cub::DeviceSelect::If(d_temp_storage, temp_storage_bytes, in, out, num, n, LessThan100{});
  cub::DeviceSelect::Flagged(d_temp_storage, temp_storage_bytes, in, flags, out, num, n);
  cub::DeviceSelect::Unique(d_temp_storage, temp_storage_bytes, in, out, num, n);
  cub::DeviceSelect::UniqueByKey(d_temp_storage, temp_storage_bytes, in, counts, out, counts, num, n);
  cub::DevicePartition::If(d_temp_storage, temp_storage_bytes, in, out, num, n, LessThan100{});
  cub::DevicePartition::Flagged(d_temp_storage, temp_storage_bytes, in, flags, out, num, n);
  cub::DeviceRunLengthEncode::Encode(d_temp_storage, temp_storage_bytes, in, out, counts, num, n);
  cub::DeviceRunLengthEncode::NonTrivialRuns(d_temp_storage, temp_storage_bytes, in, counts, counts, num, n);
}

template void select_all<int>(int*, int*, char*, int*, int*, int);
template void select_all<float>(float*, float*, char*, int*, int*, int);
template void select_all<long long>(long long*, long long*, char*, int*, int*, int);
