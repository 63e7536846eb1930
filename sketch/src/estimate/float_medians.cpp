#include "estimate/float_medians.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <bit>
#include <cmath>

namespace pagh::detail {
namespace {

constexpr std::uint32_t kSign = 0x80000000u, kBucket = 0x7fffffffu;

// One repetition's view of row i: its sketch, and the word that XOR-combines with a column's word
// into the bucket (low 31 bits) and the sign of s1 s2 (top bit).
struct Rep {
  const float* sketch;
  std::uint32_t row_word;
  const std::uint32_t* col_words;
};

inline float single(const Rep& r, std::int64_t j) {
  const std::uint32_t w = r.col_words[j] ^ r.row_word;
  return std::bit_cast<float>(std::bit_cast<std::uint32_t>(r.sketch[w & kBucket]) ^ (w & kSign));
}

inline float magnitude(const Rep* reps, int d, std::int64_t j) {
  if (d == 1) return std::fabs(single(reps[0], j));
  const float v0 = single(reps[0], j), v1 = single(reps[1], j), v2 = single(reps[2], j);
  return std::fabs(std::max(std::min(v0, v1), std::min(std::max(v0, v1), v2)));
}

void reaching_scalar(const Rep* reps, int d, std::int64_t from, std::int64_t cols, float bound, std::vector<std::int64_t>& out) {
  for (std::int64_t j = from; j < cols; ++j)
    if (magnitude(reps, d, j) >= bound) out.push_back(j);
}

#if defined(__x86_64__)
__attribute__((target("avx2"))) inline __m256 gather_single(const Rep& r, std::int64_t j) {
  const __m256i w = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(r.col_words + j)),
                                     _mm256_set1_epi32(static_cast<int>(r.row_word)));
  const __m256 c = _mm256_i32gather_ps(r.sketch, _mm256_and_si256(w, _mm256_set1_epi32(static_cast<int>(kBucket))), 4);
  return _mm256_xor_ps(c, _mm256_castsi256_ps(_mm256_and_si256(w, _mm256_set1_epi32(static_cast<int>(kSign)))));
}

// The values are finite: min and max select one of their operands, as std::min and std::max do.
__attribute__((target("avx2"))) void reaching_avx2(const Rep* reps, int d, std::int64_t cols, float bound, std::vector<std::int64_t>& out) {
  const __m256 magnitude = _mm256_castsi256_ps(_mm256_set1_epi32(static_cast<int>(kBucket)));
  const __m256 at_least = _mm256_set1_ps(bound);
  std::int64_t j = 0;
  for (; j + 8 <= cols; j += 8) {
    __m256 m = gather_single(reps[0], j);
    if (d == 3) {
      const __m256 v1 = gather_single(reps[1], j), v2 = gather_single(reps[2], j);
      m = _mm256_max_ps(_mm256_min_ps(m, v1), _mm256_min_ps(_mm256_max_ps(m, v1), v2));
    }
    auto reach = static_cast<unsigned>(_mm256_movemask_ps(_mm256_cmp_ps(_mm256_and_ps(m, magnitude), at_least, _CMP_GE_OQ)));
    for (; reach != 0; reach &= reach - 1) out.push_back(j + std::countr_zero(reach));
  }
  reaching_scalar(reps, d, j, cols, bound, out);
}
#endif

}  // namespace

FloatMedians::FloatMedians(const HashTables& tables, std::span<const double> sketches, bool finite)
    : tables_(tables), d_(tables.repetitions), cols_(tables.p) {
  usable_ = finite && applies(d_, tables.buckets, static_cast<double>(tables.m) * static_cast<double>(tables.p));
  if (!usable_) return;
  sketches_.resize(sketches.size());
  std::transform(sketches.begin(), sketches.end(), sketches_.begin(), [](double c) { return static_cast<float>(c); });
  words_.resize(static_cast<std::size_t>(d_) * static_cast<std::size_t>(cols_));
  for (int t = 0; t < d_; ++t)
    for (std::int64_t j = 0; j < cols_; ++j)
      words_[static_cast<std::size_t>(t * cols_ + j)] = tables.h2(t, j) | (tables.s2(t, j) < 0 ? kSign : 0u);
}

void FloatMedians::reaching(std::int64_t i, float bound, std::vector<std::int64_t>& out) const {
  Rep reps[3];
  for (int t = 0; t < d_; ++t)
    reps[t] = Rep{sketches_.data() + static_cast<std::size_t>(t) * static_cast<std::size_t>(tables_.buckets),
                  tables_.h1(t, i) | (tables_.s1(t, i) < 0 ? kSign : 0u), words_.data() + static_cast<std::size_t>(t * cols_)};
  out.clear();
#if defined(__x86_64__)
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx2) return reaching_avx2(reps, d_, cols_, bound, out);
#endif
  reaching_scalar(reps, d_, 0, cols_, bound, out);
}

}  // namespace pagh::detail
