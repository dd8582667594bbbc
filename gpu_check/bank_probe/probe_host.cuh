// probe_host.cuh: the host side that every one-instruction probe shares: bank_probe/probe.cu
// includes it, and so does coalesce_probe/probe.cu (as "../bank_probe/probe_host.cuh": nvcc finds
// it beside the including file, in the source tree and in an installed package alike).
//
// Before including it a probe defines
//   PROBE_TOOL        its name: the first word of its pattern files and the prefix of its messages
//   probe_fn          the type of its kernels
//   PROBE_KERNELS(K)  K(kernel, min_cc) for each kernel: the name a pattern file gives it is its
//                     own, and it is launched on no GPU below compute capability min_cc/10.
//
// A pattern file: "PROBE_TOOL v1", the number of patterns, then one line per pattern:
//   KERNEL_NAME ACTIVE_MASK_HEX OFFSET_0 ... OFFSET_31
// Exit status of a probe: 0 ran, 2 bad input (usage, pattern file, GPU too old), 3 a CUDA call failed.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

struct ProbeKernel {
  const char* name;
  probe_fn fn;
  int min_cc;  // major*10+minor
};

#define PROBE_KERNEL_ROW(NAME, MIN_CC) {#NAME, NAME, MIN_CC},
static const ProbeKernel kKernels[] = {PROBE_KERNELS(PROBE_KERNEL_ROW)};

struct Pattern {
  const ProbeKernel* kernel;
  unsigned active;
  unsigned offsets[32];
};

#define CHECK(call) probe_check((call), #call, __FILE__, __LINE__)

static void probe_check(cudaError_t e, const char* call, const char* file, int line) {
  if (e == cudaSuccess) return;
  fprintf(stderr, PROBE_TOOL ": %s failed: %s (%s:%d)\n", call, cudaGetErrorString(e), file, line);
  exit(3);
}

// Reads a pattern file into `pats`; false (after one line on stderr) when it is not a valid one.
// Every offset must be below `offset_limit` (1 << 32: any).
static bool read_patterns(const char* path, unsigned long long offset_limit, std::vector<Pattern>& pats) {
  FILE* f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, PROBE_TOOL ": cannot open %s\n", path);
    return false;
  }
  char magic[64] = {0}, version[16] = {0};
  long n = -1;      // bounded: a corrupt count must not allocate without end
  if (fscanf(f, "%63s %15s %ld", magic, version, &n) != 3 || strcmp(magic, PROBE_TOOL) != 0 ||
      strcmp(version, "v1") != 0 || n < 0 || n > 100000) {
    fprintf(stderr, PROBE_TOOL ": %s is not a '" PROBE_TOOL " v1' pattern file\n", path);
    return false;
  }
  pats.resize(n);
  for (long i = 0; i < n; ++i) {
    char name[128];
    if (fscanf(f, "%127s %x", name, &pats[i].active) != 2) {
      fprintf(stderr, PROBE_TOOL ": pattern %ld: bad line\n", i);
      return false;
    }
    pats[i].kernel = nullptr;
    for (const ProbeKernel& k : kKernels)
      if (!pats[i].kernel && strcmp(k.name, name) == 0) pats[i].kernel = &k;
    if (!pats[i].kernel) {
      fprintf(stderr, PROBE_TOOL ": pattern %ld: unknown kernel %s\n", i, name);
      return false;
    }
    for (int l = 0; l < 32; ++l) {
      if (fscanf(f, "%u", &pats[i].offsets[l]) != 1) {
        fprintf(stderr, PROBE_TOOL ": pattern %ld: expected 32 offsets\n", i);
        return false;
      }
      if (pats[i].offsets[l] >= offset_limit) {
        fprintf(stderr, PROBE_TOOL ": pattern %ld lane %d: offset %u beyond the %llu-byte buffer\n", i, l,
                pats[i].offsets[l], offset_limit);
        return false;
      }
    }
  }
  fclose(f);
  return true;
}

struct ProbeDevice {
  cudaDeviceProp prop;
  int driver, runtime, cc;  // cc: major*10+minor
};

static ProbeDevice probe_device() {
  ProbeDevice d;
  int dev = 0;
  CHECK(cudaGetDevice(&dev));
  CHECK(cudaGetDeviceProperties(&d.prop, dev));
  CHECK(cudaDriverGetVersion(&d.driver));
  CHECK(cudaRuntimeGetVersion(&d.runtime));
  d.cc = d.prop.major * 10 + d.prop.minor;
  return d;
}

// Whether patterns first .. first+count-1 can run on the device (one line on stderr when not).
static bool runs_here(const std::vector<Pattern>& pats, long first, long count, const ProbeDevice& d) {
  for (long i = first; i < first + count; ++i) {
    const ProbeKernel* k = pats[i].kernel;
    if (d.cc < k->min_cc) {
      fprintf(stderr, PROBE_TOOL ": pattern %ld needs cc %d.%d (%s); this GPU is %d.%d\n", i, k->min_cc / 10,
              k->min_cc % 10, k->name, d.prop.major, d.prop.minor);
      return false;
    }
  }
  return true;
}

// One launch of one warp, waited for: ncu then counts exactly this pattern's instruction.
static void launch_one(const Pattern& p, void** args, size_t smem) {
  CHECK(cudaLaunchKernel((const void*)p.kernel->fn, dim3(1), dim3(32), args, smem, 0));
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
}
