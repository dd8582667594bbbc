// layoutsim's launch capture, linked into a host program built with `-cudart shared`. nvcc 13's
// launch stubs call __cudaGetKernel(&handle, host function) once, then __cudaLaunchKernel(handle,
// ...); CUB's programmatic-dependent launches call cudaLaunchKernelExC(config, host function, ...).
// The program's own definitions below take the place of libcudart's (the executable's symbols come
// first) and forward to libcudart's (dlsym RTLD_NEXT); a handle is mapped back to its host
// function, which cudaFuncGetName and cudaFuncGetParamInfo take.
//
// With CUB_CAPTURE_DIR set, every launch is recorded in that folder:
//   launches.jsonl   one line per launch: label (capture_label's last), kernel (cudaFuncGetName),
//                    grid, block, dynamic shared bytes, every parameter's offset and size
//                    (cudaFuncGetParamInfo) with its bytes in hex, the 8-byte-aligned parameter
//                    words that hold an address inside a live cudaMalloc allocation
//                    [parameter, byte in it, allocation, byte in the allocation], and those
//                    allocations' sizes
//   L<k>_A<id>.in / .out   each such allocation's bytes before and after the launch (the device
//                    synchronised on both sides)
// Without it, the launches pass straight through (how the program runs under ncu).
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace {
struct Alloc { uintptr_t base; size_t size; int id; };
std::map<uintptr_t, Alloc> allocs;          // by base address
int next_alloc = 0, next_launch = 0;
std::string label = "";
std::map<const void*, const void*> host_function;   // cudaKernel_t -> the stub's host function

template <class F>
F real(const char* name)
{
  void* f = dlsym(RTLD_NEXT, name);
  if (!f) { std::fprintf(stderr, "capture: %s not found in libcudart\n", name); std::exit(3); }
  return reinterpret_cast<F>(f);
}

const char* dir() { return std::getenv("CUB_CAPTURE_DIR"); }

const Alloc* find(uint64_t v)
{
  auto it = allocs.upper_bound(uintptr_t(v));
  if (it == allocs.begin()) return nullptr;
  --it;
  return (v >= it->second.base && v < it->second.base + it->second.size) ? &it->second : nullptr;
}

void dump(const Alloc& a, int launch, const char* ext)
{
  std::vector<unsigned char> h(a.size);
  cudaMemcpy(h.data(), reinterpret_cast<void*>(a.base), a.size, cudaMemcpyDeviceToHost);
  std::string path = std::string(dir()) + "/L" + std::to_string(launch) + "_A" + std::to_string(a.id) + ext;
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) { std::fprintf(stderr, "capture: cannot write %s\n", path.c_str()); std::exit(3); }
  std::fwrite(h.data(), 1, h.size(), f);
  std::fclose(f);
}

struct Record
{
  int k;
  std::vector<const Alloc*> used;
};

Record before(const void* func, dim3 g, dim3 b, size_t smem, void** args)
{
  Record r{next_launch++, {}};
  cudaDeviceSynchronize();
  const char* name = "?";
  if (cudaFuncGetName(&name, func) != cudaSuccess) name = "?";
  std::string params = "[", ptrs = "[";
  for (size_t i = 0;; ++i)
  {
    size_t off = 0, size = 0;
    if (cudaFuncGetParamInfo(func, i, &off, &size) != cudaSuccess) { cudaGetLastError(); break; }
    const unsigned char* p = static_cast<const unsigned char*>(args[i]);
    char hex[3];
    std::string h;
    for (size_t j = 0; j < size; ++j) { std::snprintf(hex, 3, "%02x", p[j]); h += hex; }
    params += std::string(i ? "," : "") + "{\"offset\":" + std::to_string(off) + ",\"size\":" + std::to_string(size) +
              ",\"hex\":\"" + h + "\"}";
    for (size_t j = 0; j + 8 <= size; j += 8)
    {
      uint64_t v;
      __builtin_memcpy(&v, p + j, 8);
      const Alloc* a = find(v);
      if (!a) continue;
      if (ptrs.size() > 1) ptrs += ",";
      ptrs += "[" + std::to_string(i) + "," + std::to_string(j) + "," + std::to_string(a->id) + "," +
              std::to_string(v - a->base) + "]";
      bool seen = false;
      for (auto* u : r.used) seen |= u == a;
      if (!seen) r.used.push_back(a);
    }
  }
  std::string sizes = "{";
  for (auto* a : r.used)
  {
    if (sizes.size() > 1) sizes += ",";
    sizes += "\"" + std::to_string(a->id) + "\":" + std::to_string(a->size);
    dump(*a, r.k, ".in");
  }
  std::string path = std::string(dir()) + "/launches.jsonl";
  FILE* f = std::fopen(path.c_str(), "a");
  if (!f) { std::fprintf(stderr, "capture: cannot write %s\n", path.c_str()); std::exit(3); }
  std::fprintf(f, "{\"launch\":%d,\"label\":\"%s\",\"kernel\":\"%s\",\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u],"
               "\"shared_bytes\":%zu,\"params\":%s],\"pointers\":%s],\"allocations\":%s}}\n",
               r.k, label.c_str(), name, g.x, g.y, g.z, b.x, b.y, b.z, smem, params.c_str(), ptrs.c_str(), sizes.c_str());
  std::fclose(f);
  return r;
}

