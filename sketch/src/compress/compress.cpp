// The CPU compression engine: sign-scatter, FWHT, pointwise multiply-accumulate, one inverse.
#include "sketch/compress.hpp"

#include <omp.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "fwht/fwht.hpp"
#include "compress/compress_memory.hpp"
#include "compress/hybrid_rule.hpp"
#include "pagh/error.hpp"

namespace pagh {
namespace {

using index = std::int64_t;
constexpr const char* kWhere = "pagh::compress";
// k is split into this many ranges whatever the thread count, so that results never depend on it.
constexpr index kPartitions = 16;
// Pairs of vectors transformed per fwht batch: about 512 KiB of vectors per thread, so that a
// batch stays in the core's L2 between scatter, transform and multiply-accumulate.
constexpr index kBatchBytes = index{512} << 10;

// Line k is column k of A or row k of B. Two sources: sparse (index, value) lists (CSC of A, CSR
// of B) and dense contiguous vectors (A's columns in place; the rows of a row-major B in place,
// those of a column-major B transposed once). Zeros are skipped when scattering; nnz(k) counts the
// nonzeros.
struct SparseLines {
  std::vector<index> start{0};
  std::vector<index> position;
  std::vector<double> value;
  index nnz(index k) const { return start[static_cast<std::size_t>(k + 1)] - start[static_cast<std::size_t>(k)]; }
  template <class F>
  void for_each(index k, F&& f) const {
    for (index e = start[static_cast<std::size_t>(k)]; e < start[static_cast<std::size_t>(k + 1)]; ++e)
      f(position[static_cast<std::size_t>(e)], value[static_cast<std::size_t>(e)]);
  }
};

template <class Scalar>
struct DenseLines {
  const Scalar* data = nullptr;  // line k at data[k * length, (k+1) * length)
  index length = 0;
  std::vector<index> nonzeros;   // per line
  Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic> owned;  // B^T when the source is B

  void count(index lines, int threads) {
    nonzeros.resize(static_cast<std::size_t>(lines));
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1 && lines * length > (1 << 20))
    for (index k = 0; k < lines; ++k) {
      index c = 0;
      for (index i = 0; i < length; ++i) c += data[k * length + i] != 0;
      nonzeros[static_cast<std::size_t>(k)] = c;
    }
  }
  index nnz(index k) const { return nonzeros[static_cast<std::size_t>(k)]; }
  template <class F>
  void for_each(index k, F&& f) const {
    const Scalar* line = data + k * length;
    for (index i = 0; i < length; ++i)
      if (line[i] != 0) f(i, static_cast<double>(line[i]));
  }
};

template <class Scalar>
DenseLines<Scalar> columns_of(const Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>& M, int threads) {
  DenseLines<Scalar> lines;
  lines.data = M.data(), lines.length = M.rows();
  lines.count(M.cols(), threads);
  return lines;
}

// Rows of a column-major B: B^T, built in square tiles (the columns read and the rows written stay
// in L1) with each row's nonzeros counted on the way; threads take disjoint blocks of rows.
template <class Scalar>
DenseLines<Scalar> rows_of(const Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>& M, int threads) {
  DenseLines<Scalar> lines;
  const index K = M.rows(), p = M.cols();
  lines.owned.resize(p, K);
  lines.nonzeros.assign(static_cast<std::size_t>(K), 0);
  constexpr index kTile = 32;
  const Scalar* src = M.data();
  Scalar* dst = lines.owned.data();
  const index blocks = (K + kTile - 1) / kTile;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1 && M.size() > (1 << 20))
  for (index q = 0; q < blocks; ++q) {
    const index k0 = q * kTile, k1 = std::min(K, k0 + kTile);
    index count[kTile] = {};
    for (index j0 = 0; j0 < p; j0 += kTile) {
      const index j1 = std::min(p, j0 + kTile);
      for (index k = k0; k < k1; ++k) {
        index c = 0;
        for (index j = j0; j < j1; ++j) {
          const Scalar v = src[j * K + k];
          dst[k * p + j] = v;
          c += v != Scalar(0);
        }
        count[k - k0] += c;
      }
    }
    for (index k = k0; k < k1; ++k) lines.nonzeros[static_cast<std::size_t>(k)] = count[k - k0];
  }
  lines.data = dst, lines.length = p;
  return lines;
}

// Rows of a row-major B are contiguous already: used in place, nothing copied.
template <class Scalar>
DenseLines<Scalar> rows_of(const Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>& M, int threads) {
  DenseLines<Scalar> lines;
  lines.data = M.data(), lines.length = M.cols();
  lines.count(M.rows(), threads);
  return lines;
}

