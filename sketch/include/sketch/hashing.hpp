// The hash tables of one product: for each repetition t, h1: [m] -> [b], s1: [m] -> {+1,-1},
// h2: [p] -> [b], s2: [p] -> {+1,-1}.
//
// Exactly how the seed maps to the tables (the GPU backend reproduces this bit for bit with the
// cuRAND device generator): one cuRAND generator CURAND_RNG_PSEUDO_PHILOX4_32_10 seeded with `seed`
// (default ordering) produces a stream of 32-bit words u_0, u_1, ...; repetition t uses the
// 2(m+p) words starting at offset t * 2(m+p) (curandSetGeneratorOffset), in this order:
//   h1(i) = u[i] >> (32 - log2 b)            i = 0..m-1     (the top bits; 0 when b = 1)
//   s1(i) = u[m + i] >> 31 ? -1 : +1         i = 0..m-1
//   h2(j) = u[2m + j] >> (32 - log2 b)       j = 0..p-1
//   s2(j) = u[2m + p + j] >> 31 ? -1 : +1    j = 0..p-1
#pragma once

#include <cstdint>
#include <vector>

namespace pagh {

struct HashTables {
  std::int64_t m = 0, p = 0, buckets = 0;
  int repetitions = 0;
  // Row-major by repetition: bucket_a[t * m + i] = h1_t(i), sign_a[t * m + i] = s1_t(i), etc.
  std::vector<std::uint32_t> bucket_a, bucket_b;
  std::vector<std::int8_t> sign_a, sign_b;

  std::uint32_t h1(int t, std::int64_t i) const { return bucket_a[static_cast<std::size_t>(t * m + i)]; }
  std::uint32_t h2(int t, std::int64_t j) const { return bucket_b[static_cast<std::size_t>(t * p + j)]; }
  int s1(int t, std::int64_t i) const { return sign_a[static_cast<std::size_t>(t * m + i)]; }
  int s2(int t, std::int64_t j) const { return sign_b[static_cast<std::size_t>(t * p + j)]; }
};

// Draws the tables on the CPU (the words computed as cuRAND's generator computes them, no cuRAND
// call; tested against its host generator); throws pagh::Error if b is not a power of two <= 2^32,
// or if the table sizes (d * m, d * p, 2 (m + p) d) overflow.
HashTables draw_hash_tables(std::uint64_t seed, int repetitions, std::int64_t m, std::int64_t p, std::int64_t buckets);

// Entries [a_begin, a_end) of bucket_a and sign_a and [b_begin, b_end) of bucket_b and sign_b, as
// they are stored (repetition-major: entry t * m + i holds h1_t(i) and s1_t(i)).
struct TableRange {
  std::int64_t a_begin = 0, a_end = 0, b_begin = 0, b_end = 0;
};

// For callers that share the drawing (distributed ranks: each draws a range, then they exchange
// them): tables of this shape with every entry zero (throws as draw_hash_tables does), and a range of
// their entries drawn in place, equal to the same entries of draw_hash_tables(seed, ...); throws
// pagh::Error for a range outside the tables.
HashTables zero_hash_tables(int repetitions, std::int64_t m, std::int64_t p, std::int64_t buckets);
void draw_hash_table_range(HashTables& tables, std::uint64_t seed, const TableRange& range);

}  // namespace pagh
