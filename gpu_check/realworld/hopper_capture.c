/* The capture shim of gpu_check/realworld/hopper_measure.py (LD_PRELOAD; this project's own code).

   Loaded into a CUTLASS example built with `-cudart shared`, it records what the example's host
   code gives the GPU, without changing it:
   * cudaMalloc/cudaFree: the live device allocations (address, bytes);
   * cuTensorMapEncodeTiled, wherever the example obtains it (cudaGetDriverEntryPointByVersion,
     cudaGetDriverEntryPoint: CUTLASS's cuda_host_adapter.hpp; or a direct call): its arguments
     and the 128 bytes it encoded;
   * cudaLaunchKernelExC / cudaLaunchKernel of a kernel whose name contains $CAPTURE_MATCH
     (default "GemmUniversal"): grid, block, dynamic shared memory, the launch attributes (cluster
     dimension), the parameter bytes and offsets (cudaFuncGetParamInfo) and, before and after the launch
     (the device synchronised), every allocation a parameter word or an encoded map's global
     address points into.
   Output in $CAPTURE_DIR: launch<N>.json, launch<N>.buf<K>.before / .after (raw bytes).
   Build: gcc -O2 -shared -fPIC -o hopper_capture.so hopper_capture.c -I$CUDA/include -ldl */
#define _GNU_SOURCE
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ALLOCS 4096
#define MAX_MAPS 256
#define MAX_PARAM 32768
#define MAX_ARGS 256

typedef struct { uintptr_t addr; size_t bytes; int epoch; } Alloc;
typedef struct {
  unsigned char raw[128];
  int dtype, rank, interleave, swizzle, l2, oob;
  uintptr_t gaddr;
  uint64_t dims[5], strides[5];
  uint32_t box[5], estr[5];
  int epoch;            /* captured launches before it was encoded */
} Map;

static Alloc allocs[MAX_ALLOCS];
static int n_allocs;
static Map maps[MAX_MAPS];
static int n_maps;
static int n_launches;

typedef CUresult (*EncodeFn)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                             const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                             CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
static EncodeFn encode_real;

static void* next(const char* name) {
  void* f = dlsym(RTLD_NEXT, name);
  if (!f) {
    fprintf(stderr, "hopper_capture: %s not found\n", name);
    abort();
  }
  return f;
}

static CUresult encode_wrap(CUtensorMap* m, CUtensorMapDataType dt, cuuint32_t rank, void* gaddr,
                            const cuuint64_t* dims, const cuuint64_t* strides, const cuuint32_t* box,
                            const cuuint32_t* estr, CUtensorMapInterleave il, CUtensorMapSwizzle sw,
                            CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob) {
  CUresult r = encode_real(m, dt, rank, gaddr, dims, strides, box, estr, il, sw, l2, oob);
  if (r == CUDA_SUCCESS && n_maps < MAX_MAPS && rank <= 5) {
    Map* x = &maps[n_maps++];
    memset(x, 0, sizeof(*x));
    memcpy(x->raw, m, 128);
    x->dtype = dt; x->rank = rank; x->interleave = il; x->swizzle = sw; x->l2 = l2; x->oob = oob;
    x->gaddr = (uintptr_t)gaddr;
    x->epoch = n_launches;
    for (unsigned i = 0; i < rank; i++) {
      x->dims[i] = dims[i]; x->box[i] = box[i]; x->estr[i] = estr[i];
      if (i + 1 < rank) x->strides[i] = strides[i];
    }
  }
  return r;
}

CUresult cuTensorMapEncodeTiled(CUtensorMap* m, CUtensorMapDataType dt, cuuint32_t rank, void* gaddr,
                                const cuuint64_t* dims, const cuuint64_t* strides, const cuuint32_t* box,
                                const cuuint32_t* estr, CUtensorMapInterleave il, CUtensorMapSwizzle sw,
                                CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob) {
  if (!encode_real) encode_real = (EncodeFn)next("cuTensorMapEncodeTiled");
  return encode_wrap(m, dt, rank, gaddr, dims, strides, box, estr, il, sw, l2, oob);
}