template <class Scalar, int Order>
SparseLines lines_of_sparse(const Eigen::SparseMatrix<Scalar, Order>& M) {  // outer index = line
  SparseLines lines;
  lines.position.reserve(static_cast<std::size_t>(M.nonZeros()));
  lines.value.reserve(static_cast<std::size_t>(M.nonZeros()));
  for (index k = 0; k < M.outerSize(); ++k) {
    for (typename Eigen::SparseMatrix<Scalar, Order>::InnerIterator it(M, k); it; ++it)
      if (it.value() != Scalar(0)) lines.position.push_back(it.index()), lines.value.push_back(static_cast<double>(it.value()));
    lines.start.push_back(static_cast<index>(lines.position.size()));
  }
  return lines;
}

template <class Scalar>
SparseLines columns_of_sparse(const Eigen::SparseMatrix<Scalar>& M) {
  return lines_of_sparse(M);
}

template <class Scalar>
SparseLines rows_of_sparse(const Eigen::SparseMatrix<Scalar>& M) {
  return lines_of_sparse(Eigen::SparseMatrix<Scalar, Eigen::RowMajor>(M));
}

// What arranging the inputs into lines allocates: B transposed and a nonzero count per line (dense);
// an (index, value) pair per nonzero of each, the row-major copy of B while converting, and the line
// starts (sparse).
template <class Scalar, int OrderB>
double dense_lines_bytes(const Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>& A,
                         const Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, OrderB>& B) {
  const double transposed = OrderB == Eigen::RowMajor ? 0.0 : static_cast<double>(B.size()) * sizeof(Scalar);
  return transposed + static_cast<double>(A.cols() + B.rows()) * sizeof(index);
}
template <class Scalar>
double sparse_lines_bytes(const Eigen::SparseMatrix<Scalar>& A, const Eigen::SparseMatrix<Scalar>& B) {
  const double nnz = static_cast<double>(A.nonZeros()) + static_cast<double>(B.nonZeros());
  return nnz * (sizeof(index) + sizeof(double)) + static_cast<double>(B.nonZeros()) * (sizeof(Scalar) + sizeof(int)) +
         static_cast<double>(A.cols() + B.rows() + 2) * sizeof(index);
}

double elapsed_ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since).count();
}

// The engine for one storage type T of the transformed vectors; Acc accumulates.
template <class T, class LinesA, class LinesB>
class Engine {
  using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;

 public:
  Engine(const LinesA& a, const LinesB& b, index K, const SketchParams& params, index buckets,
         const HashTables& tables)
      : a_(a), b_(b), K_(K), params_(params), buckets_(buckets), tables_(tables), d_(params.repetitions) {
    pairs_per_batch_ = std::clamp<index>(kBatchBytes / (2 * buckets * static_cast<index>(sizeof(T))), 1, 64);
  }

  // Returns d sketches c_t (time domain), and fills the path counters of timings.
  std::vector<double> run(CompressTimings& timings) {
    const index partitions = std::min<index>(K_, kPartitions);
    const auto b = static_cast<std::size_t>(buckets_);
    std::vector<std::vector<Acc>> spectra(static_cast<std::size_t>(partitions));
    std::vector<std::vector<double>> direct(static_cast<std::size_t>(partitions));
    std::vector<char> use_direct(static_cast<std::size_t>(K_));
    for (index k = 0; k < K_; ++k) {
      const index na = a_.nnz(k), nb = b_.nnz(k);
      if (na == 0 || nb == 0) {
        ++timings.empty_k;
        continue;
      }
      use_direct[static_cast<std::size_t>(k)] = take_direct_path(na, nb, buckets_, params_.hybrid);
      ++(use_direct[static_cast<std::size_t>(k)] ? timings.direct_k : timings.transformed_k);
    }

    const int threads = params_.threads > 0 ? params_.threads : omp_get_max_threads();
    const auto start = std::chrono::steady_clock::now();
    std::string failure;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (threads > 1)
    for (index s = 0; s < partitions; ++s) {
      try {
        const index k_begin = K_ * s / partitions, k_end = K_ * (s + 1) / partitions;
        sketch_range(k_begin, k_end, use_direct, spectra[static_cast<std::size_t>(s)], direct[static_cast<std::size_t>(s)]);
      } catch (const std::exception& e) {
#pragma omp critical(pagh_compress_failure)
        failure = e.what();
      }
    }
    if (!failure.empty()) throw Error(kWhere, failure);
    timings.sketching_ms = elapsed_ms(start);

    // Sum the partitions in order, then one inverse transform per repetition: c_t = H P_t / b.
    const auto inverse_start = std::chrono::steady_clock::now();
    std::vector<Acc> spectrum(b * static_cast<std::size_t>(d_), Acc{0});
    std::vector<double> sketches(b * static_cast<std::size_t>(d_), 0.0);
    for (index s = 0; s < partitions; ++s) {
      const auto& part = spectra[static_cast<std::size_t>(s)];
      if (!part.empty())
        for (std::size_t h = 0; h < part.size(); ++h) spectrum[h] += part[h];
      const auto& time_part = direct[static_cast<std::size_t>(s)];
      if (!time_part.empty())
        for (std::size_t h = 0; h < time_part.size(); ++h) sketches[h] += time_part[h];
    }
    fwht::Plan inverse({.n = buckets_, .batch = d_}, fwht::dtype_of<Acc>(),
                       {.normalization = fwht::Normalization::inverse, .stabilization = params_.stabilization,
                        .algorithm = params_.algorithm, .threads = threads});
    inverse.execute(std::span<Acc>(spectrum));
    for (std::size_t h = 0; h < sketches.size(); ++h) sketches[h] += static_cast<double>(spectrum[h]);
    timings.inverse_ms = elapsed_ms(inverse_start);
    return sketches;
  }

