// sketch_bench: the compressed product against Eigen's exact product on the same machine.
//
//   sketch_bench --workload dense --n 1024,2048,4096 --d 1 --precision f64 --threads 1 --format json
//   sketch_bench --backend cuda --n 2048,4096,8192,16384 --d 1,3 --reps 20
//
// --backend cuda with the dense workload (sketch_bench_cuda.cpp) times device-resident dense FP32
// inputs against cuBLAS SGEMM and BF16 GEMM in the same run (--n, --d, --pad, --reps apply; --exact
// no: the sketch alone, holding only A and B by rows, so that n = 65536 fits an 80 GB card); other
// workloads run pagh::cuda::compress on host inputs (transfers included) against Eigen's exact
// product, with the CPU table's columns; the sparse workload also against the exact product on the
// GPU (cuSPARSE SpGEMM on device-resident inputs, cusparse_product.hpp: gpu_exact_ms, and its
// largest error against Eigen relative to max |C|, gpu_err).
//
// Workloads (matrix_io/synthetic.hpp): dense (Gaussian with planted large entries, n x n x n),
// sparse (sparse_product, 4 nonzeros per row of A and per column of B), lowrank (low rank plus
// sparse), covariance (X^T X with correlated feature pairs; n features, 2n samples). For each it
// prints the sketch time (median of --reps), the exact product's time (Eigen, same thread count),
// their ratio, and the accuracy metrics of pagh::verify beside them.
#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <sstream>
#include <string>
#include <vector>

#include "matrix_io/synthetic.hpp"
#include "sketch/compress.hpp"
#include "sketch/verify.hpp"
#ifdef SKETCH_BENCH_HAVE_CUDA
#include "cusparse_product.hpp"
#include "sketch/cuda.hpp"
#include "sketch_bench_cuda.hpp"
#include "tuning_from_env.hpp"
#endif

