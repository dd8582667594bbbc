// Prints the register <-> TMEM map of every CuTe SM100 TMEM load atom (CUTLASS 4.2,
// cute/atom/copy_traits_sm100.hpp) as JSON: host code only, no GPU. Written for layoutsim's tests
// (tests/isa/test_tcgen05_cute.py); rebuilt by tests/isa/cute_sm100/rebuild.py from the PyPI
// wheel nvidia-cutlass==4.2.0.0. For each atom, thread t and 32-bit register word w: the TMEM
// address (CuTe bit addressing: lane * 2**21 + bit) of the word's bit 0 and of its bit 16, and
// whether bits 1-15 and 17-31 follow them contiguously.
#include <cstdio>
#include <cute/tensor.hpp>
#include <cute/atom/copy_traits_sm100.hpp>

using namespace cute;
using namespace cute::SM100::TMEM::LOAD;

template <class Op>
void dump(char const* name, bool first) {
  using T = Copy_Traits<Op>;
  auto dst = typename T::DstLayout{};
  auto val = typename T::ValID{};
  int thr = size<0>(dst);
  int bits = size<1>(dst);
  std::printf("%s\"%s\": {\"threads\": %d, \"bits\": %d, \"words\": [", first ? "" : ",\n", name, thr, bits);
  for (int t = 0; t < thr; ++t) {
    std::printf("%s[", t ? ", " : "");
    for (int w = 0; w < bits / 32; ++w) {
      long lo = val(dst(t, 32 * w)), hi = val(dst(t, 32 * w + 16));
      int ok = 1;
      for (int b = 1; b < 16; ++b) {
        ok &= (long)val(dst(t, 32 * w + b)) == lo + b;
        ok &= (long)val(dst(t, 32 * w + 16 + b)) == hi + b;
      }
      std::printf("%s[%ld, %ld, %d]", w ? ", " : "", lo, hi, ok);
    }
    std::printf("]");
  }
  std::printf("]}");
}