 private:
  // Inner indices [k_begin, k_end): spectra += sum_k (H a_k) . (H b_k), direct += thin outer products.
  void sketch_range(index k_begin, index k_end, const std::vector<char>& use_direct, std::vector<Acc>& spectrum,
                    std::vector<double>& direct) {
    const auto b = static_cast<std::size_t>(buckets_);
    fwht::Options options{.stabilization = params_.stabilization, .algorithm = params_.algorithm, .compute = params_.compute, .threads = 1};
    fwht::Plan plan({.n = buckets_, .batch = 2 * pairs_per_batch_}, fwht::dtype_of<T>(), options);
    std::vector<T> vectors(2 * static_cast<std::size_t>(pairs_per_batch_) * b);
    std::vector<Acc> scatter(b);
    std::vector<index> pending;  // the k whose vectors are in `vectors`
    for (int t = 0; t < d_; ++t) {
      for (index k = k_begin; k < k_end; ++k) {
        if (a_.nnz(k) == 0 || b_.nnz(k) == 0) continue;
        if (use_direct[static_cast<std::size_t>(k)]) {
          if (direct.empty()) direct.assign(b * static_cast<std::size_t>(d_), 0.0);
          add_outer_product(t, k, direct.data() + static_cast<std::size_t>(t) * b);
          continue;
        }
        const auto slot = static_cast<std::size_t>(pending.size());
        scatter_line<true>(a_, k, t, scatter, vectors.data() + 2 * slot * b);
        scatter_line<false>(b_, k, t, scatter, vectors.data() + (2 * slot + 1) * b);
        pending.push_back(k);
        if (static_cast<index>(pending.size()) == pairs_per_batch_) flush(plan, vectors, pending, t, spectrum);
      }
      flush(plan, vectors, pending, t, spectrum);
    }
  }

  // x[h1(i)] += s1(i) A_ik (or x[h2(j)] += s2(j) B_kj), summed in Acc, stored as T.
  template <bool kIsA, class Lines>
  void scatter_line(const Lines& lines, index k, int t, std::vector<Acc>& scatter, T* out) const {
    std::fill(scatter.begin(), scatter.end(), Acc{0});
    lines.for_each(k, [&](index pos, double v) {
      const auto h = kIsA ? tables_.h1(t, pos) : tables_.h2(t, pos);
      const int s = kIsA ? tables_.s1(t, pos) : tables_.s2(t, pos);
      scatter[h] += static_cast<Acc>(s < 0 ? -v : v);
    });
    for (std::size_t h = 0; h < scatter.size(); ++h) out[h] = T(scatter[h]);
  }

