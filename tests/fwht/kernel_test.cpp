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

TEST(CpuKernels, KahanErrorTermsF32) { expect_error_terms_match<float>(Stabilization::kahan); }
TEST(CpuKernels, NeumaierErrorTermsF32) { expect_error_terms_match<float>(Stabilization::neumaier); }
TEST(CpuKernels, KahanErrorTermsF64) { expect_error_terms_match<double>(Stabilization::kahan); }
TEST(CpuKernels, NeumaierErrorTermsF64) { expect_error_terms_match<double>(Stabilization::neumaier); }

}  // namespace
}  // namespace fwht::test
