// linear_hash_prototype: a bench-only prototype for issue 26's proposal of a linear hash family for
// the dense CPU sketch. Not library code: nothing here is used by pagh.
//
//   linear_hash_prototype speed [--n 1024,2048,4096] [--d 1,3] [--threads 1,2] [--rounds 7] [--precision f64|f32]
//   linear_hash_prototype stats [--n 1024] [--seeds 200]
//
// The family: h(i) = M pi(i) XOR c over GF(2), M a uniformly random log2(b) x log2(n') bit matrix,
// pi a random permutation of [n'] (n' = 2^ceil(log2 n)), c a random log2(b)-bit word; the signs stay
// fully random tables. Then for a line x[h(i)] += s(i) a_i,
//   (H x)[w] = (-1)^<w,c> (H_n' z)[M^T w],   z[pi(i)] = s(i) a_i,
// so one k costs a permuted store of n values, one FWHT of length n' per side and a gather of b
// values at g(w) = M^T w (linear: g(w) = hi[w >> l] XOR lo[w & (2^l - 1)]), instead of a scatter
// into b and a FWHT of length b per side. The signs (-1)^<w, c1 XOR c2> of both sides multiply the
// spectrum P_t as a whole, and H (sigma_c P) is H P with its index XORed by c: c_t[h] = (H Q_t)[h ^ c] / b.
//
// speed: dense Gaussian f64 A (n x n, column-major) and B (row-major), b = 8n; the factored path
// (threads over contiguous ranges of k, each with its own Q, summed in thread order, one inverse
// per repetition) and pagh::compress_values with tables drawn before the clock starts, interleaved
// in one process, fresh seed per round. Before timing, the factored sketch is checked against the
// slow oracle: the time-domain sketch c_t[h1(i) ^ h2(j)] += s1(i) s2(j) (AB)_ij from the tabulated
// h, relative L2 difference at rounding level (exit 70 otherwise).
//
// stats: products with fixed inputs, the hash families drawn from many fixed seeds; each sketch is
// the time-domain sketch of the exact C (equal to the factored one up to rounding: the speed check),
// put in a pagh::CompressedProduct with the family's tables written out, so that pagh's estimator,
// NoiseModel intervals and top_k read it as they read their own.
#include <omp.h>
#include <time.h>

#include <Eigen/Dense>
#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "fwht/fwht.hpp"
#include "linear_hash_family.hpp"
#include "bench_cli.hpp"
#include "sketch/compress.hpp"
#include "sketch/compress_values.hpp"
#include "sketch/noise_model.hpp"

#pragma GCC optimize("fp-contract=off")

