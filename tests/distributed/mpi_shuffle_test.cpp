// The byte-range read's shuffle by inner index (distributed/src/inner_shuffle.hpp) under mpirun (np 1,
// 2, 3): the ranks' bounds against one round of counts over every fine bin of k (the definition), and
// every entry received by the rank that owns its k, in rank order and each rank's file order, on one
// thread and on several (whose stable placement must keep that order).
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "inner_shuffle.hpp"
#include "mpi_test_support.hpp"

namespace {

using pagh::mpi::detail::Inner;
using pagh::mpi::detail::Triplet;
using pagh::mpi::detail::Triplets;
using pagh::test::rank_of;
using pagh::test::ranks;

// This rank's entries: k uniform over [0, K), or skewed (half of them on the first K / 100 k), rows
// and values that tell the entries apart (value = rank * 2^32 + position in file order).
Triplets entries_of(std::int64_t K, std::int64_t n, bool skewed, Inner inner, std::uint64_t seed) {
  std::mt19937_64 rng(seed * 1000 + static_cast<std::uint64_t>(rank_of()));
  Triplets out;
  for (std::int64_t e = 0; e < n; ++e) {
    const std::int64_t span = skewed && e % 2 == 0 ? std::max<std::int64_t>(1, K / 100) : K;
    const auto k = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(span));
    const auto other = static_cast<std::int64_t>(rng() % 1000);
    const double id = static_cast<double>(rank_of()) * 4294967296.0 + static_cast<double>(e);
    out.push_back(inner == Inner::column ? Triplet{other, k, id} : Triplet{k, other, id});
  }
  return out;
}

// The bounds by their definition: counts of every fine bin (min(K, 2^22) of them) summed over the
// ranks; bound r is the first bin edge at which the entries before reach r / size of all.
std::vector<std::int64_t> one_round_bounds(const Triplets& a, const Triplets& b, std::int64_t K) {
  const std::int64_t bins = std::max<std::int64_t>(1, std::min<std::int64_t>(K, std::int64_t{1} << 22));
  std::vector<std::int64_t> count(static_cast<std::size_t>(bins), 0);
  for (const Triplet& e : a) ++count[static_cast<std::size_t>(K == 0 ? 0 : e.col * bins / K)];
  for (const Triplet& e : b) ++count[static_cast<std::size_t>(K == 0 ? 0 : e.row * bins / K)];
  MPI_Allreduce(MPI_IN_PLACE, count.data(), static_cast<int>(bins), MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  std::int64_t all = 0;
  for (const std::int64_t c : count) all += c;
  const int size = ranks();
  std::vector<std::int64_t> bounds(static_cast<std::size_t>(size) + 1, K);
  bounds[0] = 0;
  std::int64_t seen = 0, i = 0;
  for (int r = 1; r < size; ++r) {
    while (i < bins && (seen + count[static_cast<std::size_t>(i)]) * size <= all * r) seen += count[static_cast<std::size_t>(i++)];
    bounds[static_cast<std::size_t>(r)] = std::max(bounds[static_cast<std::size_t>(r) - 1], (K * i + bins - 1) / bins);
  }
  return bounds;
}

TEST(InnerShuffle, BoundsAreThoseOfCountingEveryFineBin) {
  struct Case {
    std::int64_t K, n;
    bool skewed;
  };
  // K below and above 2^22 fine bins, uneven entry counts per rank, skewed k, a rank without entries.
  for (const Case c : {Case{1000, 5000, false}, Case{1000, 5000, true}, Case{3'000'000, 70'000, false}, Case{3'000'000, 70'000, true},
                       Case{10'000'000, 90'000, true}, Case{7, 50, false}})
    for (const int threads : {1, 3}) {
      const std::int64_t n = rank_of() == 1 ? 0 : c.n + 37 * rank_of();
      const Triplets a = entries_of(c.K, n, c.skewed, Inner::column, 1), b = entries_of(c.K, n / 2, c.skewed, Inner::row, 2);
      EXPECT_EQ(pagh::mpi::detail::inner_bounds(a, b, c.K, MPI_COMM_WORLD, threads), one_round_bounds(a, b, c.K))
          << "K " << c.K << " n " << c.n << (c.skewed ? " skewed" : "") << " threads " << threads;
    }
}

TEST(InnerShuffle, EveryEntryGoesToItsOwnerInRankAndFileOrder) {
  for (const Inner inner : {Inner::column, Inner::row})
    for (const int threads : {1, 3}) {
      const std::int64_t K = 50'000, n = 200'000 + 1000 * rank_of();  // 3 chunks of 2^16 entries or more
      const Triplets mine = entries_of(K, n, true, inner, 3);
      const std::vector<std::int64_t> bounds = pagh::mpi::detail::inner_bounds(mine, {}, K, MPI_COMM_WORLD, threads);
      // Every rank's entries, in rank order, on every rank.
      std::vector<int> counts(static_cast<std::size_t>(ranks())), at(static_cast<std::size_t>(ranks()), 0);
      int bytes = static_cast<int>(mine.size() * sizeof(Triplet));
      MPI_Allgather(&bytes, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
      for (int r = 1; r < ranks(); ++r) at[static_cast<std::size_t>(r)] = at[static_cast<std::size_t>(r) - 1] + counts[static_cast<std::size_t>(r) - 1];
      std::vector<Triplet> every((static_cast<std::size_t>(at.back()) + static_cast<std::size_t>(counts.back())) / sizeof(Triplet));
      MPI_Allgatherv(mine.data(), bytes, MPI_BYTE, every.data(), counts.data(), at.data(), MPI_BYTE, MPI_COMM_WORLD);
      const std::int64_t k0 = bounds[static_cast<std::size_t>(rank_of())], k1 = bounds[static_cast<std::size_t>(rank_of()) + 1];
      std::vector<double> want;
      for (const Triplet& e : every)
        if (const std::int64_t k = inner == Inner::column ? e.col : e.row; k >= k0 && k < k1) want.push_back(e.value);
      const Triplets got = pagh::mpi::detail::shuffle(mine, bounds, inner, MPI_COMM_WORLD, threads);
      std::vector<double> got_ids;
      for (const Triplet& e : got) got_ids.push_back(e.value);
      EXPECT_EQ(got_ids, want) << (inner == Inner::column ? "columns" : "rows") << ", threads " << threads;
      // The entries themselves, not only their order.
      std::int64_t wrong = 0;
      for (const Triplet& e : got) {
        const auto r = static_cast<std::size_t>(e.value / 4294967296.0);
        const auto position = static_cast<std::size_t>(e.value - static_cast<double>(r) * 4294967296.0);
        const Triplet& from = every[static_cast<std::size_t>(at[r]) / sizeof(Triplet) + position];
        wrong += from.row != e.row || from.col != e.col;
      }
      EXPECT_EQ(wrong, 0);
    }
}

}  // namespace

int main(int argc, char** argv) { return pagh::test::run_mpi_tests(argc, argv); }
