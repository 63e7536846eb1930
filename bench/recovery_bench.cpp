// recovery_bench: the time to find the largest entries of a compressed product (heavy-bucket
// recovery, sketch/recovery.hpp) beside the sketch itself, the exhaustive scan it replaces, and the
// exact product a user would compute instead, on the same machine in the same run.
//
//   recovery_bench --backend cpu --n 10000,100000,1000000 --threads 2
//   recovery_bench --backend cuda --n 10000,100000,1000000,10000000
//
// Workloads: sparse, n x n times n x n (matrix_io's sparse_product, --per nonzeros per row of A and
// per column of B, Gaussian values); wide, n x K times K x n (--inner K) with --per nonzeros in each
// column of A and each row of B, so that every inner index adds a per x per outer product (a large
// output), plus --planted entries of --planted-value on inner indices of their own. For wide
// products the exact baseline is blocked: cuSPARSE SpGEMM over blocks of A's rows whose outputs
// fit (--exact-max-nnz products a block), each block's top entries kept. Columns: sketch_ms (compress), recover_ms (top_k(--top),
// automatic recovery; on the GPU the device query, answer copied back), rounds / heavy / probes
// (the recovery's thresholds tried, heavy buckets enumerated and its cost model's estimate against
// the scan's m*p*d), scan_ms (Recovery::exhaustive, where m*p*d <= --scan-max; "same" says whether
// it gave the identical answer), exact_ms (CPU: Eigen's sparse product and a selection of its top
// entries; GPU: cuSPARSE SpGEMM and a device sort of C's values, where C has at most
// --exact-max-nnz nonzeros), recall (of the recovered top entries among the exact product's, ties
// counted: an entry counts when its exact |value| reaches the K-th largest).
#include <Eigen/SparseCore>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <sstream>
#include <string>
#include <vector>

#include <random>

#include "matrix_io/synthetic.hpp"
#include "sketch/compress.hpp"
#ifdef RECOVERY_BENCH_HAVE_CUDA
#include "cusparse_product.hpp"
#include "sketch/cuda.hpp"
#endif

namespace {

constexpr const char* kUsage =
    "usage: recovery_bench [--backend cpu|cuda] [--workload sparse|wide] [--n N1,N2,...] [--per P] [--inner K]\n"
    "                      [--planted Q] [--planted-value V] [--d D] [--top K] [--threads T] [--scan-max PROBES]\n"
    "                      [--exact-max-nnz NNZ] [--reps R]\n";

[[noreturn]] void usage_error(const std::string& why) {
  std::fprintf(stderr, "recovery_bench: %s\n%s", why.c_str(), kUsage);
  std::exit(64);
}

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct ExactTop {
  double ms = -1;
  std::int64_t nnz = -1;
  std::vector<pagh::Entry> top;  // the k largest |C_ij| (value = C_ij)
};

// Eigen's sparse product and the k largest of its nonzeros.
ExactTop eigen_top_k(const Eigen::SparseMatrix<double>& a, const Eigen::SparseMatrix<double>& b, std::size_t k) {
  ExactTop out;
  const double t0 = now_ms();
  const Eigen::SparseMatrix<double> c = a * b;
  out.nnz = c.nonZeros();
  std::vector<pagh::Entry> all;
  all.reserve(static_cast<std::size_t>(c.nonZeros()));
  for (Eigen::Index j = 0; j < c.outerSize(); ++j)
    for (Eigen::SparseMatrix<double>::InnerIterator it(c, j); it; ++it) all.push_back({it.row(), it.col(), it.value(), 0});
  const auto larger = [](const pagh::Entry& x, const pagh::Entry& y) { return std::fabs(x.value) > std::fabs(y.value); };
  const std::size_t kept = std::min(k, all.size());
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(kept), all.end(), larger);
  all.resize(kept);
  out.ms = now_ms() - t0;
  out.top = std::move(all);
  return out;
}

// C_ij from A's row i (row-major copy) and B's column j.
double exact_entry(const Eigen::SparseMatrix<double, Eigen::RowMajor>& a_rows, const Eigen::SparseMatrix<double>& b, std::int64_t i,
                   std::int64_t j) {
  double sum = 0;
  for (Eigen::SparseMatrix<double, Eigen::RowMajor>::InnerIterator it(a_rows, i); it; ++it) sum += it.value() * b.coeff(it.col(), j);
  return sum;
}