void after(const Record& r, cudaError_t launched)
{
  cudaError_t e = cudaDeviceSynchronize();
  if (launched != cudaSuccess || e != cudaSuccess)
    std::fprintf(stderr, "capture: launch %d: %s\n", r.k, cudaGetErrorString(launched != cudaSuccess ? launched : e));
  for (auto* a : r.used) dump(*a, r.k, ".out");
}
}  // namespace

extern "C" void capture_label(const char* name) { label = name; }

extern "C" cudaError_t cudaMalloc(void** p, size_t size)
{
  static auto f = real<cudaError_t (*)(void**, size_t)>("cudaMalloc");
  cudaError_t e = f(p, size);
  if (e == cudaSuccess && *p)
    allocs[uintptr_t(*p)] = Alloc{uintptr_t(*p), size, next_alloc++};
  return e;
}

extern "C" cudaError_t cudaFree(void* p)
{
  static auto f = real<cudaError_t (*)(void*)>("cudaFree");
  allocs.erase(uintptr_t(p));
  return f(p);
}

extern "C" cudaError_t __cudaGetKernel(cudaKernel_t* kernel, const void* func)
{
  static auto f = real<cudaError_t (*)(cudaKernel_t*, const void*)>("__cudaGetKernel");
  cudaError_t e = f(kernel, func);
  if (e == cudaSuccess) host_function[static_cast<const void*>(*kernel)] = func;
  return e;
}

extern "C" cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 g, dim3 b, void** args, size_t smem,
                                          cudaStream_t s)
{
  static auto f = real<cudaError_t (*)(cudaKernel_t, dim3, dim3, void**, size_t, cudaStream_t)>("__cudaLaunchKernel");
  if (!dir()) return f(kernel, g, b, args, smem, s);
  auto it = host_function.find(static_cast<const void*>(kernel));
  if (it == host_function.end()) { std::fprintf(stderr, "capture: a kernel handle without its function\n"); std::exit(3); }
  Record r = before(it->second, g, b, smem, args);
  cudaError_t e = f(kernel, g, b, args, smem, s);
  after(r, e);
  return e;
}

extern "C" cudaError_t cudaLaunchKernel(const void* func, dim3 g, dim3 b, void** args, size_t smem, cudaStream_t s)
{
  static auto f = real<cudaError_t (*)(const void*, dim3, dim3, void**, size_t, cudaStream_t)>("cudaLaunchKernel");
  if (!dir()) return f(func, g, b, args, smem, s);
  Record r = before(func, g, b, smem, args);
  cudaError_t e = f(func, g, b, args, smem, s);
  after(r, e);
  return e;
}

extern "C" cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t* config, const void* func, void** args)
{
  static auto f = real<cudaError_t (*)(const cudaLaunchConfig_t*, const void*, void**)>("cudaLaunchKernelExC");
  if (!dir()) return f(config, func, args);
  Record r = before(func, config->gridDim, config->blockDim, config->dynamicSmemBytes, args);
  cudaError_t e = f(config, func, args);
  after(r, e);
  return e;
}
