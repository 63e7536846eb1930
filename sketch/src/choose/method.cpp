#include "sketch/method.hpp"

#include <omp.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>

#include "pagh/error.hpp"

namespace pagh {
namespace {

double transform_units(double b) { return b * (std::bit_width(static_cast<std::uint64_t>(b)) + 4); }

// The sketch's time: per k and repetition the cheaper of its two paths (hybrid_rule.hpp's rule
// decides; here each path at its own rate), then d inverse transforms and passes over the d * b
// buckets.
double sketch_seconds(const ProductCounts& c, double b, int d, const Throughput& rates) {
  const double transform = 2 * transform_units(b);
  double units = 0, direct = 0;
  for (std::size_t k = 0; k < c.nnz_a.size(); ++k) {
    const double products = c.nnz_a[k] * c.nnz_b[k];
    if (products <= 0) continue;
    if (4 * products < transform) direct += products;
    else units += transform + c.nnz_a[k] + c.nnz_b[k];
  }
  units += transform_units(b);
  return rates.sketch_fixed + d * (units / rates.sketch_units + direct / rates.direct_products + b * rates.bucket_seconds);
}

std::string seconds(double s) {
  char text[32];
  s < 1 ? std::snprintf(text, sizeof text, "%.3g ms", s * 1e3) : std::snprintf(text, sizeof text, "%.3g s", s);
  return text;
}

std::string gib(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g GiB", bytes / double(1ull << 30));
  return text;
}

}  // namespace

double ProductCounts::products() const {
  double total = 0;
  for (std::size_t k = 0; k < nnz_a.size(); ++k) total += nnz_a[k] * nnz_b[k];
  return total;
}

ProductCounts count_dense_product(std::int64_t m, std::int64_t K, std::int64_t p) {
  ProductCounts c{m, K, p, false, {}, {}};
  c.nnz_a.assign(static_cast<std::size_t>(K), double(m));
  c.nnz_b.assign(static_cast<std::size_t>(K), double(p));
  return c;
}

ProductCounts count_product(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B) {
  if (A.cols() != B.rows()) throw Error("pagh::count_product", "dimension mismatch: cols(A) != rows(B)");
  return count_dense_product(A.rows(), A.cols(), B.cols());
}

ProductCounts count_product(const Eigen::SparseMatrix<double>& A, const Eigen::SparseMatrix<double>& B) {
  if (A.cols() != B.rows()) throw Error("pagh::count_product", "dimension mismatch: cols(A) != rows(B)");
  ProductCounts c{A.rows(), A.cols(), B.cols(), true, {}, {}};
  c.nnz_a.resize(static_cast<std::size_t>(A.cols()));
  c.nnz_b.assign(static_cast<std::size_t>(B.rows()), 0.0);
  for (Eigen::Index k = 0; k < A.outerSize(); ++k) c.nnz_a[static_cast<std::size_t>(k)] = double(A.col(k).nonZeros());
  for (Eigen::Index j = 0; j < B.outerSize(); ++j)
    for (Eigen::SparseMatrix<double>::InnerIterator it(B, j); it; ++it) c.nnz_b[static_cast<std::size_t>(it.row())] += 1;
  return c;
}

// Per thread on the AMD EPYC of bench/RESULTS.md's CPU tables: Eigen's GEMM as built here (no
// -march=native) ~23 GFLOP/s in f64; Eigen's sparse product ~1e7 scalar products/s (one thread:
// it is not parallel; it sorts and compresses its output); the CPU sketch ~9e9 units/s in f64
// storage, twice that in f32, ~5e7 direct-path adds/s, ~2e-7 s per bucket and repetition for its
// partial sketches and recovery (a sparse 2e5 x 2e5 product with b = 2^21 spends ~2 s there), and
// ~30 ms of start-up.
Throughput cpu_throughput(int threads, fwht::DType precision) {
  const double n = threads > 0 ? threads : omp_get_max_threads();
  const double units = precision == fwht::DType::f64 ? 9e9 : 1.8e10;
  Throughput t;
  t.gemm_flops = 2.3e10 * n, t.sparse_products = 1e7, t.sketch_units = units * n, t.direct_products = 5e7 * n;
  t.sketch_fixed = 0.03, t.bucket_seconds = 2e-7, t.scanned_entries = 1e9 * n, t.exact_engine = "Eigen on the CPU";
  return t;
}

// One H100: DGEMM ~50 TFLOP/s, the CUDA sketch ~9e12 units/s (sketch_bench at n = 16384), C
// formed on the device and copied to the host at ~20 GB/s to be scanned there. Fixed costs from
// pagh-mm on a 4096^3 product: the exact path (cuBLAS start-up, operands to the device in f64)
// ~0.4 s beyond its flops and copies, a sketch ~0.1 s.
Throughput cuda_throughput() {
  Throughput t;
  t.gemm_flops = 5e13, t.sparse_products = 1e10, t.sketch_units = 9e12, t.direct_products = 5e9, t.sketch_fixed = 0.1;
  t.bucket_seconds = 1e-9, t.exact_fixed = 0.4;
  t.scanned_entries = 1e9, t.transfer_bytes = 2e10, t.exact_engine = "cuBLAS DGEMM on the GPU";
  return t;
}

MethodChoice choose_method(Method requested, const ProductCounts& counts, const SketchParams& params, const Throughput& rates,
                           double memory_bytes) {
  const double m = double(counts.rows), p = double(counts.cols), K = double(counts.inner);
  const double b = double(sketch_length(counts.rows, counts.cols, params));
  MethodChoice choice;
  choice.sketch_seconds = sketch_seconds(counts, b, params.repetitions, rates);
  const double products = counts.products();
  double exact_flops_text = 0;
  if (counts.sparse) {
    choice.exact_bytes = 16 * products;  // value and index per formed product: a bound on nnz(C)
    choice.exact_seconds = rates.exact_fixed + products / rates.sparse_products + std::min(products, m * p) / rates.scanned_entries;
    if (rates.transfer_bytes > 0) {  // a device forms C densely and it crosses to the host whole
      choice.exact_bytes = 8 * m * p;
      choice.exact_seconds =
          rates.exact_fixed + products / rates.sparse_products + 8 * m * p / rates.transfer_bytes + m * p / rates.scanned_entries;
    }
    exact_flops_text = products;
  } else {
    exact_flops_text = 2 * m * K * p;
    choice.exact_bytes = rates.transfer_bytes > 0 ? 8 * m * p : 0;  // a device's C crosses to the host whole
    choice.exact_seconds = rates.exact_fixed + exact_flops_text / rates.gemm_flops + m * p / rates.scanned_entries +
                           (rates.transfer_bytes > 0 ? 8 * m * p / rates.transfer_bytes : 0);
  }
  const bool fits = memory_bytes <= 0 || choice.exact_bytes <= memory_bytes;
  char text[400];
  std::snprintf(text, sizeof text, "the exact product (%s, %.3g %s) is estimated at %s, the sketch at %s", rates.exact_engine.c_str(),
                exact_flops_text, counts.sparse ? "scalar products" : "flops", seconds(choice.exact_seconds).c_str(),
                seconds(choice.sketch_seconds).c_str());
  std::string why = text;
  if (!fits) why += "; the exact product would need " + gib(choice.exact_bytes) + ", more than the " + gib(memory_bytes) + " available";
  switch (requested) {
    case Method::exact:
      if (!fits) throw Error("pagh::choose_method", why);
      choice.method = Method::exact;
      choice.reason = "exact, as asked: " + why;
      break;
    case Method::sketch:
      choice.method = Method::sketch;
      choice.reason = "sketch, as asked: " + why;
      break;
    case Method::automatic:
      choice.method = fits && choice.exact_seconds <= choice.sketch_seconds ? Method::exact : Method::sketch;
      choice.reason = std::string(choice.method == Method::exact ? "exact" : "sketch") + ": " + why;
      break;
  }
  return choice;
}

}  // namespace pagh