namespace {

constexpr const char* kUsage =
    "usage: sketch_bench [--backend cpu|cuda] [--workload dense|sparse|lowrank|covariance] [--n N1,N2,...] [--d D]\n"
    "                    [--pad P] [--precision f64|f32|f16|bf16] [--compute f32|storage] [--threads T] [--reps R]\n"
    "                    [--exact yes|no] [--top K] [--format text|json]\n";

[[noreturn]] void usage_error(const std::string& why) {
  std::fprintf(stderr, "sketch_bench: %s\n%s", why.c_str(), kUsage);
  std::exit(64);
}

// The exact sparse product on the GPU (CUDA backend, sparse workload); -1 where not run.
struct GpuExact {
  double ms = -1, max_relative_error = -1;
};

struct Workload {
  Eigen::MatrixXd a, b;                      // dense workloads
  Eigen::SparseMatrix<double> sa, sb;        // sparse workload
  bool sparse = false;
  std::size_t planted = 10;
};

Workload make(const std::string& kind, std::int64_t n) {
  namespace mio = pagh::matrix_io;
  Workload w;
  if (kind == "dense") {
    // Planted entries of 8 sigma: a single estimate's noise is ||AB||_F / sqrt(b), and the Gaussian
    // background has ||AB||_F ~ n^1.5 with b = 8n, so the entries must grow like n to stay visible.
    const double sigma = std::pow(static_cast<double>(n), 1.5) / std::sqrt(8.0 * static_cast<double>(n));
    auto pair = mio::planted_dense({.m = n, .k = n, .p = n, .seed = 1, .planted = 10, .planted_value = 8 * sigma});
    w.a = std::move(pair.a), w.b = std::move(pair.b), w.planted = pair.planted.size();
  } else if (kind == "sparse") {
    auto pair = mio::sparse_product({.m = n, .k = n, .p = n, .seed = 1, .a_per_row = 4, .b_per_col = 4});
    w.sa = std::move(pair.a), w.sb = std::move(pair.b), w.sparse = true;
  } else if (kind == "lowrank") {
    auto pair = mio::low_rank_plus_sparse({.m = n, .k = n, .p = n, .seed = 1});
    w.a = std::move(pair.a), w.b = std::move(pair.b);
  } else if (kind == "covariance") {
    auto pair = mio::sample_covariance({.samples = 2 * n, .features = n, .seed = 1, .pairs = 5});
    w.a = std::move(pair.a), w.b = std::move(pair.b), w.planted = pair.planted.size();
  } else {
    usage_error("unknown workload '" + kind + "'");
  }
  return w;
}

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

int main(int argc, char** argv) {
  std::string workload = "dense", format = "text", exact = "yes", backend = "cpu", d_list = "1";
  std::vector<std::int64_t> sizes{1024, 2048, 4096};
  pagh::SketchParams params{.repetitions = 1};
  int reps = 3;
  std::size_t top = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (i + 1 >= argc) usage_error(arg + " needs a value");
    const std::string v = argv[++i];
    try {
      if (arg == "--workload") workload = v;
      else if (arg == "--n") {
        sizes.clear();
        std::stringstream ss(v);
        for (std::string item; std::getline(ss, item, ',');) sizes.push_back(std::stoll(item));
      } else if (arg == "--d") d_list = v, params.repetitions = std::stoi(v);
      else if (arg == "--backend") backend = v;
      else if (arg == "--pad") params.pad = std::stod(v);
      else if (arg == "--precision") params.precision = fwht::parse_dtype(v);
      else if (arg == "--compute") params.compute = fwht::parse_compute(v);
      else if (arg == "--threads") params.threads = std::stoi(v);
      else if (arg == "--reps") reps = std::stoi(v);
      else if (arg == "--top") top = static_cast<std::size_t>(std::stoll(v));
      else if (arg == "--exact") exact = v;
      else if (arg == "--format") format = v;
      else usage_error("unknown option " + arg);
    } catch (const std::exception& e) {
      usage_error(arg + ": invalid value '" + v + "'");
    }
  }
  if (format != "text" && format != "json") usage_error("--format: expected text or json");
  if (exact != "yes" && exact != "no") usage_error("--exact: expected yes or no");
  if (reps < 1) usage_error("--reps must be at least 1");
  if (backend == "cuda" && workload == "dense") {
#ifdef SKETCH_BENCH_HAVE_CUDA
    CudaBenchConfig config{.sizes = sizes,
                           .repetitions = {},
                           .pad = params.pad,
                           .precision = params.precision,
                           .compute = params.compute,
                           .reps = reps,
                           .exact = exact == "yes",
                           .check_host = std::getenv("SKETCH_BENCH_CHECK") != nullptr};
    std::stringstream ss(d_list);
    for (std::string item; std::getline(ss, item, ',');) config.repetitions.push_back(std::stoi(item));
    try {
      return run_cuda_bench(config);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "sketch_bench: %s\n", e.what());
      return 70;
    }
#else
    usage_error("--backend cuda: this build has no CUDA sketch backend");
#endif
  }
  if (backend != "cpu" && backend != "cuda") usage_error("--backend: expected cpu or cuda");
#ifndef SKETCH_BENCH_HAVE_CUDA
  if (backend == "cuda") usage_error("--backend cuda: this build has no CUDA sketch backend");
