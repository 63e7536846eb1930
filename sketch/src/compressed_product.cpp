// Queries of a compressed product: estimates, error bars, top-k, thresholds, decompression.
#include "sketch/compressed_product.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <string>

#include "pagh/error.hpp"

namespace pagh {
namespace {

using index = std::int64_t;
// Below this many entries a query runs on one thread (a parallel region costs more than it saves).
constexpr double kParallelEntries = 1 << 16;

// Order of "larger" entries: |value| descending, then row, then column ascending (deterministic).
bool ranks_before(const Entry& x, const Entry& y) {
  const double ax = std::fabs(x.value), ay = std::fabs(y.value);
  if (ax != ay) return ax > ay;
  if (x.row != y.row) return x.row < y.row;
  return x.col < y.col;
}

// The entry (i, j) from its d single estimates (reordered): median and half the range.
Entry summarize(std::int64_t i, std::int64_t j, std::span<double> single) {
  const auto [lo, hi] = std::minmax_element(single.begin(), single.end());
  Entry e{i, j, 0.0, 0.5 * (*hi - *lo)};
  e.value = median_of(single);  // sorts `single`: after the range is taken
  return e;
}

// Gathers column j's d single estimates from row_estimates() output into `single`.
void gather(const std::vector<double>& row, std::int64_t cols, std::int64_t j, std::vector<double>& single) {
  for (std::size_t t = 0; t < single.size(); ++t) single[t] = row[t * static_cast<std::size_t>(cols) + static_cast<std::size_t>(j)];
}

}  // namespace

double median_of(std::span<double> v) {
  const std::size_t n = v.size();
  if (n == 0) return 0.0;
  std::sort(v.begin(), v.end());
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

CompressedProduct::CompressedProduct(std::int64_t rows, std::int64_t cols, std::int64_t inner, const SketchParams& params,
                                     HashTables tables, std::vector<double> sketches, CompressTimings timings)
    : rows_(rows), cols_(cols), inner_(inner), params_(params), tables_(std::move(tables)), sketches_(std::move(sketches)),
      timings_(timings) {
  if (sketches_.size() != static_cast<std::size_t>(tables_.buckets * tables_.repetitions))
    throw Error("pagh::CompressedProduct", "sketch storage does not match d * b");
  long double sum = 0;
  for (double c : sketches_) sum += static_cast<long double>(c) * c;
  frobenius_ = std::sqrt(static_cast<double>(sum / tables_.repetitions));
}

std::span<const double> CompressedProduct::sketch(int t) const {
  if (t < 0 || t >= repetitions()) throw Error("pagh::CompressedProduct::sketch", "repetition " + std::to_string(t) + " out of range");
  return std::span<const double>(sketches_).subspan(static_cast<std::size_t>(t * buckets()), static_cast<std::size_t>(buckets()));
}

double CompressedProduct::sigma() const { return frobenius_ / std::sqrt(static_cast<double>(buckets())); }

Entry CompressedProduct::entry(std::int64_t i, std::int64_t j) const {
  if (i < 0 || i >= rows_ || j < 0 || j >= cols_)
    throw Error("pagh::CompressedProduct::estimate", "entry (" + std::to_string(i) + ", " + std::to_string(j) +
                                                         ") is outside the " + std::to_string(rows_) + " x " +
                                                         std::to_string(cols_) + " product");
  const int d = repetitions();
  std::vector<double> single(static_cast<std::size_t>(d));
  for (int t = 0; t < d; ++t) {
    const double c = sketches_[static_cast<std::size_t>(t * buckets() + (tables_.h1(t, i) ^ tables_.h2(t, j)))];
    single[static_cast<std::size_t>(t)] = tables_.s1(t, i) * tables_.s2(t, j) * c;
  }
  return summarize(i, j, single);
}

double CompressedProduct::estimate(std::int64_t i, std::int64_t j) const { return entry(i, j).value; }

void CompressedProduct::row_estimates(std::int64_t i, std::vector<double>& out) const {
  const int d = repetitions();
  out.resize(static_cast<std::size_t>(d * cols_));
  for (int t = 0; t < d; ++t) {
    const double* c = sketches_.data() + t * buckets();
    const std::uint32_t hi = tables_.h1(t, i);
    const double si = tables_.s1(t, i);
    double* o = out.data() + t * cols_;
    const std::uint32_t* h2 = tables_.bucket_b.data() + t * cols_;
    const std::int8_t* s2 = tables_.sign_b.data() + t * cols_;
    for (index j = 0; j < cols_; ++j) o[j] = si * s2[j] * c[hi ^ h2[j]];
  }
}

Eigen::MatrixXd CompressedProduct::decompress(std::size_t max_bytes) const {
  const double bytes = 8.0 * static_cast<double>(rows_) * static_cast<double>(cols_);
  if (bytes > static_cast<double>(max_bytes))
    throw Error("pagh::CompressedProduct::decompress", "the " + std::to_string(rows_) + " x " + std::to_string(cols_) +
                                                           " estimate needs " + std::to_string(bytes / 1e9) +
                                                           " GB, more than the allowed " + std::to_string(max_bytes / 1e9) + " GB");
  Eigen::MatrixXd out(rows_, cols_);
  const int d = repetitions();
#pragma omp parallel if (static_cast<double>(rows_) * static_cast<double>(cols_) > kParallelEntries)
  {
    std::vector<double> row, single(static_cast<std::size_t>(d));
#pragma omp for schedule(static)
    for (index i = 0; i < rows_; ++i) {
      row_estimates(i, row);
      for (index j = 0; j < cols_; ++j) {
        gather(row, cols_, j, single);
        out(i, j) = median_of(single);
      }
    }
  }
  return out;
}

std::vector<Entry> CompressedProduct::top_k(std::size_t k) const {
  std::vector<Entry> all;
  if (k == 0 || rows_ == 0 || cols_ == 0) return all;
  const int d = repetitions();
#pragma omp parallel if (static_cast<double>(rows_) * static_cast<double>(cols_) > kParallelEntries)
  {
    std::vector<Entry> heap;  // the best k seen by this thread; heap.front() is the weakest
    std::vector<double> row, single(static_cast<std::size_t>(d));
#pragma omp for schedule(dynamic, 16)
    for (index i = 0; i < rows_; ++i) {
      row_estimates(i, row);
      for (index j = 0; j < cols_; ++j) {
        gather(row, cols_, j, single);
        const Entry e = summarize(i, j, single);
        if (heap.size() < k) {
          heap.push_back(e);
          std::push_heap(heap.begin(), heap.end(), ranks_before);
        } else if (ranks_before(e, heap.front())) {
          std::pop_heap(heap.begin(), heap.end(), ranks_before);
          heap.back() = e;
          std::push_heap(heap.begin(), heap.end(), ranks_before);
        }
      }
    }
#pragma omp critical(pagh_top_k_merge)
    all.insert(all.end(), heap.begin(), heap.end());
  }
  std::sort(all.begin(), all.end(), ranks_before);
  if (all.size() > k) all.resize(k);
  return all;
}

std::vector<Entry> CompressedProduct::above(double threshold, std::size_t max_entries) const {
  if (!(threshold >= 0)) throw Error("pagh::CompressedProduct::above", "threshold must be a non-negative number");
  const int d = repetitions();
  const int threads = static_cast<double>(rows_) * static_cast<double>(cols_) > kParallelEntries ? omp_get_max_threads() : 1;
  std::vector<std::vector<Entry>> found(static_cast<std::size_t>(threads));
  std::atomic<std::size_t> total{0};
  std::atomic<bool> too_many{false};
#pragma omp parallel num_threads(threads)
  {
    auto& mine = found[static_cast<std::size_t>(omp_get_thread_num())];
    std::vector<double> row, single(static_cast<std::size_t>(d));
#pragma omp for schedule(static)
    for (index i = 0; i < rows_; ++i) {
      if (too_many.load(std::memory_order_relaxed)) continue;
      row_estimates(i, row);
      for (index j = 0; j < cols_; ++j) {
        gather(row, cols_, j, single);
        const Entry e = summarize(i, j, single);
        if (std::fabs(e.value) >= threshold) {
          mine.push_back(e);
          if (++total > max_entries) too_many = true;
        }
      }
    }
  }
  if (too_many)
    throw TooManyEntries("pagh::CompressedProduct::above", "more than " + std::to_string(max_entries) +
                                                               " entries have |estimate| >= " + std::to_string(threshold) +
                                                               "; raise the threshold or use top_k");
  std::vector<Entry> out;  // static schedule: thread blocks are in row order
  for (auto& part : found) out.insert(out.end(), part.begin(), part.end());
  return out;
}

}  // namespace pagh