static void hook(const char* symbol, void** fn) {
  if (symbol && fn && *fn && strcmp(symbol, "cuTensorMapEncodeTiled") == 0 && *fn != (void*)encode_wrap) {
    encode_real = (EncodeFn)*fn;
    *fn = (void*)encode_wrap;
  }
}

cudaError_t cudaGetDriverEntryPointByVersion(const char* symbol, void** fn, unsigned int version,
                                             unsigned long long flags, enum cudaDriverEntryPointQueryResult* st) {
  static cudaError_t (*real)(const char*, void**, unsigned int, unsigned long long,
                             enum cudaDriverEntryPointQueryResult*);
  if (!real) real = next("cudaGetDriverEntryPointByVersion");
  cudaError_t e = real(symbol, fn, version, flags, st);
  if (e == cudaSuccess) hook(symbol, fn);
  return e;
}

cudaError_t cudaGetDriverEntryPoint(const char* symbol, void** fn, unsigned long long flags,
                                    enum cudaDriverEntryPointQueryResult* st) {
  static cudaError_t (*real)(const char*, void**, unsigned long long, enum cudaDriverEntryPointQueryResult*);
  if (!real) real = next("cudaGetDriverEntryPoint");
  cudaError_t e = real(symbol, fn, flags, st);
  if (e == cudaSuccess) hook(symbol, fn);
  return e;
}

cudaError_t cudaMalloc(void** p, size_t bytes) {
  static cudaError_t (*real)(void**, size_t);
  if (!real) real = next("cudaMalloc");
  cudaError_t e = real(p, bytes);
  if (e == cudaSuccess && n_allocs < MAX_ALLOCS) {
    allocs[n_allocs].addr = (uintptr_t)*p;
    allocs[n_allocs].epoch = n_launches;
    allocs[n_allocs++].bytes = bytes;
  }
  return e;
}

cudaError_t cudaFree(void* p) {
  static cudaError_t (*real)(void*);
  if (!real) real = next("cudaFree");
  for (int i = 0; i < n_allocs; i++)
    if (allocs[i].addr == (uintptr_t)p) {
      allocs[i] = allocs[--n_allocs];
      break;
    }
  return real(p);
}

/* Only what was allocated or encoded since the previous captured launch counts: a Params struct's
   padding holds stale bytes of earlier Params (pointers and maps the kernel never reads) */
static int alloc_of(uintptr_t a) {
  for (int i = 0; i < n_allocs; i++)
    if (a >= allocs[i].addr && a < allocs[i].addr + allocs[i].bytes) return allocs[i].epoch == n_launches ? i : -1;
  return -1;
}

static void hex(FILE* f, const unsigned char* b, size_t n) {
  for (size_t i = 0; i < n; i++) fprintf(f, "%02x", b[i]);
}

static void dump(const char* dir, int launch, int k, const char* when, const Alloc* a) {
  char path[4096];
  snprintf(path, sizeof path, "%s/launch%d.buf%d.%s", dir, launch, k, when);
  unsigned char* h = malloc(a->bytes ? a->bytes : 1);
  cudaError_t e = cudaMemcpy(h, (void*)a->addr, a->bytes, cudaMemcpyDeviceToHost);
  FILE* f = fopen(path, "wb");
  if (f) {
    if (e == cudaSuccess) fwrite(h, 1, a->bytes, f);
    fclose(f);
  }
  free(h);
}

/* out[offset..] holds each parameter at the offset cudaFuncGetParamInfo gives (112 for a CUTLASS
   Params on the H100 under CUDA 13.0, 0 under hopper_fake_runtime.c); offsets[n] records it */
