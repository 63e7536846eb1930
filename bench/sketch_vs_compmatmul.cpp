// sketch_vs_compmatmul: pagh's CPU sketch (pagh::compress) and compmatmul's (Andersson & Karppa 2026,
// github.com/mkarppa/compmatmul, header-only, its FWHT answered by FFHT: compmatmul_fxt_shim/) timed
// in one process, interleaved. Built only when CMake is given both checkouts (-DPAGH_COMPMATMUL_DIR=...
// -DPAGH_FFHT_DIR=...); neither is ever part of the library.
//
//   sketch_vs_compmatmul [--n 1024,2048,4096] [--d 1,3] [--threads 1,2] [--rounds 7] [--only pagh|compmatmul]
//
// --only times one library alone (for a profiler; the other's columns and the ratios read 0).
//
// Dense Gaussian fp64 A (n x n) and B (n x n), b = 8n, d repetitions. Both read the same memory:
// A column-major is compmatmul's A^T row-major, and B is row-major (pagh::RowMajorMatrixXd), the
// layouts each library reads without rearranging. Each round runs both (who goes first alternates)
// with a fresh seed, so neither reuses hash tables; the time is the whole call, from the inputs to
// the d time-domain sketches (pagh: arranging lines, drawing tables, sketching, inverse; compmatmul:
// drawing its multiply-add-shift hash functions, sketching with per-repetition locks, inverse). The
// table gives medians over rounds of wall time and of process CPU time, the median of each round's
// own CPU-time ratio (`paired`), pagh's median phases (wall) from its CompressTimings, and the
// least wall time of each (what a shared machine's intermittent load disturbs least). Before timing,
// both sketches are checked against the product's Frobenius norm: sum_h c_t[h]^2 estimates ||AB||_F^2
// without bias (relative spread about sqrt(2/b)), so each must come within 10% of the exact value.
#include <omp.h>
#include <time.h>

#include <Eigen/Dense>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <memory>  // compmatmul's matmul_sketch.hpp uses std::unique_ptr without including it

#include "hashing.hpp"      // compmatmul's multiply_add_shift_hash
#include "matmul_fwht.hpp"  // compmatmul, with COMPMATMUL_USE_FXT and the FXT shim
#include "bench_cli.hpp"
#include "sketch/compress.hpp"

