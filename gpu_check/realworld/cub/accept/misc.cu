// DeviceAdjacentDifference, DeviceFor, DeviceTransform, DeviceCopy/DeviceMemcpy::Batched
#include "common.cuh"

struct Twice
{
  template <class T>
  __host__ __device__ void operator()(T& x) const { x = x + x; }
};

template <class T>
void misc_all(T* in, T* out, int n, T** srcs, T** dsts, int* sizes, void** vsrcs, void** vdsts, size_t* vsizes)
{
  TEMP;
  cub::DeviceAdjacentDifference::SubtractLeftCopy(d_temp_storage, temp_storage_bytes, in, out, n);
  cub::DeviceAdjacentDifference::SubtractRight(d_temp_storage, temp_storage_bytes, in, n);
  cub::DeviceFor::ForEachN(in, n, Twice{});
  cub::DeviceTransform::Transform(in, out, n, Square{});
  cub::DeviceCopy::Batched(d_temp_storage, temp_storage_bytes, srcs, dsts, sizes, 64);
  cub::DeviceMemcpy::Batched(d_temp_storage, temp_storage_bytes, vsrcs, vdsts, vsizes, 64);
}

template void misc_all<int>(int*, int*, int, int**, int**, int*, void**, void**, size_t*);
template void misc_all<float>(float*, float*, int, float**, float**, int*, void**, void**, size_t*);
template void misc_all<double>(double*, double*, int, double**, double**, int*, void**, void**, size_t*);
