// The direct path's binned adds (sketch/src/compress/direct_adds.hpp) against adding each term in
// arrival order: the same bits for every bucket, whichever way a sort treats a bin (summed in the
// scratch and stored where it is untouched and dense, added in place where it was touched before or
// gets few terms), across several sorts per target and several targets.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "compress/direct_adds.hpp"

namespace {

using pagh::cpu_sketch::DirectAdds;

struct Term {
  std::uint32_t bucket;
  double value;
};

// Terms for one target of b = 2^18 buckets (16 bins of 2^14) in sorts of 4096 terms: bins that are
// dense in the first sort (stored), sparse in the first and dense in a later one (in place after
// the first touch), first touched by a dense later sort (stored then), and never touched. The
// buckets of a bin repeat (64 per bin) and the values span many magnitudes and cancel, so that any
// other order of the adds, or a stored bin that overwrites earlier sums, changes some bits.
std::vector<Term> terms_for_one_target(std::mt19937_64& rng) {
  constexpr std::uint32_t kSpan = 1u << 14;
  std::normal_distribution<double> normal;
  std::uniform_int_distribution<int> exponent(-30, 30), slot(0, 63);
  std::vector<double> recent;
  const auto term = [&](std::uint32_t bin) {
    const std::uint32_t bucket = bin * kSpan + static_cast<std::uint32_t>(slot(rng)) * 251u % kSpan;
    double value = std::ldexp(normal(rng), exponent(rng));
    if (!recent.empty() && rng() % 8 == 0) value = -recent[rng() % recent.size()];  // exact cancellations
    if (rng() % 64 == 0) value = -0.0;
    recent.push_back(value);
    if (recent.size() > 32) recent.erase(recent.begin());
    return Term{bucket, value};
  };
  std::vector<Term> terms;
  // Sort 1: bin 0 dense, bin 1 sparse, bins 2..5 sparse.
  for (int e = 0; e < 3000; ++e) terms.push_back(term(0));
  for (int e = 0; e < 40; ++e) terms.push_back(term(1));
  for (int e = 0; e < 1056; ++e) terms.push_back(term(2 + static_cast<std::uint32_t>(e % 4)));
  // Sort 2: bin 1 dense (touched before: in place), bin 8 dense and untouched (stored), bin 0 again.
  for (int e = 0; e < 1500; ++e) terms.push_back(term(1));
  for (int e = 0; e < 2000; ++e) terms.push_back(term(8));
  for (int e = 0; e < 596; ++e) terms.push_back(term(0));
  // Sorts 3 and 4 (the last one partial): every bin but 15, interleaved.
  for (int e = 0; e < 6000; ++e) terms.push_back(term(static_cast<std::uint32_t>(e % 15)));
  return terms;
}

void expect_same_bits(const std::vector<double>& got, const std::vector<double>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size());
  std::size_t differ = 0, first = got.size();
  for (std::size_t h = 0; h < got.size(); ++h)
    if (std::memcmp(&got[h], &want[h], sizeof(double)) != 0) first = differ++ == 0 ? h : first;
  EXPECT_EQ(differ, 0u) << what << ": first difference at bucket " << first;
}

TEST(DirectAdds, BinsStoredOrAddedGiveTheBitsOfAddingInArrivalOrder) {
  constexpr std::int64_t kBuckets = std::int64_t{1} << 18;
  ASSERT_TRUE(DirectAdds::binned(kBuckets));
  for (const std::uint64_t seed : {1u, 2u, 3u, 4u}) {
    std::mt19937_64 rng(seed);
    const std::vector<Term> first = terms_for_one_target(rng), second = terms_for_one_target(rng);
    std::vector<double> want(2 * kBuckets, 0.0);
    for (const Term& t : first) want[t.bucket] += t.value;
    for (const Term& t : second) want[kBuckets + t.bucket] += t.value;

    // Two targets in one buffer (as the engine's repetitions are), then each through its own, the
    // second 8 bytes off 16-byte alignment (no streaming stores there).
    DirectAdds adds(kBuckets, 4096);
    std::vector<double> got(2 * kBuckets + 1, 0.0);
    adds.target(got.data());
    for (const Term& t : first) adds.add(t.bucket, t.value);
    adds.target(got.data() + kBuckets);
    for (const Term& t : second) adds.add(t.bucket, t.value);
    adds.target(nullptr);
    expect_same_bits(std::vector<double>(got.begin(), got.end() - 1), want, "one buffer");

    std::vector<double> shifted(kBuckets + 1, 0.0);
    adds.target(shifted.data() + 1);
    for (const Term& t : second) adds.add(t.bucket, t.value);
    adds.flush();
    expect_same_bits(std::vector<double>(shifted.begin() + 1, shifted.end()),
                     std::vector<double>(want.begin() + kBuckets, want.end()), "unaligned");
  }
}

}  // namespace
