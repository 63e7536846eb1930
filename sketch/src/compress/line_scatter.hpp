// Scattering one line into a sketch vector: x[h(i)] += s(i) v_i (DESIGN.md §1), summed in Acc.
//
// Off the fused path (cpu_engine.hpp), a dense line is scattered in bucket order: one repetition's hash is the same for every line, so
// its positions are sorted by (bucket, position) once and every line then writes its vector from
// low addresses to high (the buckets of a 2^15 vector no longer cost a random L2 access each) while
// it reads its own values, which sit in L1, in the permuted order. Within a bucket the terms keep
// the order of their positions, the order a plain loop sums them in, so the sums are bit-identical
// to it. A sparse line has few entries, each in its own bucket mostly: scattered in its own order.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

#include "compress/cpu_lines.hpp"

namespace pagh::cpu_sketch {

// One repetition's (h, s) over a line's positions, as entries (h << 32) | (negative << 31) | i sorted
// by (h, i). Empty (scatter in position order) when positions do not fit in 31 bits or when there
// are too few lines to repay the sort.
struct BucketOrder {
  std::vector<std::uint64_t> entries;
};

inline BucketOrder bucket_order(const std::uint32_t* bucket, const std::int8_t* sign, index length, index lines) {
  BucketOrder order;
  constexpr index kFewestLines = 64;  // the sort costs about log2(length) scatters of one line
  if (length >= (index{1} << 31) || lines < kFewestLines) return order;
  order.entries.resize(static_cast<std::size_t>(length));
  for (index i = 0; i < length; ++i)
    order.entries[static_cast<std::size_t>(i)] = (std::uint64_t{bucket[i]} << 32) | static_cast<std::uint64_t>(i);
  std::sort(order.entries.begin(), order.entries.end());  // distinct keys: by bucket, then position
  for (auto& e : order.entries)
    if (sign[e & 0x7FFFFFFFu] < 0) e |= std::uint64_t{1} << 31;
  return order;
}

// -a when negative, a otherwise, through the sign bit: exactly what negating does, without a branch.
template <class Acc>
Acc with_sign(Acc a, std::uint32_t negative) {
  using Bits = std::conditional_t<sizeof(Acc) == 8, std::uint64_t, std::uint32_t>;
  return std::bit_cast<Acc>(std::bit_cast<Bits>(a) ^ (static_cast<Bits>(negative) << (8 * sizeof(Acc) - 1)));
}

// Scatters line `values` (length positions) into out; returns its number of nonzeros. Zeros are
// added too: adding +-0 never changes a bucket's bits (a bucket is never -0: it starts at +0 and
// x + (-x) rounds to +0), so the sums equal those of a loop that skips zeros. The values are read in
// bucket order, i.e. at random: `next` (the line scattered next, or null) is prefetched meanwhile,
// one cache line per cache line's worth of entries, so that no line is first read from memory in
// that order.
template <class Acc, class Scalar>
index scatter_dense(const Scalar* values, const Scalar* next, const BucketOrder& order, const std::uint32_t* bucket,
                    const std::int8_t* sign, index length, Acc* out) {
  constexpr index kPerCacheLine = 64 / sizeof(Scalar);
  index nonzeros = 0;
  if (!order.entries.empty()) {
    const std::uint64_t* entries = order.entries.data();
    for (index e0 = 0; e0 < length; e0 += kPerCacheLine) {
      if (next != nullptr) __builtin_prefetch(next + e0);
      const index e1 = std::min(length, e0 + kPerCacheLine);
      for (index e = e0; e < e1; ++e) {
        const auto low = static_cast<std::uint32_t>(entries[e]);
        const double v = static_cast<double>(values[low & 0x7FFFFFFFu]);
        out[entries[e] >> 32] += with_sign(static_cast<Acc>(v), low >> 31);
        nonzeros += v != 0;
      }
    }
    return nonzeros;
  }
  for (index i = 0; i < length; ++i) {
    const double v = static_cast<double>(values[i]);
    out[bucket[i]] += with_sign(static_cast<Acc>(v), sign[i] < 0 ? 1u : 0u);
    nonzeros += v != 0;
  }
  return nonzeros;
}

// One repetition's (h, s) packed per position (dense lines on the fused path, sparse lines on every
// path): h(i) | (negative << 31), one 4-byte stream where a bucket table and a sign table were two.
// Empty when a bucket needs 32 bits.
inline std::vector<std::uint32_t> hash_words(const std::uint32_t* bucket, const std::int8_t* sign, index length, index buckets) {
  std::vector<std::uint32_t> words;
  if (buckets > (index{1} << 31)) return words;
  words.resize(static_cast<std::size_t>(length));
  for (index i = 0; i < length; ++i)
    words[static_cast<std::size_t>(i)] = bucket[i] | (sign[i] < 0 ? std::uint32_t{1} << 31 : 0u);
  return words;
}

// Dense lines on the fused path: the hash words with bit 30 set at the first position of each
// bucket (in position order), where the scatter stores instead of adding (no read of the vector's
// line, which mostly misses L1); empty when a bucket needs 31 bits.
constexpr std::uint32_t kFirstInBucket = std::uint32_t{1} << 30;
inline std::vector<std::uint32_t> first_marked_words(const std::vector<std::uint32_t>& words, index buckets) {
  if (words.empty() || buckets > (index{1} << 30)) return {};
  std::vector<std::uint32_t> marked(words);
  std::vector<std::uint64_t> seen(static_cast<std::size_t>((buckets + 63) / 64), 0);
  for (std::uint32_t& w : marked) {
    const std::uint32_t h = w & 0x7FFFFFFFu;
    std::uint64_t& bits = seen[h >> 6];
    if ((bits >> (h & 63) & 1) == 0) bits |= std::uint64_t{1} << (h & 63), w |= kFirstInBucket;
  }
  return marked;
}

// The fused path's scatter of a dense line: the whole line in position order into out (zero), its
// values read as they lie in memory (the hardware prefetcher streams them) and each added to its
// bucket, which sits in L2 with the rest of the vector. Terms reach a bucket in position order: the
// sums of scatter_dense, bit for bit. Counts the nonzeros when Count. `next` is prefetched as there.
// Marked: words from first_marked_words; a bucket's first term is stored as s + 0 (+0 + s, which
// is s except that -0 becomes +0, as adding it to the zero bucket gives).
template <bool Count, bool Marked = false, class Acc, class Scalar>
index scatter_dense_words(const Scalar* values, const Scalar* next, const std::uint32_t* words, index length, Acc* out) {
  constexpr index kPerCacheLine = 64 / sizeof(Scalar);
  constexpr std::uint32_t kMask = Marked ? kFirstInBucket - 1 : 0x7FFFFFFFu;
  index nonzeros = 0;
  for (index i0 = 0; i0 < length; i0 += kPerCacheLine) {
    if (next != nullptr) __builtin_prefetch(next + i0);
    const index i1 = std::min(length, i0 + kPerCacheLine);
    for (index i = i0; i < i1; ++i) {
      const double v = static_cast<double>(values[i]);
      const std::uint32_t w = words[i];
      const Acc term = with_sign(static_cast<Acc>(v), w >> 31);
      if (Marked && (w & kFirstInBucket) != 0) out[w & kMask] = term + Acc{0};
      else out[w & kMask] += term;
      if constexpr (Count) nonzeros += v != 0;
    }
  }
  return nonzeros;
}

template <class Acc>
void scatter_sparse(const SparseLines& lines, index k, const std::uint32_t* bucket, const std::int8_t* sign, Acc* out) {
  lines.for_each(k, [&](index pos, double v) { out[bucket[pos]] += with_sign(static_cast<Acc>(v), sign[pos] < 0 ? 1u : 0u); });
}

// The same through the packed hash words: one table read (one cache miss) per entry instead of two.
template <class Acc>
void scatter_sparse_words(const SparseLines& lines, index k, const std::uint32_t* words, Acc* out) {
  lines.for_each(k, [&](index pos, double v) { out[words[pos] & 0x7FFFFFFFu] += with_sign(static_cast<Acc>(v), words[pos] >> 31); });
}

// The sign of a packed hash word as the value s = +-1.0 (what the sign tables' +-1 converts to), so
// that s * v rounds exactly as the tables' product did.
inline double sign_value(std::uint32_t word) {
  return std::bit_cast<double>(std::uint64_t{0x3FF0000000000000} | (std::uint64_t{word >> 31} << 63));
}

// Asks for the packed hash words of line k's positions ahead of their use (the direct path's terms
// read them at random over tables far larger than the caches).
inline void prefetch_words(const SparseLines& lines, index k, const std::uint32_t* words) {
  for (index e = lines.start[static_cast<std::size_t>(k)]; e < lines.start[static_cast<std::size_t>(k + 1)]; ++e)
    __builtin_prefetch(words + lines.position[static_cast<std::size_t>(e)]);
}

}  // namespace pagh::cpu_sketch
