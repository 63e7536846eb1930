// The linear hash family of bench/linear_hash_prototype.cpp (issue 26's proposal; bench-only, not
// library code): h(i) = M pi(i) XOR c per side and repetition, its tables written out as pagh's, the
// time-domain oracle, and the change of coordinates that lets the factored path run without a gather.
#pragma once

#include <Eigen/Dense>
#include <algorithm>
#include <bit>
#include <cstdint>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

#include "sketch/hashing.hpp"

namespace linear_hash {

inline int log2_ceil(std::int64_t n) { return n <= 1 ? 0 : 64 - std::countl_zero(static_cast<std::uint64_t>(n - 1)); }

// ---- the family -------------------------------------------------------------------------------

// One side of one repetition: h(i) = M pi(i) XOR c, s(i) = sign[i].
struct LinearSide {
  int L = 0, Lp = 0;                  // log2 b, log2 n'
  std::vector<std::uint32_t> column;  // column[q] = M e_q, an L-bit word, q < Lp
  std::vector<std::uint32_t> pi;      // pi[i] < n', i < m (the first m of a permutation of [n'])
  std::uint32_t c = 0;
  std::vector<double> sign;  // +-1, i < m

  std::uint32_t apply_M(std::uint32_t x) const {
    std::uint32_t y = 0;
    for (int q = 0; q < Lp; ++q)
      if ((x >> q) & 1u) y ^= column[static_cast<std::size_t>(q)];
    return y;
  }
  std::uint32_t bucket(std::int64_t i) const { return apply_M(pi[static_cast<std::size_t>(i)]) ^ c; }
  // g(e_bit) = M^T e_bit: row `bit` of M as an Lp-bit word.
  std::uint32_t transpose_row(int bit) const {
    std::uint32_t r = 0;
    for (int q = 0; q < Lp; ++q) r |= ((column[static_cast<std::size_t>(q)] >> bit) & 1u) << q;
    return r;
  }
};

inline int gf2_rank(std::vector<std::uint32_t> words) {
  int rank = 0;
  for (int bit = 31; bit >= 0; --bit) {
    auto pivot = std::find_if(words.begin(), words.end(), [bit](std::uint32_t w) { return (w >> bit) & 1u; });
    if (pivot == words.end()) continue;
    const std::uint32_t p = *pivot;
    words.erase(pivot);
    for (auto& w : words)
      if ((w >> bit) & 1u) w ^= p;
    ++rank;
  }
  return rank;
}

enum class Variant { linear, injective, identity_pi, shared_pi };
inline const char* variant_name(Variant v) {
  switch (v) {
    case Variant::linear: return "linear";
    case Variant::injective: return "linear_injective";
    case Variant::identity_pi: return "linear_no_pi";
    case Variant::shared_pi: return "linear_shared_pi";
  }
  return "?";
}

inline LinearSide draw_side(std::mt19937_64& rng, std::int64_t m, int L, Variant variant, const std::vector<std::uint32_t>* shared_pi) {
  LinearSide s;
  s.L = L;
  s.Lp = log2_ceil(m);
  std::uniform_int_distribution<std::uint32_t> word(0, (L == 32 ? 0xFFFFFFFFu : (1u << L) - 1));
  do {
    s.column.assign(static_cast<std::size_t>(s.Lp), 0);
    for (auto& col : s.column) col = word(rng);
  } while (variant == Variant::injective && gf2_rank(s.column) < s.Lp);
  s.c = word(rng);
  if (shared_pi) {
    s.pi = *shared_pi;
  } else {
    std::vector<std::uint32_t> perm(std::size_t{1} << s.Lp);
    std::iota(perm.begin(), perm.end(), 0u);
    if (variant != Variant::identity_pi) std::shuffle(perm.begin(), perm.end(), rng);
    s.pi.assign(perm.begin(), perm.begin() + m);
  }
  s.sign.resize(static_cast<std::size_t>(m));
  for (auto& x : s.sign) x = (rng() >> 63) ? -1.0 : 1.0;
  return s;
}

struct LinearTables {
  std::int64_t m = 0, p = 0, b = 0;
  std::vector<LinearSide> a, bside;  // per repetition
};

inline LinearTables draw_linear(std::uint64_t seed, int d, std::int64_t m, std::int64_t p, std::int64_t b, Variant variant) {
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(variant));
  LinearTables t{.m = m, .p = p, .b = b, .a = {}, .bside = {}};
  const int L = log2_ceil(b);
  for (int r = 0; r < d; ++r) {
    t.a.push_back(draw_side(rng, m, L, variant, nullptr));
    t.bside.push_back(draw_side(rng, p, L, variant, variant == Variant::shared_pi ? &t.a.back().pi : nullptr));
  }
  return t;
}

