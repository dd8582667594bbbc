// Prints where CuTe puts the tcgen05.mma accumulator in TMEM (CUTLASS 4.2,
// cute/atom/mma_traits_sm100.hpp, UMMA::tmem_frg_1sm / tmem_frg_2sm / tmem_frg_ws_1sm<float>) as JSON: host code
// only, no GPU. Written for layoutsim's tests (tests/isa/test_tcgen05.py); rebuilt by
// tests/isa/cute_sm100/rebuild.py from the PyPI wheel nvidia-cutlass==4.2.0.0. For each
// (SMs, M per SM, N): the TMEM address offset (lane << 16 | column) of every D[i][j].
#include <cstdio>
#include <cute/tensor.hpp>
#include <cute/atom/mma_traits_sm100.hpp>

using namespace cute;

// The TMEM offset of every D[i][j] of fragment Frg (M x N), under the JSON key "<tag> M N".
template <class Frg, int M, int N>
void dump_frg(const char* tag, bool first) {
  auto shape = make_shape(make_shape(Int<M>{}, Int<N>{}), Int<1>{}, Int<1>{});
  auto t = Frg::make(shape);
  std::printf("%s\"%s %d %d\": [", first ? "" : ",\n", tag, M, N);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j)
      std::printf("%s%d", i || j ? ", " : "", (int)t.layout()(make_coord(make_coord(i, j), 0, 0)));
  std::printf("]");
}

template <int SM, int M, int N>
void dump(bool first) { dump_frg<UMMA::tmem_frg_1sm<float>, M, N>("1", first); }

template <int M, int N>
void dump2(bool first) { dump_frg<UMMA::tmem_frg_2sm<float>, M, N>("2", first); }

// Weight-stationary MMAs (UMMA::tmem_frg_ws_1sm<float>: Layouts G, E, D of M = 32, 64, 128).
template <int M, int N>
void dump_ws(bool first) { dump_frg<UMMA::tmem_frg_ws_1sm<float>, M, N>("ws", first); }

// Scale factors (UMMA::tmem_sf_frg<uint8_t, VS, 1, Is_SFA>, the default ScaleFactorDuplicated4by1):
// mode 0 is (row, replica) (size 4 * MN), mode 1 is (k within a scale, scale index); the offset
// of every (mode 0, mode 1 / VS) in tmem_ptr<uint8_t> units.
template <int MN, int VS, int NSF, bool SFA>
void dump_sf(bool first) {
  auto shape = make_shape(make_shape(Int<MN>{}, make_shape(Int<VS>{}, Int<NSF>{})), Int<1>{}, Int<1>{});
  auto t = UMMA::tmem_sf_frg<uint8_t, VS, 1, SFA>::make(shape);
  auto l = t.layout();
  std::printf("%s\"%s %d %d %d\": [", first ? "" : ",\n", SFA ? "sfa" : "sfb", MN, VS, NSF);
  for (int x = 0; x < 4 * MN; ++x)
    for (int s = 0; s < NSF; ++s)
      std::printf("%s%d", x || s ? ", " : "", (int)l(make_coord(x, s * VS), 0, 0));
  std::printf("]");
}

// SFB of a 2x1SM MMA with M = 128 (UMMA::tmem_sf_frg<uint8_t, VS, 2, false, ScaleFactorDuplicated2by2>, the
// FrgTypeSFB of MMA_Traits<SM100_MMA_MXF4_2x1SM_SS> etc. for M == 128): mode 0 is ((32, MN/64), half, replica)
// (size 2 * MN), the offsets as dump_sf's, under "sfb2 MN VS NSF".
template <int MN, int VS, int NSF>
void dump_sf2(bool first) {
  auto shape = make_shape(make_shape(Int<MN>{}, make_shape(Int<VS>{}, Int<NSF>{})), Int<1>{}, Int<1>{});
  auto t = UMMA::tmem_sf_frg<uint8_t, VS, 2, false, UMMA::TmemAllocMode::ScaleFactorDuplicated2by2>::make(shape);
  auto l = t.layout();
  std::printf("%s\"sfb2 %d %d %d\": [", first ? "" : ",\n", MN, VS, NSF);
  for (int x = 0; x < 2 * MN; ++x)
    for (int s = 0; s < NSF; ++s)
      std::printf("%s%d", x || s ? ", " : "", (int)l(make_coord(x, s * VS), 0, 0));
  std::printf("]");
}

