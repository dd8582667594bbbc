/* A CPU stand-in for the CUDA runtime (LD_PRELOAD; this project's own code): with it, a CUTLASS
   example built with `-cudart shared` runs its host code on a machine without a GPU far enough
   to build and "launch" its GEMM, so that hopper_capture.c (preloaded before it) records the
   Params bytes the example's host code builds (hopper_local.py: the executor's run of the
   kernel on the CPU). Nothing runs on a device: device memory is host memory, kernel launches
   and events do nothing, cuTensorMapEncodeTiled writes 128 bytes that name the call (the shim
   logs its arguments), and the device is described as an H200 (132 SMs, compute capability 9.0,
   227 KB of shared memory per block: CUDA C++ Programming Guide, compute capability 9.0 table).
   $FAKE_PARAM_SIZES names a file of "<mangled kernel name> <parameter bytes>" lines (from the
   PTX's .param list): cudaFuncGetParamInfo answers from it. */
#define _GNU_SOURCE
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FUNCS 256
static struct { const void* host; const char* name; } funcs[MAX_FUNCS];
static int n_funcs;
static const int SMS = 132, SMEM_OPTIN = 232448, SMEM_SM = 233472;

void** __cudaRegisterFatBinary(void* fat) {
  static void* handle;
  handle = fat;
  return &handle;
}
void __cudaRegisterFatBinaryEnd(void** h) { (void)h; }
void __cudaUnregisterFatBinary(void** h) { (void)h; }
void __cudaRegisterFunction(void** h, const char* host, char* dev, const char* name, int limit, void* tid,
                            void* bid, void* bdim, void* gdim, int* wsize) {
  (void)h; (void)dev; (void)limit; (void)tid; (void)bid; (void)bdim; (void)gdim; (void)wsize;
  if (n_funcs < MAX_FUNCS) {
    funcs[n_funcs].host = host;
    funcs[n_funcs++].name = name;
  }
}
void __cudaRegisterVar(void** h, char* host, char* dev, const char* name, int ext, size_t size, int c, int g) {
  (void)h; (void)host; (void)dev; (void)name; (void)ext; (void)size; (void)c; (void)g;
}
/* <<<grid, block, smem>>> pushes its configuration and the kernel's stub pops it before __cudaLaunchKernel
   (which the shim records): hand it back unchanged */
static struct { dim3 grid, block; size_t smem; void* stream; } pushed;
unsigned __cudaPushCallConfiguration(dim3 g, dim3 b, size_t s, void* st) {
  pushed.grid = g; pushed.block = b; pushed.smem = s; pushed.stream = st;
  return 0;
}
cudaError_t __cudaPopCallConfiguration(dim3* g, dim3* b, size_t* s, void* st) {
  *g = pushed.grid; *b = pushed.block; *s = pushed.smem;
  *(void**)st = pushed.stream;
  return cudaSuccess;
}
cudaError_t __cudaGetKernel(cudaKernel_t* k, const void* host) {
  *k = (cudaKernel_t)host;
  return cudaSuccess;
}
cudaError_t __cudaLaunchKernel(cudaKernel_t k, dim3 g, dim3 b, void** a, size_t s, cudaStream_t st) {
  (void)k; (void)g; (void)b; (void)a; (void)s; (void)st;
  return cudaSuccess;
}
cudaError_t cudaLaunchKernel(const void* f, dim3 g, dim3 b, void** a, size_t s, cudaStream_t st) {
  (void)f; (void)g; (void)b; (void)a; (void)s; (void)st;
  return cudaSuccess;
}
cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t* c, const void* f, void** a) {
  (void)c; (void)f; (void)a;
  return cudaSuccess;
}

cudaError_t cudaFuncGetName(const char** name, const void* f) {
  for (int i = 0; i < n_funcs; i++)
    if (funcs[i].host == f) {
      *name = funcs[i].name;
      return cudaSuccess;
    }
  return cudaErrorInvalidDeviceFunction;
}

