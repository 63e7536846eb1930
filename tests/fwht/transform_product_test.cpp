// fwht::TransformProduct and the plain_product kernel of every instruction set this CPU runs, against
// the reference bit for bit: P + (H x) . (H y) with one rounded product and one rounded sum per
// element, over sizes across the in-register, base-pass, L1-block and recursion boundaries; the fill
// contract (ascending blocks of zeros, x before y, each element once) checked on every call, and x
// and y left zero; the product skipped when the caller's `wanted` says so.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "cpu/kernels.hpp"
#include "test_support.hpp"

// The expected values round a product and a sum separately, as the kernels do.
#pragma GCC optimize("fp-contract=off")

namespace fwht::test {
namespace {

template <class T>
struct Source {
  const std::vector<T>* values[2];
  bool whole_at_once = false;  // write the whole vector at offset 0, nothing later (sparse callers)
  bool want = true;
  int asked = 0;
  std::int64_t next[2] = {0, 0};
  int last_which = 0;
  std::string violation;

  static void fill(void* context, int which, T* block, std::int64_t offset, std::int64_t count) {
    auto& s = *static_cast<Source*>(context);
    const std::int64_t n = static_cast<std::int64_t>(s.values[which]->size());
    if (which < s.last_which) s.violation = "x filled after y";
    if (offset != s.next[which] && !(s.whole_at_once && offset < s.next[which])) s.violation = "offset " + std::to_string(offset) + " out of order";
    if (count <= 0 || offset + count > n) s.violation = "block past the end";
    s.last_which = which;
    const std::int64_t written = !s.whole_at_once ? count : offset == 0 ? n : 0;  // later blocks: written at offset 0
    if (!std::all_of(block, block + written, [](T v) { return v == T(0); })) s.violation = "block not zero";
    if (s.whole_at_once) {
      if (offset == 0) std::copy_n(s.values[which]->data(), n, block);
      s.next[which] = n;
      return;
    }
    std::copy_n(s.values[which]->data() + offset, count, block);
    s.next[which] = offset + count;
  }
  static bool wanted(void* context) {
    auto& s = *static_cast<Source*>(context);
    ++s.asked;
    if (s.next[1] != static_cast<std::int64_t>(s.values[1]->size())) s.violation = "asked before the last fill";
    return s.want;
  }
};

template <class T>
bool all_zero(const std::vector<T>& v) {
  return std::all_of(v.begin(), v.end(), [](T x) { return x == T(0) && !std::signbit(x); });
}

template <class T>
void expect_product_matches(const cpu::Kernels<T>& kernels, bool whole_at_once) {
  FWHT_TRACE_SEED();
  auto rng = test_rng();
  ASSERT_NE(kernels.plain_product, nullptr);
  for (int L = 0; L <= 18; ++L) {
    const std::size_t n = std::size_t{1} << L;
    const auto x = random_vector<T>(n, rng), y = random_vector<T>(n, rng), P0 = random_vector<T>(n, rng);
    auto hx = x, hy = y, expect = P0;
    reference::transform(std::span<T>(hx));
    reference::transform(std::span<T>(hy));
    for (std::size_t i = 0; i < n; ++i) {
      const T product = hx[i] * hy[i];
      expect[i] = expect[i] + product;
    }
    for (const bool want : {true, false}) {
      Source<T> source{{&x, &y}, whole_at_once, want};
      std::vector<T> P = P0, wx(n, T(0)), wy(n, T(0));
      kernels.plain_product(P.data(), wx.data(), wy.data(), L, {&Source<T>::fill, &source, &Source<T>::wanted});
      ASSERT_EQ(source.violation, "") << "n = 2^" << L << " isa " << kernels.isa;
      ASSERT_EQ(source.asked, 1) << "n = 2^" << L;
      ASSERT_EQ(source.next[0], static_cast<std::int64_t>(n)) << "x not filled whole, n = 2^" << L;
      ASSERT_EQ(source.next[1], static_cast<std::int64_t>(n)) << "y not filled whole, n = 2^" << L;
      ASSERT_EQ(first_bit_difference<T>(P, want ? expect : P0), -1) << "n = 2^" << L << " isa " << kernels.isa << " wanted " << want;
      ASSERT_TRUE(all_zero(wx) && all_zero(wy)) << "x, y not left zero, n = 2^" << L << " isa " << kernels.isa;
    }
  }
}

template <class T>
void expect_product_matches_on_every_isa() {
  for (cpu::Isa isa : {cpu::Isa::generic, cpu::Isa::avx2, cpu::Isa::avx512})
    if (cpu::isa_available(isa))
      for (bool whole : {false, true}) expect_product_matches<T>(cpu::kernels_of<T>(isa), whole);
}

TEST(TransformProduct, F64EveryIsa) { expect_product_matches_on_every_isa<double>(); }
TEST(TransformProduct, F32EveryIsa) { expect_product_matches_on_every_isa<float>(); }

// The public class with the kernels plans pick (capped by the suite's PAGH_FWHT_ISA runs).
TEST(TransformProduct, PublicClassMatchesReference) {
  FWHT_TRACE_SEED();
  auto rng = test_rng();
  for (int L : {0, 3, 10, 13, 15}) {
    const std::int64_t n = std::int64_t{1} << L;
    const TransformProduct<double> product(n);
    ASSERT_EQ(product.size(), n);
    const auto x = random_vector<double>(static_cast<std::size_t>(n), rng), y = random_vector<double>(static_cast<std::size_t>(n), rng);
    auto hx = x, hy = y;
    reference::transform(std::span<double>(hx));
    reference::transform(std::span<double>(hy));
    std::vector<double> P(static_cast<std::size_t>(n), 0.0), expect(static_cast<std::size_t>(n)), wx(x.size()), wy(y.size());
    for (std::size_t i = 0; i < expect.size(); ++i) {
      const double p = hx[i] * hy[i];
      expect[i] = 0.0 + p;
    }
    Source<double> source{{&x, &y}};
    product.accumulate(P.data(), wx.data(), wy.data(), {&Source<double>::fill, &source});
    ASSERT_EQ(source.violation, "");
    ASSERT_EQ(first_bit_difference<double>(P, expect), -1) << "n = 2^" << L;
    ASSERT_TRUE(all_zero(wx) && all_zero(wy)) << "n = 2^" << L;
  }
}

TEST(TransformProduct, RefusesSizesThatAreNotPowersOfTwo) {
  for (std::int64_t n : {0, -4, 3, 1000}) EXPECT_THROW(TransformProduct<float>{n}, pagh::Error) << n;
}

}  // namespace
}  // namespace fwht::test
