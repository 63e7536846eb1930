// draw_hash_tables (which computes cuRAND's words itself, sketch/src/hashing/philox.hpp) against the
// mapping documented in sketch/hashing.hpp, computed here straight from the cuRAND host generator (repetition t at offset t * 2(m + p), one reseed per repetition),
// for word counts that are not multiples of Philox's 4-word blocks; and repeated draws of the same
// (seed, shape) (the cache keeps the last tables from their second draw on and serves the third)
// equal to the first, while a different seed or shape gives its own tables.
#include <curand.h>

#include <bit>
#include <cstdint>
#include <vector>

#include "sketch_test_support.hpp"

namespace pagh::test {
namespace {

std::vector<std::uint32_t> words_at(std::uint64_t seed, unsigned long long offset, std::size_t count) {
  curandGenerator_t g = nullptr;
  EXPECT_EQ(curandCreateGeneratorHost(&g, CURAND_RNG_PSEUDO_PHILOX4_32_10), CURAND_STATUS_SUCCESS);
  std::vector<std::uint32_t> words(count);
  EXPECT_EQ(curandSetPseudoRandomGeneratorSeed(g, seed), CURAND_STATUS_SUCCESS);
  EXPECT_EQ(curandSetGeneratorOffset(g, offset), CURAND_STATUS_SUCCESS);
  EXPECT_EQ(curandGenerate(g, words.data(), count), CURAND_STATUS_SUCCESS);
  curandDestroyGenerator(g);
  return words;
}

void expect_documented_mapping(std::uint64_t seed, int d, std::int64_t m, std::int64_t p, std::int64_t b) {
  const HashTables tables = draw_hash_tables(seed, d, m, p, b);
  const int log2b = std::countr_zero(static_cast<std::uint64_t>(b));
  const std::size_t rep_words = static_cast<std::size_t>(2 * (m + p));
  for (int t = 0; t < d; ++t) {
    const auto u = words_at(seed, static_cast<unsigned long long>(t) * rep_words, rep_words);
    auto bucket = [&](std::uint32_t w) { return log2b == 0 ? 0u : w >> (32 - log2b); };
    auto sign = [](std::uint32_t w) { return (w >> 31) ? -1 : 1; };
    for (std::int64_t i = 0; i < m; ++i) {
      ASSERT_EQ(tables.h1(t, i), bucket(u[static_cast<std::size_t>(i)])) << "h1, t " << t << " i " << i;
      ASSERT_EQ(tables.s1(t, i), sign(u[static_cast<std::size_t>(m + i)])) << "s1, t " << t << " i " << i;
    }
    for (std::int64_t j = 0; j < p; ++j) {
      ASSERT_EQ(tables.h2(t, j), bucket(u[static_cast<std::size_t>(2 * m + j)])) << "h2, t " << t << " j " << j;
      ASSERT_EQ(tables.s2(t, j), sign(u[static_cast<std::size_t>(2 * m + p + j)])) << "s2, t " << t << " j " << j;
    }
  }
}

TEST(SketchHashTables, FollowTheDocumentedMapping) {
  expect_documented_mapping(3, 3, 3, 2, 16);        // 10 words per repetition
  expect_documented_mapping(5, 4, 1, 0, 1);         // 2 words, b = 1
  expect_documented_mapping(99, 2, 1000, 777, 1 << 12);
  expect_documented_mapping(7, 5, 4097, 1, 1 << 15);
  // 2 (m + p) = 271074 words per repetition: past the first 65536 Philox blocks (2^18 words), where
  // the generator's counter advances, and a 64-bit seed.
  expect_documented_mapping(0x9E3779B97F4A7C15ull, 2, 70000, 65537, 1 << 20);
}

TEST(SketchHashTables, RepeatedDrawsAreEqualAndKeysAreDistinct) {
  const HashTables first = draw_hash_tables(41, 3, 300, 200, 1 << 10);
  const HashTables again = draw_hash_tables(41, 3, 300, 200, 1 << 10);
  EXPECT_EQ(first.bucket_a, again.bucket_a);
  EXPECT_EQ(first.bucket_b, again.bucket_b);
  EXPECT_EQ(first.sign_a, again.sign_a);
  EXPECT_EQ(first.sign_b, again.sign_b);
  const HashTables cached = draw_hash_tables(41, 3, 300, 200, 1 << 10);  // served from the cache
  EXPECT_EQ(first.bucket_a, cached.bucket_a);
  EXPECT_EQ(first.bucket_b, cached.bucket_b);
  EXPECT_EQ(first.sign_a, cached.sign_a);
  EXPECT_EQ(first.sign_b, cached.sign_b);
  EXPECT_NE(draw_hash_tables(42, 3, 300, 200, 1 << 10).bucket_a, first.bucket_a);
  const HashTables wider = draw_hash_tables(41, 3, 300, 200, 1 << 11);  // one more bucket bit
  EXPECT_EQ(wider.buckets, 1 << 11);
  EXPECT_NE(wider.bucket_a, first.bucket_a);
  EXPECT_EQ(draw_hash_tables(41, 2, 300, 200, 1 << 10).repetitions, 2);
  expect_documented_mapping(41, 3, 300, 200, 1 << 10);  // after the cache was filled
}

}  // namespace
}  // namespace pagh::test