// Recall among ties: a reported entry counts when its exact |value| reaches the k-th largest.
double tie_aware_recall(const std::vector<pagh::Entry>& reported, const ExactTop& exact,
                        const Eigen::SparseMatrix<double, Eigen::RowMajor>& a_rows, const Eigen::SparseMatrix<double>& b) {
  if (exact.top.empty() || reported.empty()) return -1;
  const double kth = std::fabs(exact.top.back().value);
  std::size_t hits = 0;
  for (const auto& e : reported) hits += kth > 0 && std::fabs(exact_entry(a_rows, b, e.row, e.col)) >= kth;
  return static_cast<double>(hits) / static_cast<double>(exact.top.size());
}

// n x K times K x n with `per` nonzeros in every column of A and every row of B, plus `planted`
// entries of size `value` (each on an inner index of its own, appended after the first K).
pagh::matrix_io::SparsePair wide_product(std::int64_t n, std::int64_t inner, std::int64_t per, std::int64_t planted, double value) {
  std::mt19937_64 rng(1);
  std::uniform_int_distribution<std::int64_t> index(0, n - 1);
  std::normal_distribution<double> normal;
  std::vector<Eigen::Triplet<double>> ta, tb;
  ta.reserve(static_cast<std::size_t>(inner * per + planted));
  tb.reserve(ta.capacity());
  for (std::int64_t k = 0; k < inner; ++k)
    for (std::int64_t r = 0; r < per; ++r) {
      ta.emplace_back(index(rng), k, normal(rng));
      tb.emplace_back(k, index(rng), normal(rng));
    }
  for (std::int64_t q = 0; q < planted; ++q) {
    ta.emplace_back(index(rng), inner + q, std::sqrt(value));
    tb.emplace_back(inner + q, index(rng), (q % 2 ? -1 : 1) * std::sqrt(value));
  }
  pagh::matrix_io::SparsePair pair;
  pair.a.resize(n, inner + planted), pair.b.resize(inner + planted, n);
  pair.a.setFromTriplets(ta.begin(), ta.end());
  pair.b.setFromTriplets(tb.begin(), tb.end());
  return pair;
}

bool same_entries(const std::vector<pagh::Entry>& x, const std::vector<pagh::Entry>& y) {
  if (x.size() != y.size()) return false;
  for (std::size_t n = 0; n < x.size(); ++n)
    if (x[n].row != y[n].row || x[n].col != y[n].col || x[n].value != y[n].value || x[n].spread != y[n].spread) return false;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::string backend = "cpu", workload = "sparse";
  std::int64_t inner_dim = 1 << 14, planted = 20;
  double planted_value = 2000;
  std::vector<std::int64_t> sizes{10000, 100000};
  std::int64_t per = 8;
  std::size_t top = 20;
  int reps = 3;
  double scan_max = 1e10, exact_max_nnz = 1e9;
  pagh::SketchParams params{.repetitions = 3};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (i + 1 >= argc) usage_error(arg + " needs a value");
    const std::string v = argv[++i];
    try {
      if (arg == "--backend") backend = v;
      else if (arg == "--workload") workload = v;
      else if (arg == "--inner") inner_dim = static_cast<std::int64_t>(std::stod(v));
      else if (arg == "--planted") planted = std::stoll(v);
      else if (arg == "--planted-value") planted_value = std::stod(v);
      else if (arg == "--n") {
        sizes.clear();
        std::stringstream ss(v);
        for (std::string item; std::getline(ss, item, ',');) sizes.push_back(static_cast<std::int64_t>(std::stod(item)));
      } else if (arg == "--per") per = std::stoll(v);
      else if (arg == "--d") params.repetitions = std::stoi(v);
      else if (arg == "--top") top = static_cast<std::size_t>(std::stoll(v));
      else if (arg == "--threads") params.threads = std::stoi(v);
      else if (arg == "--scan-max") scan_max = std::stod(v);
      else if (arg == "--exact-max-nnz") exact_max_nnz = std::stod(v);
      else if (arg == "--reps") reps = std::stoi(v);
      else usage_error("unknown option " + arg);
    } catch (const std::exception&) {
      usage_error(arg + ": invalid value '" + v + "'");
    }
  }
  if (backend != "cpu" && backend != "cuda") usage_error("--backend: expected cpu or cuda");
  if (workload != "sparse" && workload != "wide") usage_error("--workload: expected sparse or wide");
#ifndef RECOVERY_BENCH_HAVE_CUDA
  if (backend == "cuda") usage_error("--backend cuda: this build has no CUDA sketch backend");