namespace {

using bench_cli::cpu_ms;
using bench_cli::median;
using bench_cli::now_ms;
using bench_cli::parse_list;
using bench_cli::usage_error;

using namespace linear_hash;

constexpr const char* kUsage =
    "usage: linear_hash_prototype speed [--n N,...] [--d D,...] [--threads T,...] [--rounds R] [--precision f64|f32]\n"
    "       linear_hash_prototype stats [--n N] [--d D] [--seeds S]\n";

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  const auto at = static_cast<std::ptrdiff_t>(std::min<double>(static_cast<double>(v.size()) - 1, q * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + at, v.end());
  return v[static_cast<std::size_t>(at)];
}

// ---- the factored path ------------------------------------------------------------------------

// Q[w] += za[g1(w)] * zb[g2(w)] for w < b: the product of the two lines' spectra, signs left out.
template <class T>
inline void gather_mac_loop(T* __restrict Q, const T* __restrict za, const T* __restrict zb, const GatherTable& g1, const GatherTable& g2) {
  const std::int64_t block = std::int64_t{1} << g1.l;
  const std::uint32_t* lo1 = g1.lo.data();
  const std::uint32_t* lo2 = g2.lo.data();
  for (std::size_t v = 0; v < g1.hi.size(); ++v) {
    const std::uint32_t b1 = g1.hi[v], b2 = g2.hi[v];
    T* q = Q + static_cast<std::int64_t>(v) * block;
    for (std::int64_t u = 0; u < block; ++u) q[u] += za[b1 ^ lo1[u]] * zb[b2 ^ lo2[u]];
  }
}
__attribute__((target_clones("avx2", "default"))) void gather_multiply_accumulate(double* Q, const double* za, const double* zb, const GatherTable& g1,
                                                                                   const GatherTable& g2) {
  gather_mac_loop(Q, za, zb, g1, g2);
}
__attribute__((target_clones("avx2", "default"))) void gather_multiply_accumulate(float* Q, const float* za, const float* zb, const GatherTable& g1,
                                                                                   const GatherTable& g2) {
  gather_mac_loop(Q, za, zb, g1, g2);
}

template <class T>
using ColMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;
template <class T>
using RowMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

struct FactoredTimes {
  double per_k_ms = 0, fold_inverse_ms = 0;
};

// Where each side's line goes: z[perm[i]] = sign[i] * line[i] (perm injective into [n']).
struct LineMaps {
  const std::uint32_t *perm_a, *perm_b;
  const double *sign_a, *sign_b;
};

// What both factored paths do: the d time-domain sketches of A B (A column-major m x K, B row-major
// K x p) with threads over contiguous ranges of k, each with its own Q (d x b); per k and repetition
// both lines stored through their maps into vectors of na and nb, transformed (FWHT), and
// product(Q_t, za, zb, t) adds their product; then the sums in thread order, one inverse per
// repetition and c_t[h] = (H Q_t / b)[out_index(t, h)].
template <class T, class Maps, class Product, class OutIndex>
std::vector<double> factored_sketch(const ColMatrix<T>& A, const RowMatrix<T>& B, std::int64_t b, int d, std::int64_t na,
                                    std::int64_t nb, int threads, Maps&& maps, Product&& product, OutIndex&& out_index, double start,
                                    FactoredTimes* times) {
  const std::int64_t m = A.rows(), K = A.cols(), p = B.cols();
  std::vector<std::vector<T>> Q(static_cast<std::size_t>(threads));
#pragma omp parallel num_threads(threads)
  {
    const int me = omp_get_thread_num();
    const std::int64_t k0 = K * me / threads, k1 = K * (me + 1) / threads;
    std::vector<T>& q = Q[static_cast<std::size_t>(me)];
    q.assign(static_cast<std::size_t>(d * b), T(0));
    std::vector<T> za(static_cast<std::size_t>(na), T(0)), zb(static_cast<std::size_t>(nb), T(0));
    fwht::Plan plan_a({.n = na}, fwht::dtype_of<T>(), {.threads = 1}), plan_b({.n = nb}, fwht::dtype_of<T>(), {.threads = 1});
    for (std::int64_t k = k0; k < k1; ++k) {
      const T* a = A.data() + k * m;
      const T* brow = B.data() + k * p;
      for (int t = 0; t < d; ++t) {
        const LineMaps map = maps(t);
        if (m < na) std::fill(za.begin(), za.end(), T(0));
        if (p < nb) std::fill(zb.begin(), zb.end(), T(0));
        for (std::int64_t i = 0; i < m; ++i) za[map.perm_a[i]] = static_cast<T>(map.sign_a[i]) * a[i];
        for (std::int64_t j = 0; j < p; ++j) zb[map.perm_b[j]] = static_cast<T>(map.sign_b[j]) * brow[j];
        plan_a.execute(za.data(), za.data());
        plan_b.execute(zb.data(), zb.data());
        product(q.data() + t * b, za.data(), zb.data(), t);
      }
    }
  }
  const double sketched = now_ms();
  std::vector<T>& total = Q[0];
  for (int r = 1; r < threads; ++r) {
    const T* add = Q[static_cast<std::size_t>(r)].data();
    for (std::size_t h = 0; h < total.size(); ++h) total[h] += add[h];
  }
  fwht::Plan inverse({.n = b, .batch = d}, fwht::dtype_of<T>(), {.normalization = fwht::Normalization::inverse, .threads = threads});
  inverse.execute(total.data(), total.data());
  std::vector<double> out(static_cast<std::size_t>(d * b));
  for (int t = 0; t < d; ++t)
    for (std::int64_t h = 0; h < b; ++h) out[static_cast<std::size_t>(t * b + h)] = total[static_cast<std::size_t>(t * b) + out_index(t, static_cast<std::uint32_t>(h))];
  if (times) times->per_k_ms = sketched - start, times->fold_inverse_ms = now_ms() - sketched;
  return out;
}

// As proposed: a gather of b values at g1(w), g2(w) per k; c_t[h] = (H Q_t)[h ^ c1 ^ c2] / b.
template <class T>
std::vector<double> gather_sketch(const ColMatrix<T>& A, const RowMatrix<T>& B, const LinearTables& lt, int threads, FactoredTimes* times) {
  const double start = now_ms();
  const int d = static_cast<int>(lt.a.size());
  std::vector<GatherTable> ga, gb;
  for (int t = 0; t < d; ++t) ga.push_back(gather_table(lt.a[static_cast<std::size_t>(t)])), gb.push_back(gather_table(lt.bside[static_cast<std::size_t>(t)]));
  const auto side = [&](int t) -> const LinearSide& { return lt.a[static_cast<std::size_t>(t)]; };
  const auto bside = [&](int t) -> const LinearSide& { return lt.bside[static_cast<std::size_t>(t)]; };
  return factored_sketch(
      A, B, lt.b, d, std::int64_t{1} << log2_ceil(A.rows()), std::int64_t{1} << log2_ceil(B.cols()), threads,
      [&](int t) { return LineMaps{side(t).pi.data(), bside(t).pi.data(), side(t).sign.data(), bside(t).sign.data()}; },
      [&](T* q, const T* za, const T* zb, int t) {
        gather_multiply_accumulate(q, za, zb, ga[static_cast<std::size_t>(t)], gb[static_cast<std::size_t>(t)]);
      },
      [&](int t, std::uint32_t h) { return h ^ side(t).c ^ bside(t).c; }, start, times);
}

// q[x] += za[x] * zb[x ^ shift] for x < n (n a multiple of the lanes): contiguous loads, the low bits
// of the shift a fixed permutation of each 32-byte vector (one vpermpd / vpermps in the AVX2 clone).
// (Always inlined into the target clones, which pass the vectors in AVX registers.)
#pragma GCC diagnostic ignored "-Wpsabi"
template <class T, unsigned G>
__attribute__((always_inline)) inline void shifted_mac(T* __restrict q, const T* __restrict za, const T* __restrict zb, std::int64_t n,
                                                       std::uint32_t high) {
  constexpr int lanes = 32 / sizeof(T);
  typedef T Vec __attribute__((vector_size(32)));
  using Index = std::conditional_t<sizeof(T) == 8, long long, int>;
  typedef Index Mask __attribute__((vector_size(32)));
  if constexpr (G >= lanes) {
    __builtin_unreachable();
  } else {
    for (std::int64_t x = 0; x < n; x += lanes) {
      Vec z, a, acc;
      std::memcpy(&z, zb + (static_cast<std::uint32_t>(x) ^ high), sizeof z);
      std::memcpy(&a, za + x, sizeof a);
      std::memcpy(&acc, q + x, sizeof acc);
      if constexpr (G != 0) {
        if constexpr (lanes == 4)
          z = __builtin_shuffle(z, Mask{G, 1 ^ G, 2 ^ G, 3 ^ G});
        else
          z = __builtin_shuffle(z, Mask{G, 1 ^ G, 2 ^ G, 3 ^ G, 4 ^ G, 5 ^ G, 6 ^ G, 7 ^ G});
      }
      acc += a * z;
      std::memcpy(q + x, &acc, sizeof acc);
    }
  }
}
template <class T>
__attribute__((always_inline)) inline void shifted_products_loop(T* q, const T* za, const T* zb, std::int64_t n, const std::vector<std::uint32_t>& gamma) {
  constexpr std::uint32_t lanes = 32 / sizeof(T);
  for (std::size_t y = 0; y < gamma.size(); ++y) {
    T* qy = q + static_cast<std::int64_t>(y) * n;
    const std::uint32_t high = gamma[y] & ~(lanes - 1);
    switch (gamma[y] & (lanes - 1)) {
      case 0: shifted_mac<T, 0>(qy, za, zb, n, high); break;
      case 1: shifted_mac<T, 1>(qy, za, zb, n, high); break;
      case 2: shifted_mac<T, 2>(qy, za, zb, n, high); break;
      case 3: shifted_mac<T, 3>(qy, za, zb, n, high); break;
      case 4: shifted_mac<T, 4>(qy, za, zb, n, high); break;
      case 5: shifted_mac<T, 5>(qy, za, zb, n, high); break;
      case 6: shifted_mac<T, 6>(qy, za, zb, n, high); break;
      default: shifted_mac<T, 7>(qy, za, zb, n, high); break;
    }
  }
}
__attribute__((target_clones("avx2", "default"))) void shifted_products(double* q, const double* za, const double* zb, std::int64_t n,
                                                                         const std::vector<std::uint32_t>& gamma) {
  shifted_products_loop(q, za, zb, n, gamma);
}
__attribute__((target_clones("avx2", "default"))) void shifted_products(float* q, const float* za, const float* zb, std::int64_t n,
                                                                         const std::vector<std::uint32_t>& gamma) {
  shifted_products_loop(q, za, zb, n, gamma);
}

template <class T>
std::vector<double> shifted_sketch(const ColMatrix<T>& A, const RowMatrix<T>& B, const LinearTables& lt, int threads, FactoredTimes* times) {
  const double start = now_ms();
  const int d = static_cast<int>(lt.a.size());
  std::vector<ShiftedRepetition> reps;
  for (int t = 0; t < d; ++t) reps.push_back(shifted_repetition(lt.a[static_cast<std::size_t>(t)], lt.bside[static_cast<std::size_t>(t)], 77 + static_cast<std::uint64_t>(t)));
  const std::int64_t np = std::int64_t{1} << reps[0].Lp;
  if (np < 8) throw std::runtime_error("shifted path: n' < 8");
  const auto rep = [&](int t) -> const ShiftedRepetition& { return reps[static_cast<std::size_t>(t)]; };
  return factored_sketch(
      A, B, lt.b, d, np, np, threads, [&](int t) { return LineMaps{rep(t).perm_a.data(), rep(t).perm_b.data(), rep(t).sign_a.data(), rep(t).sign_b.data()}; },
      [&](T* q, const T* za, const T* zb, int t) { shifted_products(q, za, zb, np, rep(t).gamma); },
      [&](int t, std::uint32_t h) {
        const GatherTable& o = rep(t).out;
        return o.hi[h >> o.l] ^ o.lo[h & ((1u << o.l) - 1)] ^ rep(t).out_shift;
      },
      start, times);
}

// ---- speed ------------------------------------------------------------------------------------

double relative_difference(const std::vector<double>& x, const std::vector<double>& y) {
  double diff = 0, norm = 0;
  for (std::size_t h = 0; h < x.size(); ++h) diff += (x[h] - y[h]) * (x[h] - y[h]), norm += y[h] * y[h];
  return std::sqrt(diff / norm);
}

// Three ways per round, who goes first rotating: the shifted path, the gather path (both with the
// same injective linear tables) and pagh's engine (its own random tables, drawn before the clock), all
// with storage T (f64: accumulation in f64; f32: in f32, as the engine accumulates).
template <class T>
void speed(const std::vector<int>& ns, const std::vector<int>& ds, const std::vector<int>& thread_counts, int rounds) {
  // The oracle's tolerance: the rounding of the storage type (a wrong factorisation differs by O(1)).
  const double tolerance = sizeof(T) == 8 ? 1e-12 : 1e-4;
  std::printf("# storage %s\n", sizeof(T) == 8 ? "f64" : "f32");
  std::printf("%5s %6s %2s %3s | %8s %8s %8s | %8s %8s %8s | %7s %7s | %7s %7s | %8s %8s %8s %6s\n", "n", "b", "d", "thr", "shift_ms", "gathr_ms",
              "pagh_ms", "shift_cp", "gathr_cp", "pagh_cp", "sh/pagh", "ga/pagh", "sh_prd", "ga_prd", "sh_perk", "ga_perk", "pagh_sk", "sh_inv");
  for (int n : ns) {
    std::mt19937_64 rng(20261126 + static_cast<unsigned>(n));
    std::normal_distribution<double> normal;
    ColMatrix<T> A(n, n);
    RowMatrix<T> B(n, n);
    for (Eigen::Index i = 0; i < A.size(); ++i) A.data()[i] = static_cast<T>(normal(rng));
    for (Eigen::Index i = 0; i < B.size(); ++i) B.data()[i] = static_cast<T>(normal(rng));
    const std::int64_t b = 8 * std::int64_t{n};
    {  // both factorisations against the slow oracle, every repetition of the largest d, 1 and 2 threads
      const Eigen::MatrixXd C = A.template cast<double>() * B.template cast<double>();
      const int d = *std::max_element(ds.begin(), ds.end());
      const LinearTables lt = draw_linear(7, d, n, n, b, Variant::injective);
      const std::vector<double> slow = time_domain_sketch(C, tabulate(lt));
      const double rel[] = {relative_difference(shifted_sketch(A, B, lt, 1, nullptr), slow), relative_difference(shifted_sketch(A, B, lt, 2, nullptr), slow),
                            relative_difference(gather_sketch(A, B, lt, 1, nullptr), slow), relative_difference(gather_sketch(A, B, lt, 2, nullptr), slow)};
      std::printf("# n %d d %d: against the time-domain oracle, relative L2 difference: shifted %.3g (1 thread) %.3g (2), gather %.3g %.3g\n", n, d,
                  rel[0], rel[1], rel[2], rel[3]);
      for (double x : rel)
        if (!(x < tolerance)) {
          std::fprintf(stderr, "linear_hash_prototype: n %d: a factored sketch differs from the oracle (%.3g)\n", n, x);
          std::exit(70);
        }
    }
    for (int d : ds)
      for (int threads : thread_counts) {
        std::vector<double> ms[3], cpu[3], perk[2], pagh_sk, inv, ratio[2];
        for (int r = 0; r < rounds; ++r) {
          const std::uint64_t seed = 1000 + static_cast<std::uint64_t>(r);
          const LinearTables lt = draw_linear(seed, d, n, n, b, Variant::injective);
          const pagh::HashTables tables = pagh::draw_hash_tables(seed, d, n, n, b);
          double c[3] = {0, 0, 0};
          for (int slot = 0; slot < 3; ++slot) {
            const int which = (slot + r) % 3;
            FactoredTimes ft;
            pagh::HashTables copy = tables;
            const pagh::SketchParams params{.buckets = b, .repetitions = d, .seed = seed, .precision = fwht::dtype_of<T>(), .threads = threads};
            const double w0 = now_ms(), c0 = cpu_ms();
            if (which == 0) {
              shifted_sketch(A, B, lt, threads, &ft);
            } else if (which == 1) {
              gather_sketch(A, B, lt, threads, &ft);
            } else {
              pagh_sk.push_back(pagh::compress_values(A, B, params, std::move(copy)).timings.sketching_ms);
            }
            ms[which].push_back(now_ms() - w0), c[which] = cpu_ms() - c0, cpu[which].push_back(c[which]);
            if (which < 2) perk[which].push_back(ft.per_k_ms);
            if (which == 0) inv.push_back(ft.fold_inverse_ms);
          }
          ratio[0].push_back(c[0] / c[2]), ratio[1].push_back(c[1] / c[2]);
        }
        std::printf("%5d %6lld %2d %3d | %8.2f %8.2f %8.2f | %8.2f %8.2f %8.2f | %7.3f %7.3f | %7.3f %7.3f | %8.2f %8.2f %8.2f %6.2f\n", n,
                    static_cast<long long>(b), d, threads, median(ms[0]), median(ms[1]), median(ms[2]), median(cpu[0]), median(cpu[1]), median(cpu[2]),
                    median(ms[0]) / median(ms[2]), median(ms[1]) / median(ms[2]), median(ratio[0]), median(ratio[1]), median(perk[0]), median(perk[1]),
                    median(pagh_sk), median(inv));
        std::fflush(stdout);
      }
  }
}

// ---- stats ------------------------------------------------------------------------------------

struct Product {
  std::string name;
  Eigen::MatrixXd C;
  int large = 0;  // its large entries (the |C| largest): the set whose collisions with each other are counted
};

// Fixed inputs (the hash seeds vary): a dense Gaussian product; the Gram matrix X^T X of a Gaussian X
// (diagonal ~n, off-diagonal ~sqrt(n): the covariance-like case, top entries on the diagonal); and
// N(0,1) entries with two rank-1 sign blocks of 16 x 16 on index sets that are GF(2) subspaces or
// their cosets (rows 0..15 x columns j = 0 mod n/16; rows n/2..n/2+15 x columns n/4..n/4+15),
// whose 512 entries carry as much energy as the rest (3 sigma each); and those shapes at 4 x 4, 8 sigma.
std::vector<Product> make_products(int n) {
  std::mt19937_64 rng(4242 + static_cast<unsigned>(n));
  std::normal_distribution<double> normal;
  auto gaussian = [&](int rows, int cols) {
    Eigen::MatrixXd M(rows, cols);
    for (Eigen::Index i = 0; i < M.size(); ++i) M.data()[i] = normal(rng);
    return M;
  };
  std::vector<Product> products;
  {
    const Eigen::MatrixXd A = gaussian(n, n), B = gaussian(n, n);
    products.push_back({"gaussian", A * B, 512});
  }
  {
    const Eigen::MatrixXd X = gaussian(n, n);
    products.push_back({"gram", X.transpose() * X, n});  // the diagonal
  }
  {
    Eigen::MatrixXd C = gaussian(n, n);
    const double v = n * std::sqrt(1.0 / 512);
    auto sign = [&] { return (rng() >> 63) ? -1.0 : 1.0; };
    for (int r = 0; r < 16; ++r)
      for (int s = 0; s < 16; ++s) C(r, s * (n / 16)) = v * sign(), C(n / 2 + r, n / 4 + s) = v * sign();
    products.push_back({"blocks", C, 512});  // the blocks
  }
  {  // the same shapes at 4 x 4 (rows 0..3 x columns 0, n/4, n/2, 3n/4; rows n/2.. x columns n/4..), 8 sigma each at
     // n = 1024 (8 sqrt(n / 1024) sigma):
     // 32 entries that stand out, so that top_k's recall means something
    Eigen::MatrixXd C = gaussian(n, n);
    const double v = 8 * n / std::sqrt(6144.0);
    auto sign = [&] { return (rng() >> 63) ? -1.0 : 1.0; };
    for (int r = 0; r < 4; ++r)
      for (int s = 0; s < 4; ++s) C(r, s * (n / 4)) = v * sign(), C(n / 2 + r, n / 4 + s) = v * sign();
    products.push_back({"planted", C, 32});
  }
  return products;
}

struct Accumulated {
  std::vector<double> rand_single, rand_median, top_single, top_median, worst_top;
  std::vector<double> top_med_ms_per_seed;  // mean squared median error of the top entries, per seed
  std::int64_t rand_covered = 0, rand_count = 0, top_covered = 0, top_count = 0;
  double recall = 0;
  std::vector<double> pairs;  // per repetition
  int deficient = 0, repetitions = 0;
};

void stats(int n, int d, int seeds) {
  const std::int64_t b = 8 * std::int64_t{n};
  constexpr int kTop = 32, kRandom = 1000;
  const Variant variants[] = {Variant::linear, Variant::linear, Variant::injective, Variant::identity_pi, Variant::shared_pi};
  const std::size_t families = std::size(variants);  // 0: pagh's random tables
  std::printf("# n %d, b %lld, d %d, %d seeds; errors in units of sigma = ||C||_F / sqrt(b); top = the exact %d largest |C_ij|; "
              "rand = %d uniform entries per seed;\n# pairs = pairs of the product's large entries sharing a bucket, per repetition: "
              "mean, variance / mean, max\n",
              n, static_cast<long long>(b), d, seeds, kTop, kRandom);
  std::printf("%-8s %-17s %8s %8s %8s %8s %8s %7s | %8s %8s %8s %8s %7s | %8s %8s %8s %7s %7s | %7s %7s %8s\n", "product", "family", "rnd1_rms", "rnd1_p99",
              "rnd1_p999", "rndm_rms", "rndm_p99", "rnd_cov", "top1_rms", "top1_p99", "topm_rms", "topm_se", "top_cov", "worst_med",
              "worst_p99", "worst_max", "recall", "deficit", "pairs", "pair_vm", "pair_max");
  for (const Product& product : make_products(n)) {
    const Eigen::MatrixXd& C = product.C;
    const double sigma = C.norm() / std::sqrt(static_cast<double>(b));
    std::vector<std::pair<std::int64_t, std::int64_t>> top;
    {
      std::vector<std::int64_t> order(static_cast<std::size_t>(C.size()));
      std::iota(order.begin(), order.end(), 0);
      std::partial_sort(order.begin(), order.begin() + std::max(kTop, product.large), order.end(),
                        [&](std::int64_t x, std::int64_t y) { return std::abs(C.data()[x]) > std::abs(C.data()[y]) || (std::abs(C.data()[x]) == std::abs(C.data()[y]) && x < y); });
      for (int e = 0; e < std::max(kTop, product.large); ++e) top.emplace_back(order[static_cast<std::size_t>(e)] % n, order[static_cast<std::size_t>(e)] / n);
    }
    const std::vector<std::pair<std::int64_t, std::int64_t>> large(top.begin(), top.begin() + product.large);
    top.resize(kTop);
    const std::set<std::pair<std::int64_t, std::int64_t>> top_set(top.begin(), top.end());
    for (std::size_t f = 0; f < families; ++f) {
      Accumulated acc;
      for (int s = 0; s < seeds; ++s) {
        const std::uint64_t seed = 5000 + static_cast<std::uint64_t>(s);
        pagh::HashTables tables;
        if (f == 0) {
          tables = pagh::draw_hash_tables(seed, d, n, n, b);
        } else {
          const LinearTables lt = draw_linear(seed, d, n, n, b, variants[f]);
          for (int t = 0; t < d; ++t) {
            const auto& sa = lt.a[static_cast<std::size_t>(t)];
            const auto& sb = lt.bside[static_cast<std::size_t>(t)];
            std::vector<std::uint32_t> both(sa.column);
            for (std::size_t q = 0; q < both.size(); ++q) both[q] ^= sb.column[q];
            const bool deficient = variants[f] == Variant::shared_pi ? gf2_rank(both) < sa.Lp
                                                                      : (gf2_rank(sa.column) < sa.Lp || gf2_rank(sb.column) < sb.Lp);
            acc.deficient += deficient, ++acc.repetitions;
          }
          tables = tabulate(lt);
        }
        for (int t = 0; t < d; ++t) {
          std::vector<std::uint32_t> ids;
          for (const auto& [i, j] : large) ids.push_back(tables.h1(t, i) ^ tables.h2(t, j));
          std::sort(ids.begin(), ids.end());
          double pairs = 0;
          for (std::size_t e = 0; e < ids.size();) {
            std::size_t end = e;
            while (end < ids.size() && ids[end] == ids[e]) ++end;
            pairs += static_cast<double>((end - e) * (end - e - 1) / 2);
            e = end;
          }
          acc.pairs.push_back(pairs);
        }
        std::vector<double> values = time_domain_sketch(C, tables);
        const pagh::SketchParams params{.buckets = b, .repetitions = d, .seed = seed, .precision = fwht::DType::f64};
        const pagh::CompressedProduct prod(n, n, n, params, tables, std::move(values));
        const pagh::NoiseModel model(prod);
        const double half_width = model.half_width(0.95);
        std::vector<double> single(static_cast<std::size_t>(d));
        auto errors = [&](std::int64_t i, std::int64_t j, std::vector<double>& out_single, std::vector<double>& out_median, std::int64_t& covered,
                          double* worst) {
          for (int t = 0; t < d; ++t) {
            const auto ct = prod.sketch(t);
            single[static_cast<std::size_t>(t)] = tables.s1(t, i) * tables.s2(t, j) * ct[tables.h1(t, i) ^ tables.h2(t, j)];
            if (worst) worst[t] = std::max(worst[t], std::abs(single[static_cast<std::size_t>(t)] - C(i, j)) / sigma);
          }
          out_single.push_back(std::abs(single[0] - C(i, j)) / sigma);
          const double est = prod.estimate(i, j);
          out_median.push_back(std::abs(est - C(i, j)) / sigma);
          covered += std::abs(est - C(i, j)) <= half_width;
        };
        std::mt19937_64 pick(seed);
        for (int e = 0; e < kRandom; ++e) {
          const auto i = static_cast<std::int64_t>(pick() % static_cast<std::uint64_t>(n)), j = static_cast<std::int64_t>(pick() % static_cast<std::uint64_t>(n));
          errors(i, j, acc.rand_single, acc.rand_median, acc.rand_covered, nullptr);
        }
        acc.rand_count += kRandom;
        std::vector<double> worst(static_cast<std::size_t>(d), 0.0);
        const std::size_t before = acc.top_median.size();
        for (const auto& [i, j] : top) errors(i, j, acc.top_single, acc.top_median, acc.top_covered, worst.data());
        acc.top_count += kTop;
        double ms = 0;
        for (std::size_t e = before; e < acc.top_median.size(); ++e) ms += acc.top_median[e] * acc.top_median[e];
        acc.top_med_ms_per_seed.push_back(ms / kTop);
        for (double w : worst) acc.worst_top.push_back(w);
        int found = 0;
        for (const pagh::Entry& e : prod.top_k(kTop)) found += top_set.count({e.row, e.col}) > 0;
        acc.recall += static_cast<double>(found) / kTop / seeds;
      }
      auto rms = [](const std::vector<double>& v) {
        double s = 0;
        for (double x : v) s += x * x;
        return std::sqrt(s / static_cast<double>(v.size()));
      };
      double mean = 0, var = 0;
      for (double x : acc.top_med_ms_per_seed) mean += x / seeds;
      for (double x : acc.top_med_ms_per_seed) var += (x - mean) * (x - mean) / (seeds - 1);
      // The standard error of topm_rms from the seed-to-seed spread (delta method on the mean square).
      const double topm_se = std::sqrt(var / seeds) / (2 * std::sqrt(mean));
      char deficit[32] = "-";
      if (f != 0) std::snprintf(deficit, sizeof deficit, "%.3f", static_cast<double>(acc.deficient) / acc.repetitions);
      double pairs_mean = 0, pairs_var = 0;
      for (double x : acc.pairs) pairs_mean += x / static_cast<double>(acc.pairs.size());
      for (double x : acc.pairs) pairs_var += (x - pairs_mean) * (x - pairs_mean) / static_cast<double>(acc.pairs.size() - 1);
      std::printf("%-8s %-17s %8.3f %8.3f %8.3f %8.3f %8.3f %7.4f | %8.3f %8.3f %8.3f %8.3f %7.4f | %8.3f %8.3f %8.3f %7.3f %7s | %7.2f %7.2f %8.0f\n",
                  product.name.c_str(), f == 0 ? "random" : variant_name(variants[f]), rms(acc.rand_single), quantile(acc.rand_single, 0.99), quantile(acc.rand_single, 0.999), rms(acc.rand_median),
                  quantile(acc.rand_median, 0.99), static_cast<double>(acc.rand_covered) / acc.rand_count, rms(acc.top_single),
                  quantile(acc.top_single, 0.99), std::sqrt(mean), topm_se, static_cast<double>(acc.top_covered) / acc.top_count,
                  median(acc.worst_top), quantile(acc.worst_top, 0.99), *std::max_element(acc.worst_top.begin(), acc.worst_top.end()), acc.recall,
                  deficit, pairs_mean, pairs_mean > 0 ? pairs_var / pairs_mean : 0.0, *std::max_element(acc.pairs.begin(), acc.pairs.end()));
      std::fflush(stdout);
    }
  }
}

}  // namespace