static int params_of(const void* func, void** args, unsigned char* out, size_t* total, size_t* offsets) {
  size_t off, size;
  int n = 0;
  *total = 0;
  while (n < MAX_ARGS && cudaFuncGetParamInfo(func, n, &off, &size) == cudaSuccess) {
    if (off + size > MAX_PARAM) return -1;
    offsets[n] = off;
    memcpy(out + off, args[n], size);
    if (off + size > *total) *total = off + size;
    n++;
  }
  cudaGetLastError();
  return n;
}

static cudaError_t capture(const void* func, dim3 grid, dim3 block, size_t smem, const cudaLaunchAttribute* attrs,
                           unsigned n_attrs, void** args, cudaError_t (*launch)(void*), void* ctx) {
  const char* name = NULL;
  const char* match = getenv("CAPTURE_MATCH");
  const char* dir = getenv("CAPTURE_DIR");
  if (cudaFuncGetName(&name, func) != cudaSuccess || !name || !dir || !strstr(name, match ? match : "GemmUniversal"))
    return launch(ctx);
  static unsigned char params[MAX_PARAM];
  size_t total;
  memset(params, 0, sizeof params);
  size_t offsets[MAX_ARGS];
  int np = params_of(func, args, params, &total, offsets);
  int used[MAX_ALLOCS], n_used = 0;
  for (size_t o = 0; np > 0 && o + 8 <= total; o += 8) {   /* words that point into an allocation */
    uintptr_t v;
    memcpy(&v, params + o, 8);
    int i = alloc_of(v);
    int seen = 0;
    for (int j = 0; j < n_used; j++) seen |= used[j] == i;
    if (i >= 0 && !seen) used[n_used++] = i;
  }
  for (int m = 0; m < n_maps; m++) {                        /* the tensors of the maps the params hold */
    if (maps[m].epoch != n_launches) continue;
    for (size_t o = np > 0 ? offsets[0] : 0; o + 128 <= total; o += 64)   /* 64-aligned in Params */
      if (memcmp(params + o, maps[m].raw, 128) == 0) {
        int i = alloc_of(maps[m].gaddr), seen = 0;
        for (int j = 0; j < n_used; j++) seen |= used[j] == i;
        if (i >= 0 && !seen) used[n_used++] = i;
      }
  }
  int id = n_launches++;
  cudaDeviceSynchronize();
  Alloc snap[MAX_ALLOCS];
  for (int k = 0; k < n_used; k++) {
    snap[k] = allocs[used[k]];
    dump(dir, id, k, "before", &snap[k]);
  }
  cudaError_t e = launch(ctx);
  cudaError_t s = cudaDeviceSynchronize();
  for (int k = 0; k < n_used; k++) dump(dir, id, k, "after", &snap[k]);
  char path[4096];
  snprintf(path, sizeof path, "%s/launch%d.json", dir, id);
  FILE* f = fopen(path, "w");
  if (!f) return e;
  fprintf(f, "{\"kernel\": \"%s\", \"launch_error\": %d, \"sync_error\": %d,\n", name, (int)e, (int)s);
  fprintf(f, " \"grid\": [%u, %u, %u], \"block\": [%u, %u, %u], \"shared_bytes\": %zu,\n", grid.x, grid.y,
          grid.z, block.x, block.y, block.z, smem);
  fprintf(f, " \"attributes\": [");
  for (unsigned a = 0; a < n_attrs; a++) {
    fprintf(f, "%s{\"id\": %d, \"value\": \"", a ? ", " : "", (int)attrs[a].id);
    hex(f, (const unsigned char*)&attrs[a].val, sizeof attrs[a].val);
    fprintf(f, "\"}");
  }
  fprintf(f, "],\n \"param_count\": %d, \"params\": \"", np);
  hex(f, params, total);
  fprintf(f, "\",\n \"param_offsets\": [");
  for (int a = 0; a < np; a++) fprintf(f, "%s%zu", a ? ", " : "", offsets[a]);
  fprintf(f, "],\n \"buffers\": [");
  for (int k = 0; k < n_used; k++)
    fprintf(f, "%s{\"address\": %llu, \"bytes\": %zu}", k ? ", " : "", (unsigned long long)snap[k].addr,
            snap[k].bytes);
  fprintf(f, "],\n \"maps\": [");
  for (int m = 0, first = 1; m < n_maps; m++) {
    Map* x = &maps[m];
    if (x->epoch != id) continue;
    fprintf(f, "%s\n  {\"data_type\": %d, \"rank\": %d, \"global_address\": %llu, \"interleave\": %d, "
            "\"swizzle\": %d, \"l2_promotion\": %d, \"oob_fill\": %d, \"dims\": [", first ? "" : ",", x->dtype, x->rank,
            (unsigned long long)x->gaddr, x->interleave, x->swizzle, x->l2, x->oob);
    for (int i = 0; i < x->rank; i++) fprintf(f, "%s%llu", i ? ", " : "", (unsigned long long)x->dims[i]);
    fprintf(f, "], \"strides_bytes\": [");
    for (int i = 0; i + 1 < x->rank; i++) fprintf(f, "%s%llu", i ? ", " : "", (unsigned long long)x->strides[i]);
    fprintf(f, "], \"box\": [");
    for (int i = 0; i < x->rank; i++) fprintf(f, "%s%u", i ? ", " : "", x->box[i]);
    fprintf(f, "], \"element_strides\": [");
    for (int i = 0; i < x->rank; i++) fprintf(f, "%s%u", i ? ", " : "", x->estr[i]);
    fprintf(f, "], \"raw\": \"");
    hex(f, x->raw, 128);
    fprintf(f, "\"}");
    first = 0;
  }
  fprintf(f, "]}\n");
  fclose(f);
  return e;
}