  void flush(fwht::Plan& plan, std::vector<T>& vectors, std::vector<index>& pending, int t, std::vector<Acc>& spectrum) {
    if (pending.empty()) return;
    const auto b = static_cast<std::size_t>(buckets_);
    if (spectrum.empty()) spectrum.assign(b * static_cast<std::size_t>(d_), Acc{0});
    // Unused slots of a partial batch are transformed too (cheap, and they hold finite old data).
    plan.execute(std::span<T>(vectors));
    Acc* P = spectrum.data() + static_cast<std::size_t>(t) * b;
    for (std::size_t slot = 0; slot < pending.size(); ++slot) {
      const T* ha = vectors.data() + 2 * slot * b;
      const T* hb = ha + b;
      for (std::size_t h = 0; h < b; ++h) P[h] += to_acc(ha[h]) * to_acc(hb[h]);
    }
    pending.clear();
  }

  static Acc to_acc(T v) {
    if constexpr (std::is_same_v<T, fwht::f16> || std::is_same_v<T, fwht::bf16>)
      return static_cast<float>(v);
    else
      return static_cast<Acc>(v);
  }

  // c_t[h1(i) XOR h2(j)] += s1(i) s2(j) A_ik B_kj for the nonzeros of column k of A and row k of B.
  void add_outer_product(int t, index k, double* c) const {
    a_.for_each(k, [&](index i, double a) {
      const double ai = tables_.s1(t, i) * a;
      const std::uint32_t hi = tables_.h1(t, i);
      b_.for_each(k, [&](index j, double b) { c[hi ^ tables_.h2(t, j)] += ai * (tables_.s2(t, j) * b); });
    });
  }

  const LinesA& a_;
  const LinesB& b_;
  index K_;
  SketchParams params_;
  index buckets_;
  const HashTables& tables_;
  int d_;
  index pairs_per_batch_ = 1;
};

std::string planned_what(index buckets, const SketchParams& params) {
  return "the sketch (d = " + std::to_string(params.repetitions) + ", b = " + std::to_string(buckets) +
         ") with its hash tables and working buffers";
}

// Before the inputs are rearranged into lines: their copies plus the least the sketch itself needs
// (the d sketches and the summed spectrum), so that an impossible request fails before any copy.
void check_memory_before_lines(index m, index p, double lines_bytes, const SketchParams& params) {
  if (params.max_memory_bytes == 0 || params.repetitions < 1) return;
  const index buckets = sketch_length(m, p, params);
  const double d = params.repetitions;
  compress_memory::check(lines_bytes + compress_memory::table_bytes(m, p, params.repetitions) +
                             d * static_cast<double>(buckets) * (8 + compress_memory::accumulator_bytes(params.precision)),
                         params, kWhere, planned_what(buckets, params));
}

// lines_bytes: what arranging the inputs into lines allocated (compress_memory's plan counts it).
template <class LinesA, class LinesB>
CompressedProduct compress_lines(const LinesA& a, const LinesB& b, index m, index p, index K, const SketchParams& params,
                                 double lines_bytes, std::chrono::steady_clock::time_point start) {
  const index buckets = sketch_length(m, p, params);
  if (params.repetitions < 1) throw Error(kWhere, "repetitions = " + std::to_string(params.repetitions) + " must be at least 1");
  if (params.threads < 0) throw Error(kWhere, "threads = " + std::to_string(params.threads) + " is negative");
  if (fwht::is_integer(params.precision))
    throw Error(kWhere, "precision " + std::string(fwht::to_string(params.precision)) + " is not supported (use f64, f32, f16 or bf16)");
  // Validate the FWHT options once, with a clear message, before any work.
  fwht::Plan({.n = buckets}, params.precision,
             {.stabilization = params.stabilization, .algorithm = params.algorithm, .compute = params.compute, .threads = 1});

  const int threads = params.threads > 0 ? params.threads : omp_get_max_threads();
  compress_memory::check(lines_bytes + compress_memory::table_bytes(m, p, params.repetitions) +
                             compress_memory::engine_bytes(a, b, K, buckets, params, threads, std::min<index>(K, kPartitions),
                                                           kBatchBytes),
                         params, kWhere, planned_what(buckets, params));

  CompressTimings timings;
  const auto hash_start = std::chrono::steady_clock::now();
  HashTables tables = draw_hash_tables(params.seed, params.repetitions, m, p, buckets);
  timings.hashing_ms = elapsed_ms(hash_start);
  std::vector<double> sketches;
  switch (params.precision) {
    case fwht::DType::f64: sketches = Engine<double, LinesA, LinesB>(a, b, K, params, buckets, tables).run(timings); break;
    case fwht::DType::f32: sketches = Engine<float, LinesA, LinesB>(a, b, K, params, buckets, tables).run(timings); break;
    case fwht::DType::f16: sketches = Engine<fwht::f16, LinesA, LinesB>(a, b, K, params, buckets, tables).run(timings); break;
    case fwht::DType::bf16: sketches = Engine<fwht::bf16, LinesA, LinesB>(a, b, K, params, buckets, tables).run(timings); break;
    default: break;
  }
  timings.total_ms = elapsed_ms(start);
  return CompressedProduct(m, p, K, params, std::move(tables), std::move(sketches), timings);
}

}  // namespace