[[noreturn]] void bench_cli::usage_error(const std::string& why) {
  std::fprintf(stderr, "linear_hash_prototype: %s\n%s", why.c_str(), kUsage);
  std::exit(64);
}

int main(int argc, char** argv) {
  if (argc < 2) usage_error("a mode is needed (speed or stats)");
  const std::string mode = argv[1];
  if (mode == "--help" || mode == "-h") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (mode != "speed" && mode != "stats") usage_error("unknown mode '" + mode + "'");
  std::vector<int> ns = mode == "speed" ? std::vector<int>{1024, 2048, 4096} : std::vector<int>{1024};
  std::vector<int> ds = mode == "speed" ? std::vector<int>{1, 3} : std::vector<int>{3}, thread_counts{1, 2};
  int rounds = 7, seeds = 200;
  bool f32 = false;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) usage_error(arg + " needs a value");
    const std::string value = argv[++i];
    if (bench_cli::parse_sweep_option(arg, value, 16, 1 << 14, ns, ds, thread_counts, rounds)) {
      continue;
    } else if (arg == "--precision") {
      if (value != "f64" && value != "f32") usage_error("--precision: '" + value + "' is neither f64 nor f32");
      f32 = value == "f32";
    } else if (arg == "--seeds") {
      seeds = parse_list(arg, value, 2, 100000).front();
    } else {
      usage_error("unknown option " + arg);
    }
  }
  if (mode == "stats" && (ns.size() != 1 || ns.front() < 64 || ns.front() > 4096))
    usage_error("stats: --n takes one power of two in [64, 4096] (its products place blocks of 16 and n x n matrices)");
  try {
    if (mode == "speed")
      f32 ? speed<float>(ns, ds, thread_counts, rounds) : speed<double>(ns, ds, thread_counts, rounds);
    else
      stats(ns.front(), ds.front(), seeds);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "linear_hash_prototype: %s\n", e.what());
    return 70;
  }
  return 0;
}