#endif
  // Other workloads on the GPU: host inputs through pagh::cuda::compress (transfers included),
  // against the exact product on the CPU (Eigen), with the same metrics.
  auto sketch = [&](const Workload& w) -> pagh::CompressedProduct {
#ifdef SKETCH_BENCH_HAVE_CUDA
    if (backend == "cuda") {
      const pagh::cuda::DeviceOptions options{.tuning = pagh::bench::path_tuning_from_env()};
      auto device = w.sparse ? pagh::cuda::compress(w.sa, w.sb, params, options) : pagh::cuda::compress(w.a, w.b, params, options);
      return device.to_host();
    }
#endif
    return w.sparse ? pagh::compress(w.sa, w.sb, params) : pagh::compress(w.a, w.b, params);
  };
  const int threads = params.threads > 0 ? params.threads : Eigen::nbThreads();
  Eigen::setNbThreads(threads);

  const bool json = format == "json";
  if (json) std::printf("[\n");
  else
    std::printf("%-10s %6s %8s %2s %4s %5s %11s %11s %8s %9s %9s %7s %12s %9s\n", "workload", "n", "b", "d", "prec", "thr",
                "sketch_ms", "exact_ms", "speedup", "rel_frob", "max_sigma", "recall", "gpu_exact_ms", "gpu_err");
  bool first = true;
  try {
    for (std::int64_t n : sizes) {
      const Workload w = make(workload, n);
      std::vector<double> times;
      pagh::CompressedProduct product = sketch(w);
      times.push_back(product.timings().total_ms);
      for (int r = 1; r < reps; ++r) {
        product = sketch(w);
        times.push_back(product.timings().total_ms);
      }
      std::sort(times.begin(), times.end());
      const double sketch_ms = times[times.size() / 2];
      double exact_ms = -1;
      pagh::Metrics metrics;
      bool have_metrics = false;
      if (exact == "yes") {
        const double t0 = now_ms();
        const Eigen::MatrixXd C = w.sparse ? pagh::exact_product(w.sa, w.sb) : pagh::exact_product(w.a, w.b);
        exact_ms = now_ms() - t0;
        metrics = pagh::verify(product, C, top > 0 ? top : w.planted);
        have_metrics = true;
      }
      const double speedup = exact_ms > 0 ? exact_ms / sketch_ms : -1;
      GpuExact gpu_exact;
#ifdef SKETCH_BENCH_HAVE_CUDA
      if (backend == "cuda" && w.sparse) {
        const GpuSparseProduct g = cusparse_product(w.sa, w.sb, reps);
        gpu_exact = {g.ms, g.max_relative_error};
      }
#endif
      if (json) {
        std::printf("%s  {\"workload\": \"%s\", \"n\": %lld, \"buckets\": %lld, \"d\": %d, \"precision\": \"%s\", \"threads\": %d, "
                    "\"sketch_ms\": %.4f, \"exact_ms\": %.4f, \"speedup\": %.3f, \"transformed_k\": %lld, \"direct_k\": %lld",
                    first ? "" : ",\n", workload.c_str(), static_cast<long long>(n), static_cast<long long>(product.buckets()),
                    params.repetitions, std::string(fwht::to_string(params.precision)).c_str(), threads, sketch_ms, exact_ms, speedup,
                    static_cast<long long>(product.timings().transformed_k), static_cast<long long>(product.timings().direct_k));
        if (have_metrics)
          std::printf(", \"relative_frobenius_error\": %.5g, \"max_error_in_sigmas\": %.4g, \"top_k\": %zu, \"top_k_recall\": %.4f",
                      metrics.relative_frobenius_error, metrics.max_error_in_sigmas, metrics.top_k, metrics.top_k_recall);
        if (gpu_exact.ms >= 0)
          std::printf(", \"gpu_exact_ms\": %.4f, \"gpu_exact_max_relative_error\": %.3g", gpu_exact.ms, gpu_exact.max_relative_error);
        std::printf("}");
      } else {
        std::printf("%-10s %6lld %8lld %2d %4s %5d %11.2f %11.2f %8.2f %9.4f %9.3f %7.3f %12.3f %9.2g\n", workload.c_str(),
                    static_cast<long long>(n), static_cast<long long>(product.buckets()), params.repetitions,
                    std::string(fwht::to_string(params.precision)).c_str(), threads, sketch_ms, exact_ms, speedup,
                    have_metrics ? metrics.relative_frobenius_error : -1.0, have_metrics ? metrics.max_error_in_sigmas : -1.0,
                    have_metrics ? metrics.top_k_recall : -1.0, gpu_exact.ms, gpu_exact.max_relative_error);
      }
      std::fflush(stdout);
      first = false;
    }
  } catch (const std::exception& e) {  // a CUDA failure, say: one line, no partial table row
    std::fprintf(stderr, "sketch_bench: %s\n", e.what());
    return 70;
  }
  if (json) std::printf("\n]\n");
  return 0;
}
