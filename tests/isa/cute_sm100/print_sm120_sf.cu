// Prints CuTe's scale-factor layouts of sm_120a's block-scaled mma.sync (CUTLASS 4.2,
// cute/atom/mma_traits_sm120.hpp MMA_Traits<SM120::BLOCKSCALED::SM120_16x8x32_TN_VS / SM120_16x8x64_TN_VS>
// SFALayout (T32, V K) -> (M16, K) and SFBLayout (T32, V K) -> (N8, K)) as JSON: host code only, no GPU.
// Written for layoutsim's tests (tests/isa/test_mma_kind_scales.py); rebuilt by
// tests/isa/cute_sm100/rebuild.py from the PyPI wheel nvidia-cutlass==4.2.0.0. For each MMA: the
// column-major (M or N, K) index of every (thread, value) of both layouts, and the bits of the
// SFARegisters / SFBRegisters element (the register that carries the K / VS scales of a thread).
#include <cstdio>
#include <cute/tensor.hpp>
#include <cute/atom/mma_traits_sm120.hpp>

using namespace cute;

template <class Op>
void dump(const char* tag, bool first) {
  using Tr = MMA_Traits<Op>;
  constexpr int K = size<2>(typename Tr::Shape_MNK{});
  std::printf("%s\"%s\": {\"K\": %d, \"VS\": %d, \"sfa_bits\": %d, \"sfb_bits\": %d, \"sfa\": [", first ? "" : ",\n",
              tag, K, Tr::SFVecSize, int(sizeof_bits_v<typename remove_extent<typename Op::SFARegisters>::type>),
              int(sizeof_bits_v<typename remove_extent<typename Op::SFBRegisters>::type>));
  for (int t = 0; t < 32; ++t)
    for (int v = 0; v < K; ++v)
      std::printf("%s%d", t || v ? ", " : "", int(typename Tr::SFALayout{}(t, v)));
  std::printf("], \"sfb\": [");
  for (int t = 0; t < 32; ++t)
    for (int v = 0; v < K; ++v)
      std::printf("%s%d", t || v ? ", " : "", int(typename Tr::SFBLayout{}(t, v)));
  std::printf("]}");
}

int main() {
  using namespace SM120::BLOCKSCALED;
  std::printf("{\"source\": \"CUTLASS 4.2 (PyPI nvidia-cutlass==4.2.0.0) cute/atom/mma_traits_sm120.hpp "
              "SM120::BLOCKSCALED traits: SFALayout / SFBLayout (thread, value) -> m + 16 k / n + 8 k\", \"mma\": {\n");
  dump<SM120_16x8x32_TN_VS<float_e4m3_t, float_e4m3_t, float, float_ue8m0_t, 32>>("k32 ue8m0 32", true);
  dump<SM120_16x8x64_TN_VS<float_e2m1_t, float_e2m1_t, float, float_ue8m0_t, 32>>("k64 ue8m0 32", false);
  dump<SM120_16x8x64_TN_VS<float_e2m1_t, float_e2m1_t, float, float_ue8m0_t, 16>>("k64 ue8m0 16", false);
  dump<SM120_16x8x64_TN_VS<float_e2m1_t, float_e2m1_t, float, float_ue4m3_t, 16>>("k64 ue4m3 16", false);
  std::printf("}}\n");
  return 0;
}
