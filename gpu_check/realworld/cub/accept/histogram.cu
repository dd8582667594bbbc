// DeviceHistogram: even and range bins, one channel and four (RGBA) channels
#include "common.cuh"

template <class S>
void histogram_all(S* samples, int* hist, S* levels, int n)
{
  TEMP;
  cub::DeviceHistogram::HistogramEven(d_temp_storage, temp_storage_bytes, samples, hist, 257, S(0), S(255), n);
  cub::DeviceHistogram::HistogramRange(d_temp_storage, temp_storage_bytes, samples, hist, 65, levels, n);
  int* hists[3] = {hist, hist + 256, hist + 512};
  int num_levels[3] = {257, 257, 257};
  S lower[3] = {S(0), S(0), S(0)}, upper[3] = {S(255), S(255), S(255)};
  cub::DeviceHistogram::MultiHistogramEven<4, 3>(d_temp_storage, temp_storage_bytes, samples, hists, num_levels, lower,
                                                 upper, n / 4);
}

template void histogram_all<unsigned char>(unsigned char*, int*, unsigned char*, int);
template void histogram_all<int>(int*, int*, int*, int);
template void histogram_all<float>(float*, int*, float*, int);