cudaError_t cudaFuncGetParamInfo(const void* f, size_t index, size_t* offset, size_t* size) {
  const char* name;
  const char* path = getenv("FAKE_PARAM_SIZES");
  if (index != 0 || !path || cudaFuncGetName(&name, f) != cudaSuccess) return cudaErrorInvalidValue;
  FILE* file = fopen(path, "r");
  if (!file) return cudaErrorInvalidValue;
  static char line[8192];
  cudaError_t e = cudaErrorInvalidValue;
  while (fgets(line, sizeof line, file)) {
    char* sp = strrchr(line, ' ');
    if (sp && (size_t)(sp - line) == strlen(name) && strncmp(line, name, sp - line) == 0) {
      *offset = 0;
      *size = strtoull(sp + 1, NULL, 10);
      e = cudaSuccess;
      break;
    }
  }
  fclose(file);
  return e;
}

cudaError_t cudaMalloc(void** p, size_t n) {
  *p = aligned_alloc(256, (n + 255) / 256 * 256 + 256);
  if (!*p) return cudaErrorMemoryAllocation;
  memset(*p, 0, n);
  return cudaSuccess;
}
cudaError_t cudaFree(void* p) {
  free(p);
  return cudaSuccess;
}
cudaError_t cudaMemcpy(void* d, const void* s, size_t n, enum cudaMemcpyKind k) {
  (void)k;
  memmove(d, s, n);
  return cudaSuccess;
}
cudaError_t cudaMemcpyAsync(void* d, const void* s, size_t n, enum cudaMemcpyKind k, cudaStream_t st) {
  (void)st;
  return cudaMemcpy(d, s, n, k);
}
cudaError_t cudaMemset(void* p, int v, size_t n) {
  memset(p, v, n);
  return cudaSuccess;
}
cudaError_t cudaMemsetAsync(void* p, int v, size_t n, cudaStream_t st) {
  (void)st;
  return cudaMemset(p, v, n);
}