#endif
  if (params.threads > 0) Eigen::setNbThreads(params.threads);
  std::printf("%-7s %9s %9s %2s %3s %10s %10s %6s %7s %9s %9s %10s %5s %10s %12s %6s\n", "backend", "n", "b", "d", "thr", "sketch_ms",
              "recover_ms", "rounds", "heavy", "probes", "scan_prb", "scan_ms", "same", "exact_ms", "exact_nnz", "recall");
  try {
    for (std::int64_t n : sizes) {
      const bool wide = workload == "wide";
      const auto pair = wide ? wide_product(n, inner_dim, per, planted, planted_value)
                             : pagh::matrix_io::sparse_product({.m = n, .k = n, .p = n, .seed = 1, .a_per_row = per, .b_per_col = per});
      const auto& a = pair.a;
      const auto& b = pair.b;
      double sketch_ms = 0, recover_ms = 0, scan_ms = -1;
      pagh::RecoveryStats stats;
      std::vector<pagh::Entry> recovered, scanned;
      std::int64_t buckets = 0;
      const bool scan = static_cast<double>(n) * static_cast<double>(n) * params.repetitions <= scan_max;
      auto median = [](std::vector<double> t) {
        std::sort(t.begin(), t.end());
        return t[t.size() / 2];
      };
      std::vector<double> sketch_times, recover_times;
      if (backend == "cpu") {
        for (int r = 0; r < reps; ++r) {
          const pagh::CompressedProduct c = pagh::compress(a, b, params);
          sketch_times.push_back(c.timings().total_ms);
          const double t0 = now_ms();
          recovered = c.top_k(top, pagh::Recovery::automatic, &stats);
          recover_times.push_back(now_ms() - t0);
          buckets = c.buckets();
          if (scan && r == 0) {
            const double t1 = now_ms();
            scanned = c.top_k(top, pagh::Recovery::exhaustive);
            scan_ms = now_ms() - t1;
          }
        }
      } else {
#ifdef RECOVERY_BENCH_HAVE_CUDA
        for (int r = 0; r < reps; ++r) {
          const double t0 = now_ms();
          const pagh::cuda::DeviceProduct c = pagh::cuda::compress(a, b, params);
          sketch_times.push_back(now_ms() - t0);
          const double t1 = now_ms();
          recovered = c.top_k(top, pagh::Recovery::automatic, &stats);
          recover_times.push_back(now_ms() - t1);
          buckets = c.buckets();
          if (scan && r == 0) {
            const double t2 = now_ms();
            scanned = c.top_k(top, pagh::Recovery::exhaustive);
            scan_ms = now_ms() - t2;
          }
        }
#endif
      }
      sketch_ms = median(sketch_times), recover_ms = median(recover_times);

      // The exact alternative, where C fits: about n * per^2 nonzeros.
      ExactTop exact;
      std::int64_t exact_nnz = -1;
      double recall = -1;
      const double products = wide ? static_cast<double>(inner_dim) * static_cast<double>(per * per)
                                   : static_cast<double>(n) * static_cast<double>(per * per);
      if (wide && backend == "cuda") {
#ifdef RECOVERY_BENCH_HAVE_CUDA
        const GpuSparseTopK g = cusparse_top_k_blocked(a, b, top, exact_max_nnz);
        exact.ms = g.ms, exact.top = g.top, exact_nnz = g.nnz;
        recall = tie_aware_recall(recovered, exact, Eigen::SparseMatrix<double, Eigen::RowMajor>(a), b);
#endif
      } else if (products <= exact_max_nnz) {
        if (backend == "cpu") {
          exact = eigen_top_k(a, b, top);
        } else {
#ifdef RECOVERY_BENCH_HAVE_CUDA
          const GpuSparseTopK g = cusparse_top_k(a, b, top, reps);
          exact.ms = g.ms;
          exact.top = g.top;
          exact_nnz = g.nnz;
#endif
        }
        if (exact_nnz < 0) exact_nnz = exact.nnz;
        recall = tie_aware_recall(recovered, exact, Eigen::SparseMatrix<double, Eigen::RowMajor>(a), b);
      }
      std::printf("%-7s %9lld %9lld %2d %3d %10.2f %10.2f %6d %7lld %9.3g %9.3g %10.2f %5s %10.2f %12lld %6.2f\n", backend.c_str(),
                  static_cast<long long>(n), static_cast<long long>(buckets), params.repetitions, params.threads, sketch_ms,
                  recover_ms, stats.rounds, static_cast<long long>(stats.heavy_buckets), stats.probes, stats.scan_probes, scan_ms,
                  scan ? (same_entries(recovered, scanned) ? "yes" : "NO") : "-", exact.ms, static_cast<long long>(exact_nnz),
                  recall);
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "recovery_bench: %s\n", e.what());
    return 70;
  }
  return 0;
}