int main() {
  bool first = true;
  std::printf("{\"source\": \"CUTLASS 4.2 (PyPI nvidia-cutlass==4.2.0.0) cute/atom/copy_traits_sm100.hpp, Copy_Traits<SM100_TMEM_LOAD_*>: DstLayout (thread, register bit) composed with ValID (TMEM bit address, lane stride TMEM::DP_b = 2**21)\", \"dp_b\": %d, \"atoms\": {\n", (int)TMEM::DP_b{});
  dump<SM100_TMEM_LOAD_16dp256b1x>("SM100_TMEM_LOAD_16dp256b1x", first); first = false;
  dump<SM100_TMEM_LOAD_16dp256b1x_16b>("SM100_TMEM_LOAD_16dp256b1x_16b", first); first = false;
  dump<SM100_TMEM_LOAD_16dp256b2x>("SM100_TMEM_LOAD_16dp256b2x", first); first = false;
  dump<SM100_TMEM_LOAD_16dp256b2x_16b>("SM100_TMEM_LOAD_16dp256b2x_16b", first); first = false;
  dump<SM100_TMEM_LOAD_16dp256b4x>("SM100_TMEM_LOAD_16dp256b4x", first); first = false;
  dump<SM100_TMEM_LOAD_16dp256b4x_16b>("SM100_TMEM_LOAD_16dp256b4x_16b", first); first = false;
  dump<SM100_TMEM_LOAD_16dp256b8x>("SM100_TMEM_LOAD_16dp256b8x", first); first = false;
  dump<SM100_TMEM_LOAD_16dp256b8x_16b>("SM100_TMEM_LOAD_16dp256b8x_16b", first); first = false;
  dump<SM100_TMEM_LOAD_16dp256b16x>("SM100_TMEM_LOAD_16dp256b16x", first); first = false;
  dump<SM100_TMEM_LOAD_16dp256b16x_16b>("SM100_TMEM_LOAD_16dp256b16x_16b", first); first = false;
  dump<SM100_TMEM_LOAD_16dp256b32x>("SM100_TMEM_LOAD_16dp256b32x", first); first = false;
  dump<SM100_TMEM_LOAD_16dp256b32x_16b>("SM100_TMEM_LOAD_16dp256b32x_16b", first); first = false;
  dump<SM100_TMEM_LOAD_16dp128b1x>("SM100_TMEM_LOAD_16dp128b1x", first); first = false;
  dump<SM100_TMEM_LOAD_16dp128b1x_16b>("SM100_TMEM_LOAD_16dp128b1x_16b", first); first = false;
  dump<SM100_TMEM_LOAD_16dp128b2x>("SM100_TMEM_LOAD_16dp128b2x", first); first = false;
  dump<SM100_TMEM_LOAD_16dp128b2x_16b>("SM100_TMEM_LOAD_16dp128b2x_16b", first); first = false;
  dump<SM100_TMEM_LOAD_16dp128b4x>("SM100_TMEM_LOAD_16dp128b4x", first); first = false;
  dump<SM100_TMEM_LOAD_16dp128b4x_16b>("SM100_TMEM_LOAD_16dp128b4x_16b", first); first = false;
  dump<SM100_TMEM_LOAD_16dp128b8x>("SM100_TMEM_LOAD_16dp128b8x", first); first = false;
  dump<SM100_TMEM_LOAD_16dp128b8x_16b>("SM100_TMEM_LOAD_16dp128b8x_16b", first); first = false;
  dump<SM100_TMEM_LOAD_16dp128b16x>("SM100_TMEM_LOAD_16dp128b16x", first); first = false;
  dump<SM100_TMEM_LOAD_16dp128b16x_16b>("SM100_TMEM_LOAD_16dp128b16x_16b", first); first = false;
  dump<SM100_TMEM_LOAD_16dp128b32x>("SM100_TMEM_LOAD_16dp128b32x", first); first = false;
  dump<SM100_TMEM_LOAD_16dp128b32x_16b>("SM100_TMEM_LOAD_16dp128b32x_16b", first); first = false;
  dump<SM100_TMEM_LOAD_16dp128b64x>("SM100_TMEM_LOAD_16dp128b64x", first); first = false;
  dump<SM100_TMEM_LOAD_16dp128b64x_16b>("SM100_TMEM_LOAD_16dp128b64x_16b", first); first = false;
  dump<SM100_TMEM_LOAD_16dp64b1x>("SM100_TMEM_LOAD_16dp64b1x", first); first = false;
  dump<SM100_TMEM_LOAD_16dp64b1x_16b>("SM100_TMEM_LOAD_16dp64b1x_16b", first); first = false;
  dump<SM100_TMEM_LOAD_16dp64b2x>("SM100_TMEM_LOAD_16dp64b2x", first); first = false;
  dump<SM100_TMEM_LOAD_16dp64b2x_16b>("SM100_TMEM_LOAD_16dp64b2x_16b", first); first = false;
  dump<SM100_TMEM_LOAD_16dp64b4x>("SM100_TMEM_LOAD_16dp64b4x", first); first = false;
  dump<SM100_TMEM_LOAD_16dp64b4x_16b>("SM100_TMEM_LOAD_16dp64b4x_16b", first); first = false;
  dump<SM100_TMEM_LOAD_16dp64b8x>("SM100_TMEM_LOAD_16dp64b8x", first); first = false;
  dump<SM100_TMEM_LOAD_16dp64b8x_16b>("SM100_TMEM_LOAD_16dp64b8x_16b", first); first = false;
  dump<SM100_TMEM_LOAD_16dp64b16x>("SM100_TMEM_LOAD_16dp64b16x", first); first = false;
  dump<SM100_TMEM_LOAD_16dp64b16x_16b>("SM100_TMEM_LOAD_16dp64b16x_16b", first); first = false;
  dump<SM100_TMEM_LOAD_16dp64b32x>("SM100_TMEM_LOAD_16dp64b32x", first); first = false;
  dump<SM100_TMEM_LOAD_16dp64b32x_16b>("SM100_TMEM_LOAD_16dp64b32x_16b", first); first = false;
  dump<SM100_TMEM_LOAD_16dp64b64x>("SM100_TMEM_LOAD_16dp64b64x", first); first = false;
  dump<SM100_TMEM_LOAD_16dp64b64x_16b>("SM100_TMEM_LOAD_16dp64b64x_16b", first); first = false;
  dump<SM100_TMEM_LOAD_16dp64b128x>("SM100_TMEM_LOAD_16dp64b128x", first); first = false;
  dump<SM100_TMEM_LOAD_16dp64b128x_16b>("SM100_TMEM_LOAD_16dp64b128x_16b", first); first = false;
  dump<SM100_TMEM_LOAD_16dp32b1x>("SM100_TMEM_LOAD_16dp32b1x", first); first = false;
  dump<SM100_TMEM_LOAD_16dp32b1x_16b>("SM100_TMEM_LOAD_16dp32b1x_16b", first); first = false;
  dump<SM100_TMEM_LOAD_16dp32b2x>("SM100_TMEM_LOAD_16dp32b2x", first); first = false;
  dump<SM100_TMEM_LOAD_16dp32b2x_16b>("SM100_TMEM_LOAD_16dp32b2x_16b", first); first = false;
  dump<SM100_TMEM_LOAD_16dp32b4x>("SM100_TMEM_LOAD_16dp32b4x", first); first = false;
  dump<SM100_TMEM_LOAD_16dp32b4x_16b>("SM100_TMEM_LOAD_16dp32b4x_16b", first); first = false;
  dump<SM100_TMEM_LOAD_16dp32b8x>("SM100_TMEM_LOAD_16dp32b8x", first); first = false;
  dump<SM100_TMEM_LOAD_16dp32b8x_16b>("SM100_TMEM_LOAD_16dp32b8x_16b", first); first = false;
  dump<SM100_TMEM_LOAD_16dp32b16x>("SM100_TMEM_LOAD_16dp32b16x", first); first = false;
  dump<SM100_TMEM_LOAD_16dp32b16x_16b>("SM100_TMEM_LOAD_16dp32b16x_16b", first); first = false;
  dump<SM100_TMEM_LOAD_16dp32b32x>("SM100_TMEM_LOAD_16dp32b32x", first); first = false;
  dump<SM100_TMEM_LOAD_16dp32b32x_16b>("SM100_TMEM_LOAD_16dp32b32x_16b", first); first = false;
  dump<SM100_TMEM_LOAD_16dp32b64x>("SM100_TMEM_LOAD_16dp32b64x", first); first = false;
  dump<SM100_TMEM_LOAD_16dp32b64x_16b>("SM100_TMEM_LOAD_16dp32b64x_16b", first); first = false;
  dump<SM100_TMEM_LOAD_16dp32b128x>("SM100_TMEM_LOAD_16dp32b128x", first); first = false;
  dump<SM100_TMEM_LOAD_16dp32b128x_16b>("SM100_TMEM_LOAD_16dp32b128x_16b", first); first = false;
  dump<SM100_TMEM_LOAD_32dp32b1x>("SM100_TMEM_LOAD_32dp32b1x", first); first = false;
  dump<SM100_TMEM_LOAD_32dp32b1x_16b>("SM100_TMEM_LOAD_32dp32b1x_16b", first); first = false;
  dump<SM100_TMEM_LOAD_32dp32b2x>("SM100_TMEM_LOAD_32dp32b2x", first); first = false;
  dump<SM100_TMEM_LOAD_32dp32b2x_16b>("SM100_TMEM_LOAD_32dp32b2x_16b", first); first = false;
  dump<SM100_TMEM_LOAD_32dp32b4x>("SM100_TMEM_LOAD_32dp32b4x", first); first = false;
  dump<SM100_TMEM_LOAD_32dp32b4x_16b>("SM100_TMEM_LOAD_32dp32b4x_16b", first); first = false;
  dump<SM100_TMEM_LOAD_32dp32b8x>("SM100_TMEM_LOAD_32dp32b8x", first); first = false;
  dump<SM100_TMEM_LOAD_32dp32b8x_16b>("SM100_TMEM_LOAD_32dp32b8x_16b", first); first = false;
  dump<SM100_TMEM_LOAD_32dp32b16x>("SM100_TMEM_LOAD_32dp32b16x", first); first = false;
  dump<SM100_TMEM_LOAD_32dp32b16x_16b>("SM100_TMEM_LOAD_32dp32b16x_16b", first); first = false;
  dump<SM100_TMEM_LOAD_32dp32b32x>("SM100_TMEM_LOAD_32dp32b32x", first); first = false;
  dump<SM100_TMEM_LOAD_32dp32b32x_16b>("SM100_TMEM_LOAD_32dp32b32x_16b", first); first = false;
  dump<SM100_TMEM_LOAD_32dp32b64x>("SM100_TMEM_LOAD_32dp32b64x", first); first = false;
  dump<SM100_TMEM_LOAD_32dp32b64x_16b>("SM100_TMEM_LOAD_32dp32b64x_16b", first); first = false;
  dump<SM100_TMEM_LOAD_32dp32b128x>("SM100_TMEM_LOAD_32dp32b128x", first); first = false;
  dump<SM100_TMEM_LOAD_32dp32b128x_16b>("SM100_TMEM_LOAD_32dp32b128x_16b", first); first = false;
  std::printf("}}\n");
  return 0;
}