cudaError_t cudaGetDevice(int* d) { *d = 0; return cudaSuccess; }
cudaError_t cudaSetDevice(int d) { (void)d; return cudaSuccess; }
cudaError_t cudaGetDeviceCount(int* n) { *n = 1; return cudaSuccess; }
cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp* p, int d) {
  (void)d;
  memset(p, 0, sizeof *p);
  strcpy(p->name, "layoutsim fake runtime (H200 figures)");
  p->major = 9;
  p->minor = 0;
  p->multiProcessorCount = SMS;
  p->sharedMemPerBlockOptin = SMEM_OPTIN;
  p->sharedMemPerMultiprocessor = SMEM_SM;
  p->sharedMemPerBlock = 49152;
  p->maxThreadsPerBlock = 1024;
  p->maxThreadsPerMultiProcessor = 2048;
  p->regsPerBlock = 65536;
  p->warpSize = 32;
  p->totalGlobalMem = (size_t)141 << 30;
  return cudaSuccess;
}
cudaError_t cudaDeviceGetAttribute(int* v, enum cudaDeviceAttr a, int d) {
  (void)d;
  switch (a) {
  case cudaDevAttrMultiProcessorCount: *v = SMS; break;
  case cudaDevAttrComputeCapabilityMajor: *v = 9; break;
  case cudaDevAttrComputeCapabilityMinor: *v = 0; break;
  case cudaDevAttrMaxSharedMemoryPerBlockOptin: *v = SMEM_OPTIN; break;
  case cudaDevAttrMaxSharedMemoryPerMultiprocessor: *v = SMEM_SM; break;
  case cudaDevAttrMaxThreadsPerBlock: *v = 1024; break;
  case cudaDevAttrWarpSize: *v = 32; break;
  default: *v = 0;
  }
  return cudaSuccess;
}
cudaError_t cudaFuncSetAttribute(const void* f, enum cudaFuncAttribute a, int v) {
  (void)f; (void)a; (void)v;
  return cudaSuccess;
}
cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes* a, const void* f) {
  (void)f;
  memset(a, 0, sizeof *a);
  a->maxThreadsPerBlock = 1024;
  a->maxDynamicSharedSizeBytes = SMEM_OPTIN;
  return cudaSuccess;
}
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* n, const void* f, int b, size_t s, unsigned fl) {
  (void)f; (void)b; (void)s; (void)fl;
  *n = 1;
  return cudaSuccess;
}
cudaError_t cudaOccupancyMaxActiveClusters(int* n, const void* f, const cudaLaunchConfig_t* c) {
  (void)f;
  unsigned size = 1;
  for (unsigned i = 0; c && i < c->numAttrs; i++)
    if (c->attrs[i].id == cudaLaunchAttributeClusterDimension)
      size = c->attrs[i].val.clusterDim.x * c->attrs[i].val.clusterDim.y * c->attrs[i].val.clusterDim.z;
  *n = SMS / (size ? size : 1);
  return cudaSuccess;
}
cudaError_t cudaGetLastError(void) { return cudaSuccess; }
cudaError_t cudaPeekAtLastError(void) { return cudaSuccess; }
const char* cudaGetErrorString(cudaError_t e) { (void)e; return "layoutsim fake runtime"; }
const char* cudaGetErrorName(cudaError_t e) { (void)e; return "layoutsim fake runtime"; }
cudaError_t cudaDeviceSynchronize(void) { return cudaSuccess; }
cudaError_t cudaStreamSynchronize(cudaStream_t s) { (void)s; return cudaSuccess; }
cudaError_t cudaEventCreate(cudaEvent_t* e) { *e = (cudaEvent_t)1; return cudaSuccess; }
cudaError_t cudaEventDestroy(cudaEvent_t e) { (void)e; return cudaSuccess; }
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) { (void)e; (void)s; return cudaSuccess; }
cudaError_t cudaEventSynchronize(cudaEvent_t e) { (void)e; return cudaSuccess; }
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t a, cudaEvent_t b) { (void)a; (void)b; *ms = 1; return cudaSuccess; }

static int n_maps;
static CUresult fake_encode(CUtensorMap* m, CUtensorMapDataType dt, cuuint32_t rank, void* gaddr, const cuuint64_t* dims,
                            const cuuint64_t* strides, const cuuint32_t* box, const cuuint32_t* estr,
                            CUtensorMapInterleave il, CUtensorMapSwizzle sw, CUtensorMapL2promotion l2,
                            CUtensorMapFloatOOBfill oob) {
  (void)dt; (void)rank; (void)dims; (void)strides; (void)box; (void)estr; (void)il; (void)sw; (void)l2; (void)oob;
  unsigned char* b = (unsigned char*)m;
  memset(b, 0, 128);
  memcpy(b, "fake tensor map", 15);
  int k = n_maps++;
  memcpy(b + 16, &k, sizeof k);
  memcpy(b + 24, &gaddr, sizeof gaddr);
  return CUDA_SUCCESS;
}
cudaError_t cudaGetDriverEntryPointByVersion(const char* sym, void** fn, unsigned int v, unsigned long long fl,
                                             enum cudaDriverEntryPointQueryResult* st) {
  (void)v; (void)fl;
  int ok = strcmp(sym, "cuTensorMapEncodeTiled") == 0;
  *fn = ok ? (void*)fake_encode : NULL;
  if (st) *st = ok ? cudaDriverEntryPointSuccess : cudaDriverEntryPointSymbolNotFound;
  return ok ? cudaSuccess : cudaErrorInvalidValue;
}
cudaError_t cudaGetDriverEntryPoint(const char* sym, void** fn, unsigned long long fl,
                                    enum cudaDriverEntryPointQueryResult* st) {
  return cudaGetDriverEntryPointByVersion(sym, fn, 12000, fl, st);
}