typedef struct { const cudaLaunchConfig_t* config; const void* func; void** args; } ExCtx;
static cudaError_t launch_ex(void* p) {
  static cudaError_t (*real)(const cudaLaunchConfig_t*, const void*, void**);
  if (!real) real = next("cudaLaunchKernelExC");
  ExCtx* c = p;
  return real(c->config, c->func, c->args);
}

cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t* config, const void* func, void** args) {
  ExCtx c = {config, func, args};
  return capture(func, config->gridDim, config->blockDim, config->dynamicSmemBytes, config->attrs,
                 config->numAttrs, args, launch_ex, &c);
}

typedef struct { const void* func; dim3 grid, block; void** args; size_t smem; cudaStream_t stream; } LCtx;
static cudaError_t launch_plain(void* p) {
  static cudaError_t (*real)(const void*, dim3, dim3, void**, size_t, cudaStream_t);
  if (!real) real = next("cudaLaunchKernel");
  LCtx* c = p;
  return real(c->func, c->grid, c->block, c->args, c->smem, c->stream);
}

cudaError_t cudaLaunchKernel(const void* func, dim3 grid, dim3 block, void** args, size_t smem, cudaStream_t stream) {
  LCtx c = {func, grid, block, args, smem, stream};
  return capture(func, grid, block, smem, NULL, 0, args, launch_plain, &c);
}

/* nvcc 13's <<<...>>> launches through __cudaLaunchKernel (crt/device_functions.h) */
typedef struct { cudaKernel_t kernel; dim3 grid, block; void** args; size_t smem; cudaStream_t stream; } KCtx;
static cudaError_t launch_kernel(void* p) {
  static cudaError_t (*real)(cudaKernel_t, dim3, dim3, void**, size_t, cudaStream_t);
  if (!real) real = next("__cudaLaunchKernel");
  KCtx* c = p;
  return real(c->kernel, c->grid, c->block, c->args, c->smem, c->stream);
}

cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void** args, size_t smem, cudaStream_t stream) {
  KCtx c = {kernel, grid, block, args, smem, stream};
  return capture((const void*)kernel, grid, block, smem, NULL, 0, args, launch_kernel, &c);
}
