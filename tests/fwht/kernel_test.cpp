// The CPU stage kernels' error terms against the reference's: the plan only returns values, in
// which a different (but plausible) error-recovery formula would rarely show.
#include "common/arithmetic.hpp"
#include "cpu/kernels.hpp"
#include "test_support.hpp"

namespace fwht::test {
namespace {

template <class T>
void expect_error_terms_match(Stabilization s) {
  FWHT_TRACE_SEED();
  auto rng = test_rng();
  const auto kernels = cpu::select_kernels<T>();
  for (int L = 0; L <= 16; ++L) {
    const std::size_t n = std::size_t{1} << L;
    // Mixed magnitudes make every branch of Neumaier's selection occur.
    auto x = random_vector<T>(n, rng);
    for (std::size_t i = 0; i < n; i += 3) x[i] *= static_cast<T>(1e-4);
    for (std::size_t i = 1; i < n; i += 7) x[i] *= static_cast<T>(1e4);
    auto ref = x;
    std::vector<T> ref_e(n), e(n, T{});
    reference::transform_with_errors(std::span<T>(ref), std::span<T>(ref_e), s);
    kernels.folklore[static_cast<int>(s)](x.data(), e.data(), static_cast<std::int64_t>(n), 0, L);
    ASSERT_EQ(first_bit_difference<T>(x, ref), -1) << "values, n = 2^" << L << " isa " << kernels.isa;
    ASSERT_EQ(first_bit_difference<T>(e, ref_e), -1) << "error terms, n = 2^" << L << " isa " << kernels.isa;
  }
}

// The register- and cache-blocked plain kernels of every instruction set this CPU runs, against the
// reference bit for bit: whole transforms in place and out of place (the copy fused with the first
// pass), sizes across the in-register, L1-block and recursion boundaries, and stage ranges that
// start above 0 (the tile passes of multi-threaded plans) against the same ISA's folklore kernel.
template <class T, class R = T>
void expect_plain_matches(cpu::Isa isa) {
  FWHT_TRACE_SEED();
  auto rng = test_rng();
  const auto kernels = cpu::kernels_of<T>(isa);
  ASSERT_NE(kernels.plain, nullptr);
  for (int L = 0; L <= 20; ++L) {
    const std::size_t n = std::size_t{1} << L;
    const auto data = random_vector<R>(2 * n, rng);  // two transforms: blocks are independent
    auto ref = data;
    reference::transform(std::span<R>(ref.data(), n));
    reference::transform(std::span<R>(ref.data() + n, n));
    std::vector<R> out(2 * n), in_place = data;
    kernels.plain(reinterpret_cast<T*>(out.data()), reinterpret_cast<const T*>(data.data()), static_cast<std::int64_t>(2 * n), 0, L);
    ASSERT_EQ(first_bit_difference<R>(out, ref), -1) << "out of place, n = 2^" << L << " isa " << kernels.isa;
    kernels.plain(reinterpret_cast<T*>(in_place.data()), reinterpret_cast<const T*>(in_place.data()), static_cast<std::int64_t>(2 * n), 0, L);
    ASSERT_EQ(first_bit_difference<R>(in_place, ref), -1) << "in place, n = 2^" << L << " isa " << kernels.isa;
  }
  for (int k0 : {4, 6, 9}) {  // 2^4 is at least every ISA's lane count
    for (int k1 = k0; k1 <= 18; ++k1) {
      const std::size_t n = std::size_t{1} << 18;
      auto x = random_vector<R>(n, rng);
      auto expect = x;
      kernels.folklore[static_cast<int>(Stabilization::none)](reinterpret_cast<T*>(expect.data()), nullptr,
                                                              static_cast<std::int64_t>(n), k0, k1);
      kernels.plain(reinterpret_cast<T*>(x.data()), reinterpret_cast<const T*>(x.data()), static_cast<std::int64_t>(n), k0, k1);
      ASSERT_EQ(first_bit_difference<R>(x, expect), -1) << "stages [" << k0 << ", " << k1 << ") isa " << kernels.isa;
    }
  }
}

template <class T, class R = T>
void expect_plain_matches_on_every_isa() {
  for (cpu::Isa isa : {cpu::Isa::generic, cpu::Isa::avx2, cpu::Isa::avx512})
    if (cpu::isa_available(isa)) expect_plain_matches<T, R>(isa);
}

TEST(CpuKernels, PlainF32EveryIsa) { expect_plain_matches_on_every_isa<float>(); }
TEST(CpuKernels, PlainF64EveryIsa) { expect_plain_matches_on_every_isa<double>(); }
TEST(CpuKernels, PlainI32EveryIsa) { expect_plain_matches_on_every_isa<std::uint32_t, std::int32_t>(); }
TEST(CpuKernels, PlainI64EveryIsa) { expect_plain_matches_on_every_isa<std::uint64_t, std::int64_t>(); }

TEST(CpuKernels, KahanErrorTermsF32) { expect_error_terms_match<float>(Stabilization::kahan); }
TEST(CpuKernels, NeumaierErrorTermsF32) { expect_error_terms_match<float>(Stabilization::neumaier); }
TEST(CpuKernels, KahanErrorTermsF64) { expect_error_terms_match<double>(Stabilization::kahan); }
TEST(CpuKernels, NeumaierErrorTermsF64) { expect_error_terms_match<double>(Stabilization::neumaier); }

}  // namespace
}  // namespace fwht::test