void check_inner_dimensions(std::int64_t m, std::int64_t K, std::int64_t K2, std::int64_t p, const char* where) {
  if (K != K2)
    throw Error(where, "dimension mismatch: A is " + std::to_string(m) + " x " + std::to_string(K) + " but B is " +
                           std::to_string(K2) + " x " + std::to_string(p) + " (cols(A) must equal rows(B))");
}

std::int64_t sketch_length(std::int64_t m, std::int64_t p, const SketchParams& params) {
  if (m < 0 || p < 0) throw Error("pagh::sketch_length", "negative dimensions");
  if (params.buckets != 0) {
    if (!fwht::is_power_of_two(params.buckets) || params.buckets > (std::int64_t{1} << 32))
      throw Error("pagh::sketch_length", "buckets = " + std::to_string(params.buckets) + " is not a power of two <= 2^32");
    return params.buckets;
  }
  if (!(params.pad > 0) || !std::isfinite(params.pad))
    throw Error("pagh::sketch_length", "pad = " + std::to_string(params.pad) + " must be positive");
  const double want = std::max(1.0, std::ceil(params.pad * static_cast<double>(std::max(m, p))));
  if (want > 4294967296.0)
    throw Error("pagh::sketch_length", "pad * max(m, p) = " + std::to_string(want) + " exceeds the largest sketch, 2^32");
  return static_cast<std::int64_t>(std::bit_ceil(static_cast<std::uint64_t>(want)));
}

// The timed region starts before the inputs are arranged into lines: that is part of the cost.
namespace {
template <class Scalar, int OrderB>
CompressedProduct compress_dense(const Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>& A,
                                 const Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, OrderB>& B, const SketchParams& params) {
  const auto start = std::chrono::steady_clock::now();
  check_inner_dimensions(A.rows(), A.cols(), B.rows(), B.cols(), kWhere);
  const int threads = params.threads > 0 ? params.threads : omp_get_max_threads();
  const double lines_bytes = dense_lines_bytes(A, B);
  check_memory_before_lines(A.rows(), B.cols(), lines_bytes, params);
  return compress_lines(columns_of(A, threads), rows_of(B, threads), A.rows(), B.cols(), A.cols(), params, lines_bytes, start);
}
}  // namespace

CompressedProduct compress(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B, const SketchParams& params) {
  return compress_dense(A, B, params);
}
CompressedProduct compress(const Eigen::MatrixXf& A, const Eigen::MatrixXf& B, const SketchParams& params) {
  return compress_dense(A, B, params);
}
CompressedProduct compress(const Eigen::MatrixXd& A, const RowMajorMatrixXd& B, const SketchParams& params) {
  return compress_dense(A, B, params);
}
CompressedProduct compress(const Eigen::MatrixXf& A, const RowMajorMatrixXf& B, const SketchParams& params) {
  return compress_dense(A, B, params);
}
CompressedProduct compress(const Eigen::SparseMatrix<double>& A, const Eigen::SparseMatrix<double>& B, const SketchParams& params) {
  const auto start = std::chrono::steady_clock::now();
  check_inner_dimensions(A.rows(), A.cols(), B.rows(), B.cols(), kWhere);
  const double lines_bytes = sparse_lines_bytes(A, B);
  check_memory_before_lines(A.rows(), B.cols(), lines_bytes, params);
  return compress_lines(columns_of_sparse(A), rows_of_sparse(B), A.rows(), B.cols(), A.cols(), params, lines_bytes, start);
}
CompressedProduct compress(const Eigen::SparseMatrix<float>& A, const Eigen::SparseMatrix<float>& B, const SketchParams& params) {
  const auto start = std::chrono::steady_clock::now();
  check_inner_dimensions(A.rows(), A.cols(), B.rows(), B.cols(), kWhere);
  const double lines_bytes = sparse_lines_bytes(A, B);
  check_memory_before_lines(A.rows(), B.cols(), lines_bytes, params);
  return compress_lines(columns_of_sparse(A), rows_of_sparse(B), A.rows(), B.cols(), A.cols(), params, lines_bytes, start);
}

}  // namespace pagh
