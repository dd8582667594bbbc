// Prints CuTe's tcgen05.cp copy atoms (CUTLASS 4.2, cute/atom/copy_traits_sm100.hpp
// Copy_Traits<SM100_UTCCP_*_1cta>) as JSON: host code only, no GPU. Written for layoutsim's tests
// (tests/isa/test_tcgen05_cp.py); rebuilt by tests/isa/cute_sm100/rebuild.py from the PyPI wheel
// nvidia-cutlass==4.2.0.0. For each atom: its ValID (logical bit index -> TMEM address offset, lane *
// TMEM::DP_b + bit) at every logical index, and its SrcLayout's value mode at every value index.
#include <cstdio>
#include <cute/tensor.hpp>
#include <cute/atom/copy_traits_sm100.hpp>

using namespace cute;

template <class Op>
void dump(const char* tag, bool first) {
  using Tr = Copy_Traits<Op>;
  auto val = typename Tr::ValID{};
  auto src = typename Tr::SrcLayout{};
  std::printf("%s\"%s\": {\"valid\": [", first ? "" : ",\n", tag);
  for (int i = 0; i < int(size(val)); ++i)
    std::printf("%s%d", i ? ", " : "", int(val(i)));
  std::printf("], \"src\": [");
  for (int v = 0; v < int(size<1>(src)); ++v)
    std::printf("%s%d", v ? ", " : "", int(src(0, v)));
  std::printf("]}");
}

int main() {
  using namespace SM100::TMEM::UTCCP;
  std::printf("{\"source\": \"CUTLASS 4.2 (PyPI nvidia-cutlass==4.2.0.0) cute/atom/copy_traits_sm100.hpp "
              "Copy_Traits<SM100_UTCCP_*_1cta>: ValID (logical bit -> TMEM lane * DP_b + bit), SrcLayout\", "
              "\"dp_b\": %d, \"atoms\": {\n", int(TMEM::DP_b{}));
  dump<SM100_UTCCP_128dp256bit_1cta>("128dp256bit", true);
  dump<SM100_UTCCP_128dp128bit_1cta>("128dp128bit", false);
  dump<SM100_UTCCP_4dp256bit_1cta>("4dp256bit", false);
  dump<SM100_UTCCP_4x32dp128bit_1cta>("4x32dp128bit", false);
  dump<SM100_UTCCP_2x64dp128bitlw0213_1cta>("2x64dp128bitlw0213", false);
  dump<SM100_UTCCP_2x64dp128bitlw0123_1cta>("2x64dp128bitlw0123", false);
  std::printf("}}\n");
  return 0;
}
