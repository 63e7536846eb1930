// The wire form of one segment of a partial sketch in the distributed sum (mpi_compress.cpp). A
// rank's partial sketch is often mostly zeros (a sparse share adds a few terms per bucket at most:
// at n = 10^6 on 8 ranks four buckets in five hold 0), and every zero sent costs 8 bytes that the
// receiver then adds for nothing. A segment goes either dense (a header word, then its values) or,
// when that is shorter, sparse (a header word, a bitmap of its nonzero values, then those values
// in order). Zeros (+0.0 and -0.0) are left out of the sparse form: the receiver's sum starts from
// +0.0, and adding a zero to a sum that started from +0.0 never changes it (in round-to-nearest a
// sum is -0.0 only when both terms are), so leaving them out gives the same bits.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace pagh::mpi::segment_codec {

inline constexpr std::uint64_t kDense = 0, kSparse = 1;

// Words the encoding of len values may take at most (the dense form).
inline std::int64_t max_words(std::int64_t len) { return 1 + len; }

// Bit i of the word: values[i] != 0, for count <= 64 values.
inline std::uint64_t nonzero_bits(const double* values, std::int64_t count) {
  std::uint64_t word = 0;
  std::int64_t i = 0;
#if defined(__SSE2__)
  // Two values per compare (not-equal is true for NaN, false for -0.0, as != is).
  const __m128d zero = _mm_setzero_pd();
  for (; i + 2 <= count; i += 2)
    word |= static_cast<std::uint64_t>(_mm_movemask_pd(_mm_cmpneq_pd(_mm_loadu_pd(values + i), zero))) << i;
#endif
  for (; i < count; ++i) word |= static_cast<std::uint64_t>(values[i] != 0.0) << i;
  return word;
}

// Writes the shorter form of values[0, len) to out; returns the words written. The bitmap is
// written first (where the sparse form keeps it); the dense form then writes over it.
inline std::int64_t encode(const double* values, std::int64_t len, std::uint64_t* out) {
  const std::int64_t bitmap = (len + 63) / 64;
  std::uint64_t* bits = out + 1;
  std::int64_t nonzeros = 0;
  for (std::int64_t w = 0; w < bitmap; ++w) {
    bits[w] = nonzero_bits(values + 64 * w, std::min<std::int64_t>(64, len - 64 * w));
    nonzeros += std::popcount(bits[w]);
  }
  if (bitmap + nonzeros >= len) {
    out[0] = kDense;
    std::memcpy(out + 1, values, static_cast<std::size_t>(len) * sizeof(double));
    return 1 + len;
  }
  out[0] = kSparse;
  std::uint64_t* packed = bits + bitmap;
  for (std::int64_t w = 0; w < bitmap; ++w)
    for (std::uint64_t word = bits[w]; word != 0; word &= word - 1) std::memcpy(packed++, values + 64 * w + std::countr_zero(word), sizeof(double));
  return 1 + bitmap + nonzeros;
}

// sum[0, len) += the values encoded at in (a zero where the sparse form left one out); returns the
// words read.
inline std::int64_t add(const std::uint64_t* in, std::int64_t len, double* sum) {
  if (in[0] == kDense) {
    for (std::int64_t i = 0; i < len; ++i) {
      double value;
      std::memcpy(&value, in + 1 + i, sizeof(double));
      sum[i] += value;
    }
    return 1 + len;
  }
  const std::int64_t bitmap = (len + 63) / 64;
  const std::uint64_t* bits = in + 1;
  const std::uint64_t* packed = bits + bitmap;
  for (std::int64_t w = 0; w < bitmap; ++w)
    for (std::uint64_t word = bits[w]; word != 0; word &= word - 1) {
      double value;
      std::memcpy(&value, packed++, sizeof(double));
      sum[64 * w + std::countr_zero(word)] += value;
    }
  return static_cast<std::int64_t>(packed - in);
}

}  // namespace pagh::mpi::segment_codec