namespace {

using bench_cli::cpu_ms;
using bench_cli::median;
using bench_cli::now_ms;
using bench_cli::usage_error;

constexpr const char* kUsage =
    "usage: sketch_vs_compmatmul [--n N,...] [--d D,...] [--threads T,...] [--rounds R] [--only pagh|compmatmul]\n"
    "Times pagh::compress and compmatmul's FWHT sketch (dense Gaussian fp64, b = 8n) interleaved in one process.\n";

double sum_of_squares(const double* x, std::size_t count) {
  double s = 0;
  for (std::size_t i = 0; i < count; ++i) s += x[i] * x[i];
  return s;
}

struct Inputs {
  Eigen::MatrixXd A;          // n x n column-major = compmatmul's A^T (K x n) row-major
  pagh::RowMajorMatrixXd B;   // n x n row-major, as compmatmul reads it
  double frobenius_squared;   // ||AB||_F^2, exact
};

Inputs make_inputs(int n) {
  Inputs in;
  in.A.resize(n, n);
  in.B.resize(n, n);
  std::mt19937_64 rng(20261126 + static_cast<unsigned>(n));
  std::normal_distribution<double> normal;
  for (Eigen::Index i = 0; i < in.A.size(); ++i) in.A.data()[i] = normal(rng);
  for (Eigen::Index i = 0; i < in.B.size(); ++i) in.B.data()[i] = normal(rng);
  in.frobenius_squared = (in.A * in.B).squaredNorm();
  return in;
}

enum class Only { both, pagh, compmatmul };

void compare(const Inputs& in, int n, int d, int threads, int rounds, Only only) {
  const int b = 8 * n;
  const pagh::SketchParams base{.buckets = b, .repetitions = d, .precision = fwht::DType::f64, .threads = threads};
  auto run_pagh = [&](std::uint64_t seed) {
    pagh::SketchParams params = base;
    params.seed = seed;
    return pagh::compress(in.A, in.B, params);
  };
  auto run_cmm = [&](std::uint64_t seed) {
    omp_set_num_threads(threads);
    return compmatmul::matmul_compressed_product_fwht<compmatmul::multiply_add_shift_hash>(n, n, n, in.A.data(), in.B.data(), d, b,
                                                                                            seed);
  };

  // Both must sketch this product: each repetition's energy near ||AB||_F^2.
  {
    const auto pagh_sketch = run_pagh(1);
    const auto cmm_sketch = run_cmm(1);
    for (int t = 0; t < d; ++t) {
      const auto s = pagh_sketch.sketch(t);
      const double e_pagh = sum_of_squares(s.data(), s.size()) / in.frobenius_squared;
      const double e_cmm = sum_of_squares(cmm_sketch.p.get() + static_cast<std::size_t>(t) * b, static_cast<std::size_t>(b)) / in.frobenius_squared;
      if (std::abs(e_pagh - 1) > 0.1 || std::abs(e_cmm - 1) > 0.1) {
        std::fprintf(stderr, "sketch_vs_compmatmul: n %d d %d repetition %d: sketch energy / ||AB||_F^2 = %.3f (pagh), %.3f (compmatmul)\n", n,
                     d, t, e_pagh, e_cmm);
        std::exit(70);
      }
    }
  }

  std::vector<double> pagh_ms, cmm_ms, pagh_cpu, cmm_cpu, arrange, hashing, sketching, inverse;
  for (int r = 0; r < rounds; ++r) {
    const std::uint64_t seed = 1000 + static_cast<std::uint64_t>(r);
    for (int which = 0; which < 2; ++which) {
      const bool pagh = (which == 0) == (r % 2 == 0);
      if (only != Only::both && pagh != (only == Only::pagh)) continue;
      const double start = now_ms(), cpu_start = cpu_ms();
      if (pagh) {
        const auto product = run_pagh(seed);
        pagh_ms.push_back(now_ms() - start), pagh_cpu.push_back(cpu_ms() - cpu_start);
        const auto& t = product.timings();
        arrange.push_back(t.total_ms - t.hashing_ms - t.sketching_ms - t.inverse_ms);
        hashing.push_back(t.hashing_ms), sketching.push_back(t.sketching_ms), inverse.push_back(t.inverse_ms);
      } else {
        const auto sketch = run_cmm(seed);
        cmm_ms.push_back(now_ms() - start), cmm_cpu.push_back(cpu_ms() - cpu_start);
      }
    }
  }
  const double p = median(pagh_ms), c = median(cmm_ms);
  const double pc = median(pagh_cpu), cc = median(cmm_cpu);
  // Each round's own CPU-time ratio (its two calls ran back to back), then their median: the
  // machine's load drifts between rounds on a shared machine, less within one.
  std::vector<double> paired;
  for (std::size_t r = 0; r < std::min(pagh_cpu.size(), cmm_cpu.size()); ++r) paired.push_back(pagh_cpu[r] / cmm_cpu[r]);
  const auto least = [](const std::vector<double>& v) { return v.empty() ? 0.0 : *std::min_element(v.begin(), v.end()); };
  std::printf("%6d %7d %3d %7d %10.1f %10.1f %8.3f %10.1f %10.1f %8.3f %8.3f   %7.1f %6.1f %8.1f %7.1f %9.1f %9.1f\n", n, b, d, threads, p, c,
              c > 0 ? p / c : 0.0, pc, cc, cc > 0 ? pc / cc : 0.0, median(paired), median(arrange), median(hashing), median(sketching),
              median(inverse), least(pagh_ms), least(cmm_ms));
  std::fflush(stdout);
}

}  // namespace

[[noreturn]] void bench_cli::usage_error(const std::string& why) {
  std::fprintf(stderr, "sketch_vs_compmatmul: %s\n%s", why.c_str(), kUsage);
  std::exit(64);
}

int main(int argc, char** argv) {
  std::vector<int> ns{1024, 2048, 4096}, ds{1, 3}, thread_counts{1, 2};
  int rounds = 7;
  Only only = Only::both;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (i + 1 >= argc) usage_error(arg + " needs a value");
    const std::string value = argv[++i];
    if (bench_cli::parse_sweep_option(arg, value, 2, 1 << 15, ns, ds, thread_counts, rounds)) {
      continue;
    } else if (arg == "--only") {
      if (value != "pagh" && value != "compmatmul") usage_error("--only: '" + value + "' is neither pagh nor compmatmul");
      only = value == "pagh" ? Only::pagh : Only::compmatmul;
    } else {
      usage_error("unknown option " + arg);
    }
  }
  std::printf("%6s %7s %3s %7s %10s %10s %8s %10s %10s %8s %8s   %7s %6s %8s %7s %9s %9s\n", "n", "b", "d", "threads", "pagh_ms", "cmm_ms",
              "pagh/cmm", "pagh_cpu", "cmm_cpu", "cpu_ratio", "paired", "arrange", "hash", "sketch", "inverse", "pagh_min", "cmm_min");
  // compmatmul calls BLAS only to scale its inverse transforms; OpenBLAS's own worker threads would
  // spin beside both libraries' OpenMP threads on a small machine.
  openblas_set_num_threads(1);
  try {
    for (int n : ns) {
      const Inputs in = make_inputs(n);
      for (int d : ds)
        for (int threads : thread_counts) compare(in, n, d, threads, rounds, only);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sketch_vs_compmatmul: %s\n", e.what());
    return 70;
  }
  return 0;
}