// Sparse metadata (UMMA::tmem_e_frg<T> for M = 128, UMMA::tmem_e_frg_ws<T> for M = 128 / 64 / 32; T of
// 32, 16, 8 bits): the TMEM bit position (lane * TMEM::DP_b + bit within the lane's row of columns) of the
// metadata of every logical A element of mode 0, in its colex order (m fastest, then k, then the copies
// tmem_e_frg_ws lays out for M < 128), under the JSON key "<e|ews> M K bits".
template <class Frg, int M, int K, int BITS>
void dump_e(const char* tag, bool first) {
  auto shape = make_shape(make_shape(Int<M>{}, Int<K>{}), Int<1>{}, Int<1>{});
  auto t = Frg::make(shape);
  auto l = get<0>(t.layout());
  constexpr int unit = cute::sizeof_bits_v<typename decltype(t)::value_type>;   // bits per logical element
  std::printf("%s\"%s %d %d %d\": [", first ? "" : ",\n", tag, M, K, BITS);
  for (int i = 0; i < int(size(l)); ++i)
    std::printf("%s%lld", i ? ", " : "", (long long)l(i) * unit);
  std::printf("]");
}

int main() {
  std::printf("{\"source\": \"CUTLASS 4.2 (PyPI nvidia-cutlass==4.2.0.0) cute/atom/mma_traits_sm100.hpp UMMA::tmem_frg_1sm/2sm<float>: (M per SM, N) -> TMEM offset, lane << 16 | column\", \"frg\": {\n");
  dump<1, 64, 64>(true);
  dump<1, 64, 256>(false);
  dump<1, 128, 64>(false);
  dump<1, 128, 256>(false);
  dump2<64, 64>(false);
  dump2<64, 256>(false);
  dump2<128, 128>(false);
  dump2<128, 256>(false);
  std::printf("}, \"ws\": {\n");
  dump_ws<32, 64>(true);
  dump_ws<32, 256>(false);
  dump_ws<64, 128>(false);
  dump_ws<64, 256>(false);
  dump_ws<128, 64>(false);
  std::printf("}, \"dp_uint8\": %d, \"sf\": {\n", (int)TMEM::DP<uint8_t>{});
  dump_sf<128, 32, 1, true>(true);
  dump_sf<128, 16, 4, true>(false);
  dump_sf<256, 32, 2, false>(false);
  dump_sf<64, 16, 4, false>(false);
  dump_sf2<128, 32, 1>(false);
  dump_sf2<128, 16, 4>(false);
  dump_sf2<256, 32, 2>(false);
  std::printf("}, \"dp_b\": %d, \"e\": {\n", (int)TMEM::DP_b{});
  dump_e<UMMA::tmem_e_frg<float>, 128, 16, 32>("e", true);
  dump_e<UMMA::tmem_e_frg<half_t>, 128, 32, 16>("e", false);
  dump_e<UMMA::tmem_e_frg<uint8_t>, 128, 64, 8>("e", false);
  dump_e<UMMA::tmem_e_frg_ws<float>, 128, 16, 32>("ews", false);
  dump_e<UMMA::tmem_e_frg_ws<float>, 64, 16, 32>("ews", false);
  dump_e<UMMA::tmem_e_frg_ws<float>, 32, 16, 32>("ews", false);
  dump_e<UMMA::tmem_e_frg_ws<half_t>, 128, 32, 16>("ews", false);
  dump_e<UMMA::tmem_e_frg_ws<half_t>, 64, 32, 16>("ews", false);
  dump_e<UMMA::tmem_e_frg_ws<half_t>, 32, 32, 16>("ews", false);
  dump_e<UMMA::tmem_e_frg_ws<uint8_t>, 128, 64, 8>("ews", false);
  dump_e<UMMA::tmem_e_frg_ws<uint8_t>, 64, 64, 8>("ews", false);
  dump_e<UMMA::tmem_e_frg_ws<uint8_t>, 32, 64, 8>("ews", false);
  std::printf("}}\n");
  return 0;
}
