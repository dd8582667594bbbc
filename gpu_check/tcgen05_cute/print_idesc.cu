// layoutsim (our own program, not CUTLASS's): prints CuTe's tcgen05.mma instruction descriptors
// (UMMA::make_instr_desc, nvidia-cutlass 4.2.0.0's cute/arch/mma_sm100_desc.hpp) as JSON, host only.
#include <cstdio>
#include <cstdint>
#include <cute/arch/mma_sm100_desc.hpp>

using namespace cute;
using K_ = UMMA::Major;

template <class A, class B, class C, int M, int N, K_ am, K_ bm, UMMA::ScaleIn an = UMMA::ScaleIn::One>
void row(const char* kind, const char* types, bool last = false) {
  uint32_t v = uint32_t(UMMA::make_instr_desc<A, B, C, M, N, am, bm, an>());
  std::printf("  {\"kind\": \"%s\", \"types\": \"%s\", \"m\": %d, \"n\": %d, \"a_mn_major\": %d, "
              "\"b_mn_major\": %d, \"neg_a\": %d, \"idesc\": %u}%s\n", kind, types, M, N, int(am == K_::MN),
              int(bm == K_::MN), int(an == UMMA::ScaleIn::Neg), v, last ? "" : ",");
}

int main() {
  std::printf("[\n");
  row<half_t, half_t, float, 128, 256, K_::K, K_::K>("f16", "f32.f16.f16");
  row<half_t, half_t, float, 256, 256, K_::K, K_::K>("f16", "f32.f16.f16");     // tutorial 04/05: cta_group::2
  row<bfloat16_t, bfloat16_t, float, 64, 128, K_::MN, K_::K>("f16", "f32.bf16.bf16");
  row<half_t, half_t, half_t, 128, 64, K_::K, K_::MN, UMMA::ScaleIn::Neg>("f16", "f16.f16.f16");
  row<tfloat32_t, tfloat32_t, float, 128, 96, K_::K, K_::K>("tf32", "f32.tf32.tf32");
  row<float_e4m3_t, float_e5m2_t, float, 128, 32, K_::K, K_::K>("f8f6f4", "f32.e4m3.e5m2");
  row<int8_t, uint8_t, int32_t, 64, 16, K_::K, K_::K>("i8", "s32.s8.u8", true);
  std::printf("]\n");
  return 0;
}
