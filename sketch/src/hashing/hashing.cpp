// Hash tables from cuRAND's Philox4_32_10 stream, computed here word for word (hashing/philox.hpp;
// see hashing.hpp for the mapping).
#include "sketch/hashing.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>

#include "compress/huge_pages.hpp"
#include "fwht/options.hpp"
#include "hashing/philox.hpp"
#include "pagh/error.hpp"

namespace pagh {
namespace {

// The last tables drawn, when small: callers (benchmarks, studies, the CLI's repeated products)
// often draw the same tables again. Tables above kCachedBytes are not kept (they would double a
// large product's memory). They are kept from their second draw on: the copy costs about what
// drawing does, and a process that draws its tables once (one product, a distributed rank) would
// pay it for nothing.
constexpr std::size_t kCachedBytes = std::size_t{64} << 20;
using TableKey = std::tuple<std::uint64_t, int, std::int64_t, std::int64_t, std::int64_t>;
std::mutex cache_mutex;
TableKey cached_key{0, 0, -1, -1, 0}, last_key{0, 0, -1, -1, 0};
HashTables cached_tables;

// out[i] = f(word offset + i of the stream) for i < count, generated a chunk at a time (the words stay
// in L1 between their generation and their use).
template <class T, class Map>
void map_words(std::uint64_t seed, std::uint64_t offset, std::uint64_t count, T* out, Map f) {
  constexpr std::uint64_t kChunk = 2048;
  std::uint32_t words[kChunk];
  for (std::uint64_t done = 0; done < count; done += kChunk) {
    const auto n = static_cast<std::size_t>(std::min(kChunk, count - done));
    philox::generate(seed, offset + done, words, n);
    for (std::size_t i = 0; i < n; ++i) out[done + i] = f(words[i]);
  }
}

// The entries of one side's tables (d * m, d * p); throws for shapes no tables can have.
std::pair<std::int64_t, std::int64_t> table_sizes(int repetitions, std::int64_t m, std::int64_t p, std::int64_t buckets) {
  if (!fwht::is_power_of_two(buckets) || buckets > (std::int64_t{1} << 32))
    throw Error("pagh::draw_hash_tables", "sketch length " + std::to_string(buckets) + " is not a power of two <= 2^32");
  if (repetitions < 1 || m < 0 || p < 0)
    throw Error("pagh::draw_hash_tables", "invalid dimensions " + std::to_string(m) + " x " + std::to_string(p) +
                                              " or repetitions " + std::to_string(repetitions));
  // Every size below is a product of these numbers: refuse those whose products would overflow
  // (they could never be allocated anyway) instead of sizing the tables from a wrapped value.
  std::int64_t rep_words = 0, table_a = 0, table_b = 0, generator_end = 0;
  if (__builtin_add_overflow(m, p, &rep_words) || __builtin_mul_overflow(rep_words, 2, &rep_words) ||
      __builtin_mul_overflow(m, repetitions, &table_a) || __builtin_mul_overflow(p, repetitions, &table_b) ||
      __builtin_mul_overflow(rep_words, repetitions, &generator_end) ||
      static_cast<std::uint64_t>(table_a) > SIZE_MAX / sizeof(std::uint32_t) ||
      static_cast<std::uint64_t>(table_b) > SIZE_MAX / sizeof(std::uint32_t))
    throw Error("pagh::draw_hash_tables", "tables for " + std::to_string(m) + " x " + std::to_string(p) + " and " +
                                              std::to_string(repetitions) + " repetitions are too large to index");
  return {table_a, table_b};
}

}  // namespace

HashTables zero_hash_tables(int repetitions, std::int64_t m, std::int64_t p, std::int64_t buckets) {
  const auto [table_a, table_b] = table_sizes(repetitions, m, p, buckets);
  HashTables tables;
  tables.m = m, tables.p = p, tables.buckets = buckets, tables.repetitions = repetitions;
  // Long tables on huge pages (advised before their first touch: compress/huge_pages.hpp).
  cpu_sketch::assign_zeroed(tables.bucket_a, static_cast<std::size_t>(table_a));
  cpu_sketch::assign_zeroed(tables.sign_a, tables.bucket_a.size());
  cpu_sketch::assign_zeroed(tables.bucket_b, static_cast<std::size_t>(table_b));
  cpu_sketch::assign_zeroed(tables.sign_b, tables.bucket_b.size());
  return tables;
}

void draw_hash_table_range(HashTables& tables, std::uint64_t seed, const TableRange& range) {
  const std::int64_t m = tables.m, p = tables.p, d = tables.repetitions;
  const auto [table_a, table_b] = table_sizes(tables.repetitions, m, p, tables.buckets);
  if (range.a_begin < 0 || range.a_begin > range.a_end || range.a_end > table_a || range.b_begin < 0 || range.b_begin > range.b_end ||
      range.b_end > table_b || tables.bucket_a.size() != static_cast<std::size_t>(table_a) ||
      tables.bucket_b.size() != static_cast<std::size_t>(table_b) || tables.sign_a.size() != tables.bucket_a.size() ||
      tables.sign_b.size() != tables.bucket_b.size())
    throw Error("pagh::draw_hash_table_range", "entries [" + std::to_string(range.a_begin) + ", " + std::to_string(range.a_end) +
                                                   ") and [" + std::to_string(range.b_begin) + ", " + std::to_string(range.b_end) +
                                                   ") are not a range of tables of " + std::to_string(d) + " x (" +
                                                   std::to_string(m) + " + " + std::to_string(p) + ") entries");
  const int log2b = std::countr_zero(static_cast<std::uint64_t>(tables.buckets));
  auto bucket = [log2b](std::uint32_t u) { return log2b == 0 ? 0u : static_cast<std::uint32_t>(u >> (32 - log2b)); };
  auto sign = [](std::uint32_t u) { return static_cast<std::int8_t>((u >> 31) ? -1 : 1); };
  const auto rep_words = static_cast<std::uint64_t>(2 * (m + p));
  // Entries [begin, end) of one side's tables: n entries per repetition whose words start at `first`
  // within each repetition's 2(m + p) (buckets there, signs n words later).
  const auto side = [&](std::int64_t begin, std::int64_t end, std::int64_t n, std::uint64_t first, std::uint32_t* buckets,
                        std::int8_t* signs) {
    for (std::int64_t at = begin; at < end;) {
      const std::int64_t t = at / n, i = at % n, count = std::min(end - at, n - i);
      const std::uint64_t word = static_cast<std::uint64_t>(t) * rep_words + first + static_cast<std::uint64_t>(i);
      map_words(seed, word, static_cast<std::uint64_t>(count), buckets + at, bucket);
      map_words(seed, word + static_cast<std::uint64_t>(n), static_cast<std::uint64_t>(count), signs + at, sign);
      at += count;
    }
  };
  side(range.a_begin, range.a_end, m, 0, tables.bucket_a.data(), tables.sign_a.data());
  side(range.b_begin, range.b_end, p, static_cast<std::uint64_t>(2 * m), tables.bucket_b.data(), tables.sign_b.data());
}

HashTables draw_hash_tables(std::uint64_t seed, int repetitions, std::int64_t m, std::int64_t p, std::int64_t buckets) {
  (void)table_sizes(repetitions, m, p, buckets);  // refuses what no tables can have, cached or not
  const TableKey key{seed, repetitions, m, p, buckets};
  {
    const std::lock_guard<std::mutex> lock(cache_mutex);
    if (key == cached_key) return cached_tables;
  }
  HashTables tables = zero_hash_tables(repetitions, m, p, buckets);
  draw_hash_table_range(tables, seed, {0, repetitions * m, 0, repetitions * p});
  if ((tables.bucket_a.size() + tables.bucket_b.size()) * (sizeof(std::uint32_t) + sizeof(std::int8_t)) <= kCachedBytes) {
    const std::lock_guard<std::mutex> lock(cache_mutex);
    if (key == last_key) cached_key = key, cached_tables = tables;
    last_key = key;
  }
  return tables;
}

}  // namespace pagh