// The family written out as pagh's tables: what the oracle, the estimator and NoiseModel read.
inline pagh::HashTables tabulate(const LinearTables& lt) {
  const int d = static_cast<int>(lt.a.size());
  pagh::HashTables h{.m = lt.m, .p = lt.p, .buckets = lt.b, .repetitions = d, .bucket_a = {}, .bucket_b = {}, .sign_a = {}, .sign_b = {}};
  for (int t = 0; t < d; ++t) {
    for (std::int64_t i = 0; i < lt.m; ++i) {
      h.bucket_a.push_back(lt.a[static_cast<std::size_t>(t)].bucket(i));
      h.sign_a.push_back(static_cast<std::int8_t>(lt.a[static_cast<std::size_t>(t)].sign[static_cast<std::size_t>(i)]));
    }
    for (std::int64_t j = 0; j < lt.p; ++j) {
      h.bucket_b.push_back(lt.bside[static_cast<std::size_t>(t)].bucket(j));
      h.sign_b.push_back(static_cast<std::int8_t>(lt.bside[static_cast<std::size_t>(t)].sign[static_cast<std::size_t>(j)]));
    }
  }
  return h;
}

// The slow oracle: every entry of C added to its bucket in the time domain, term by term.
inline std::vector<double> time_domain_sketch(const Eigen::MatrixXd& C, const pagh::HashTables& h) {
  const std::int64_t b = h.buckets;
  std::vector<double> c(static_cast<std::size_t>(h.repetitions * b), 0.0);
  for (int t = 0; t < h.repetitions; ++t) {
    double* ct = c.data() + t * b;
    for (std::int64_t j = 0; j < C.cols(); ++j) {
      const std::uint32_t hj = h.h2(t, j);
      const double sj = h.s2(t, j);
      for (std::int64_t i = 0; i < C.rows(); ++i) ct[h.h1(t, i) ^ hj] += (h.s1(t, i) * sj) * C(i, j);
    }
  }
  return c;
}

// g(w) = M^T w = hi[w >> l] ^ lo[w & (2^l - 1)].
struct GatherTable {
  int l = 0;
  std::vector<std::uint32_t> lo, hi;
};
inline GatherTable gather_table(const LinearSide& s) {
  GatherTable g;
  g.l = std::min(s.L, 8);
  std::vector<std::uint32_t> row(static_cast<std::size_t>(s.L));
  for (int bit = 0; bit < s.L; ++bit) row[static_cast<std::size_t>(bit)] = s.transpose_row(bit);
  auto span_of = [&](int first_bit, int bits) {
    std::vector<std::uint32_t> v(std::size_t{1} << bits, 0);
    for (std::size_t u = 1; u < v.size(); ++u) v[u] = v[u & (u - 1)] ^ row[static_cast<std::size_t>(first_bit + std::countr_zero(u))];
    return v;
  };
  g.lo = span_of(0, g.l);
  g.hi = span_of(g.l, s.L - g.l);
  return g;
}

// ---- the factored path in coordinates of its own (no gather per k) ----------------------------
//
// With M1 and M2 injective (b >= n'), g1 = M1^T is onto F^Lp and its kernel has dimension L - Lp.
// Write w = T w' with w' = x | y << Lp: T e_q = s(e_q) for q < Lp (s a linear section of g1:
// g1 s = id) and T e_(Lp+i) = kappa_i (a basis of ker g1). Then g1(T w') = x and g2(T w') = A x ^ B y
// with A = g2 s, B y = g2(kappa(y)). For an invertible A (s chosen so: the sections differ by maps
// into ker g1, and about a third of them give one),
//   Zb[A x ^ B y] = Zb'[x ^ gamma_y],  gamma_y = A^-1 B y,  Zb' = H zb'',  zb''[A^T pi2(j)] = s2(j) b_j,
// so Q'[w'] = Q[T w'] accumulates Za[x] Zb'[x ^ gamma_y]: 2^(L-Lp) XOR-shifted products of two
// length-n' spectra, every load contiguous. The output: (H Q)[h] = (H Q')[T^T h], so
// c_t[h] = (H Q')[T^T (h ^ c1 ^ c2)] / b, one index map per repetition at the end.

inline std::uint32_t apply_transpose(const std::vector<std::uint32_t>& columns, std::uint32_t w) {
  std::uint32_t r = 0;
  for (std::size_t q = 0; q < columns.size(); ++q) r |= static_cast<std::uint32_t>(std::popcount(columns[q] & w) & 1) << q;
  return r;
}
inline std::uint32_t apply_columns(const std::vector<std::uint32_t>& columns, std::uint32_t x) {
  std::uint32_t y = 0;
  for (std::size_t q = 0; q < columns.size(); ++q)
    if ((x >> q) & 1u) y ^= columns[q];
  return y;
}

