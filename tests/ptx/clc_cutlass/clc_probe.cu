// A probe of CUTLASS 4.2's sm100 persistent tile scheduler's cluster launch control (PyPI
// nvidia-cutlass==4.2.0.0, cutlass/gemm/kernel/sm100_tile_scheduler.hpp): thread 0 arms the CTA's
// mbarrier for 16 bytes and issues the scheduler's own issue_clc_query (try_cancel .multicast::cluster::all),
// every thread waits and decodes the response with the scheduler's work_tile_info_from_clc_response
// (ld.shared.b128, query_cancel.is_canceled / get_first_ctaid), writing 1 for a valid next tile and 2
// for none. Ours, for layoutsim's tests (tests/ptx/test_ptx_clc.py); rebuilt by rebuild.py beside it.
#include <cstdint>
#include <cute/tensor.hpp>
#include <cutlass/arch/barrier.h>
#include <cutlass/gemm/kernel/sm100_tile_scheduler.hpp>

using Sched = cutlass::gemm::kernel::detail::PersistentTileSchedulerSm100<cute::Shape<cute::_1, cute::_1, cute::_1>, 1>;

extern "C" __global__ void clc_probe(uint32_t* out) {
  __shared__ alignas(16) Sched::CLCResponse resp[1];
  __shared__ alignas(8) uint64_t bar;
  uint32_t bar_addr = cute::cast_smem_ptr_to_uint(&bar);
  if (threadIdx.x == 0) {
    cutlass::arch::ClusterTransactionBarrier::init(&bar, 1);
  }
  cutlass::arch::fence_barrier_init();
  __syncthreads();
  if (threadIdx.x == 0) {
    cutlass::arch::ClusterTransactionBarrier::arrive_and_expect_tx(&bar, 16);
    Sched::issue_clc_query(cutlass::PipelineState<1>{}, bar_addr, resp);
  }
  cutlass::arch::ClusterTransactionBarrier::wait(&bar, 0);
  auto w = Sched::work_tile_info_from_clc_response(cute::cast_smem_ptr_to_uint(resp));
  out[threadIdx.x] = w.is_valid_tile ? 1u : 2u;
}