struct ShiftedRepetition {
  int Lp = 0, L = 0;
  std::vector<std::uint32_t> perm_a, perm_b;  // where a's and b's line entries go (pi1, A^T pi2)
  std::vector<double> sign_a, sign_b;
  std::vector<std::uint32_t> gamma;  // 2^(L-Lp) shifts
  GatherTable out;                   // T^T h
  std::uint32_t out_shift = 0;       // T^T (c1 ^ c2)
};

inline ShiftedRepetition shifted_repetition(const LinearSide& sa, const LinearSide& sb, std::uint64_t seed) {
  if (sa.Lp != sb.Lp || sa.L < sa.Lp || gf2_rank(sa.column) < sa.Lp || gf2_rank(sb.column) < sb.Lp)
    throw std::runtime_error("shifted path: needs m' = p' <= b and injective M1, M2 (Variant::injective)");
  const int L = sa.L, Lp = sa.Lp;
  // Reduced row echelon form of g1's rows (the columns of M1), with the combination of rows each holds.
  std::vector<std::uint32_t> row(sa.column), comb(static_cast<std::size_t>(Lp));
  std::vector<int> pivot(static_cast<std::size_t>(Lp), -1);
  for (int q = 0; q < Lp; ++q) comb[static_cast<std::size_t>(q)] = 1u << q;
  int r = 0;
  for (int bit = 0; bit < L && r < Lp; ++bit) {
    int at = -1;
    for (int k = r; k < Lp; ++k)
      if ((row[static_cast<std::size_t>(k)] >> bit) & 1u) at = k;
    if (at < 0) continue;
    std::swap(row[static_cast<std::size_t>(r)], row[static_cast<std::size_t>(at)]);
    std::swap(comb[static_cast<std::size_t>(r)], comb[static_cast<std::size_t>(at)]);
    for (int k = 0; k < Lp; ++k)
      if (k != r && ((row[static_cast<std::size_t>(k)] >> bit) & 1u))
        row[static_cast<std::size_t>(k)] ^= row[static_cast<std::size_t>(r)], comb[static_cast<std::size_t>(k)] ^= comb[static_cast<std::size_t>(r)];
    pivot[static_cast<std::size_t>(r++)] = bit;
  }
  std::vector<std::uint32_t> section(static_cast<std::size_t>(Lp), 0), kernel;
  for (int q = 0; q < Lp; ++q)
    for (int k = 0; k < Lp; ++k)
      if ((comb[static_cast<std::size_t>(k)] >> q) & 1u) section[static_cast<std::size_t>(q)] |= 1u << pivot[static_cast<std::size_t>(k)];
  for (int bit = 0; bit < L; ++bit) {
    if (std::find(pivot.begin(), pivot.end(), bit) != pivot.end()) continue;
    std::uint32_t kappa = 1u << bit;
    for (int k = 0; k < Lp; ++k)
      if ((row[static_cast<std::size_t>(k)] >> bit) & 1u) kappa |= 1u << pivot[static_cast<std::size_t>(k)];
    kernel.push_back(kappa);
  }
  std::mt19937_64 rng(seed);
  std::vector<std::uint32_t> A(static_cast<std::size_t>(Lp)), s(section);
  for (int attempt = 0;; ++attempt) {
    if (attempt == 10000) throw std::runtime_error("shifted path: no invertible A found");
    for (int q = 0; q < Lp; ++q) {
      s[static_cast<std::size_t>(q)] = section[static_cast<std::size_t>(q)] ^ (attempt == 0 ? 0u : apply_columns(kernel, static_cast<std::uint32_t>(rng())));
      A[static_cast<std::size_t>(q)] = apply_transpose(sb.column, s[static_cast<std::size_t>(q)]);
    }
    if (gf2_rank(A) == Lp) break;
  }
  ShiftedRepetition rep;
  rep.L = L, rep.Lp = Lp;
  const std::size_t np = std::size_t{1} << Lp;
  std::vector<std::uint32_t> inverse(np);
  for (std::uint32_t x = 0; x < np; ++x) inverse[apply_columns(A, x)] = x;
  for (std::uint32_t y = 0; y < (1u << (L - Lp)); ++y) rep.gamma.push_back(inverse[apply_transpose(sb.column, apply_columns(kernel, y))]);
  rep.perm_a = sa.pi, rep.sign_a = sa.sign, rep.sign_b = sb.sign;
  for (std::uint32_t p : sb.pi) rep.perm_b.push_back(apply_transpose(A, p));
  LinearSide T;  // T's columns, read through gather_table as an L x L matrix
  T.L = L, T.Lp = L, T.column = s;
  T.column.insert(T.column.end(), kernel.begin(), kernel.end());
  rep.out = gather_table(T);
  rep.out_shift = apply_transpose(T.column, sa.c ^ sb.c);
  return rep;
}

}  // namespace linear_hash
