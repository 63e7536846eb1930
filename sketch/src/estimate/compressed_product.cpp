// Queries of a compressed product: estimates, error bars, top-k, thresholds, decompression.
#include "sketch/compressed_product.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <string>

#include "compress/huge_pages.hpp"
#include "estimate/entry_ranking.hpp"
#include "estimate/float_medians.hpp"
#include "pagh/error.hpp"

namespace pagh {
namespace {

using detail::summarize;
using index = std::int64_t;
// Below this many entries a query runs on one thread (a parallel region costs more than it saves).
constexpr double kParallelEntries = 1 << 16;
// A product kept on the device reads single entries there (a copy of d values each) up to this many,
// then makes its host copy, which costs less than more of them (verify reads one per nonzero of C).
constexpr std::int64_t kDeviceEntryReads = 4096;

// Gathers column j's d single estimates from row_estimates() output into `single`.
void gather(const std::vector<double>& row, std::int64_t cols, std::int64_t j, std::vector<double>& single) {
  for (std::size_t t = 0; t < single.size(); ++t) single[t] = row[t * static_cast<std::size_t>(cols) + static_cast<std::size_t>(j)];
}

}  // namespace

double median_of(std::span<double> v) {
  const std::size_t n = v.size();
  if (n == 0) return 0.0;
  // Three (the default d): the middle value without sorting, the value std::sort would put there.
  if (n == 3) return std::max(std::min(v[0], v[1]), std::min(std::max(v[0], v[1]), v[2]));
  std::sort(v.begin(), v.end());
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

CompressedProduct::CompressedProduct(std::int64_t rows, std::int64_t cols, std::int64_t inner, const SketchParams& params,
                                     HashTables tables, std::vector<double> sketches, CompressTimings timings)
    : rows_(rows), cols_(cols), inner_(inner), params_(params), tables_(std::move(tables)), sketches_(std::move(sketches)),
      timings_(timings) {
  if (host_values().size() != static_cast<std::size_t>(tables_.buckets * tables_.repetitions))
    throw Error("pagh::CompressedProduct", "sketch storage does not match d * b");
  measure();
}

CompressedProduct::CompressedProduct(std::int64_t rows, std::int64_t cols, std::int64_t inner, const SketchParams& params,
                                     HashTables tables, CompressTimings timings, std::shared_ptr<const DeviceSketches> device)
    : rows_(rows), cols_(cols), inner_(inner), params_(params), tables_(std::move(tables)), timings_(timings), device_(std::move(device)) {
  if (!device_) throw Error("pagh::CompressedProduct::kept_on_device", "no device sketches");
  measure_on_device();
}

void CompressedProduct::measure_on_device() {
  statistics_ = std::make_shared<const SketchStatistics>(device_->statistics());
  if (statistics_->values != static_cast<double>(tables_.buckets) * tables_.repetitions)
    throw Error("pagh::CompressedProduct::kept_on_device", "device sketches do not match d * b");
  finite_ = statistics_->finite;
  if (finite_ && !std::isfinite(statistics_->energy)) {
    statistics_.reset();  // squares beyond the range of double: measured on the host (long double there)
    measure();
    return;
  }
  // As measure() computes it from the same sum.
  frobenius_ = static_cast<double>(std::sqrt(static_cast<long double>(statistics_->energy) / tables_.repetitions));
}

CompressedProduct CompressedProduct::kept_on_device(std::int64_t rows, std::int64_t cols, std::int64_t inner, const SketchParams& params,
                                                    HashTables tables, std::shared_ptr<const DeviceSketches> device,
                                                    CompressTimings timings) {
  return CompressedProduct(rows, cols, inner, params, std::move(tables), timings, std::move(device));
}

const std::vector<double>& CompressedProduct::host_values() const {
  return sketches_.get([&](std::vector<double>& values) {
    if (!device_) throw Error("pagh::CompressedProduct", "no sketch values");
    cpu_sketch::assign_zeroed(values, static_cast<std::size_t>(tables_.buckets) * static_cast<std::size_t>(tables_.repetitions));
    device_->copy_to_host(values);
  });
}

SketchStatistics CompressedProduct::statistics() const {
  if (!sketches_.ready() && statistics_) return *statistics_;
  return measure_sketch_values(host_values());
}

void DeviceSketches::copy_to_host(std::span<double>) const {
  throw Error("pagh::DeviceSketches::copy_to_host", "this device copy offers no host copy");
}
void DeviceSketches::values_at(std::span<const std::int64_t>, std::span<double>) const {
  throw Error("pagh::DeviceSketches::values_at", "this device copy offers no single values");
}
SketchStatistics DeviceSketches::statistics() const {
  throw Error("pagh::DeviceSketches::statistics", "this device copy offers no statistics");
}

void CompressedProduct::measure() {
  // In long double up to the square root: sketch values beyond 1e154 still have a finite norm.
  long double sum = 0;
  for (double c : host_values()) sum += static_cast<long double>(c) * c;
  finite_ = std::isfinite(sum);  // an inf or NaN value makes the sum inf or NaN
  frobenius_ = static_cast<double>(std::sqrt(sum / tables_.repetitions));
}

CompressedProduct CompressedProduct::with_device_sketches(CompressedProduct host, std::shared_ptr<const DeviceSketches> device) {
  host.device_ = std::move(device);
  return host;
}

void CompressedProduct::subtract(std::span<const Entry> known) {
  for (const Entry& e : known)
    if (e.row < 0 || e.row >= rows_ || e.col < 0 || e.col >= cols_)
      throw Error("pagh::CompressedProduct::subtract", "entry (" + std::to_string(e.row) + ", " + std::to_string(e.col) + ") out of range");
  if (!sketches_.ready() && device_) {
    if (std::shared_ptr<const DeviceSketches> less = device_->minus(known)) {  // kept on the device: subtracted there
      device_ = std::move(less);
      measure_on_device();
      return;
    }
  }
  host_values();    // the subtraction is made on the host values
  device_.reset();  // the device's copy does not hold it
  statistics_.reset();
  const HashTables& h = tables_;
  for (int t = 0; t < h.repetitions; ++t) {
    double* c = sketches_.made().data() + static_cast<std::size_t>(t) * static_cast<std::size_t>(h.buckets);
    for (const Entry& e : known)
      c[h.h1(t, e.row) ^ h.h2(t, e.col)] -= double(h.s1(t, e.row) * h.s2(t, e.col)) * e.value;
  }
  measure();
}

std::span<const double> CompressedProduct::sketch(int t) const {
  if (t < 0 || t >= repetitions()) throw Error("pagh::CompressedProduct::sketch", "repetition " + std::to_string(t) + " out of range");
  return std::span<const double>(host_values()).subspan(static_cast<std::size_t>(t * buckets()), static_cast<std::size_t>(buckets()));
}

double CompressedProduct::sigma() const { return frobenius_ / std::sqrt(static_cast<double>(buckets())); }

Entry CompressedProduct::entry(std::int64_t i, std::int64_t j) const {
  std::vector<double> single = estimates_of(i, j);  // range checked there
  return summarize(i, j, single);
}

std::vector<double> CompressedProduct::estimates_of(std::int64_t i, std::int64_t j) const {
  if (i < 0 || i >= rows_ || j < 0 || j >= cols_)
    throw Error("pagh::CompressedProduct::estimate", "entry (" + std::to_string(i) + ", " + std::to_string(j) +
                                                         ") is outside the " + std::to_string(rows_) + " x " +
                                                         std::to_string(cols_) + " product");
  const int d = repetitions();
  std::vector<double> single(static_cast<std::size_t>(d));
  if (sketches_.ready() || !device_ || sketches_.note_read() > kDeviceEntryReads) {
    single_estimates(i, j, single);
    return single;
  }
  std::vector<std::int64_t> at(static_cast<std::size_t>(d));
  for (int t = 0; t < d; ++t) at[static_cast<std::size_t>(t)] = t * buckets() + (tables_.h1(t, i) ^ tables_.h2(t, j));
  device_->values_at(at, single);
  for (int t = 0; t < d; ++t) single[static_cast<std::size_t>(t)] = tables_.s1(t, i) * tables_.s2(t, j) * single[static_cast<std::size_t>(t)];
  return single;
}

void CompressedProduct::single_estimates(std::int64_t i, std::int64_t j, std::span<double> out) const {
  for (int t = 0; t < repetitions(); ++t) {
    const double c = host_values()[static_cast<std::size_t>(t * buckets() + (tables_.h1(t, i) ^ tables_.h2(t, j)))];
    out[static_cast<std::size_t>(t)] = tables_.s1(t, i) * tables_.s2(t, j) * c;
  }
}

double CompressedProduct::estimate(std::int64_t i, std::int64_t j) const { return entry(i, j).value; }

void CompressedProduct::row_estimates(std::int64_t i, std::vector<double>& out) const {
  const int d = repetitions();
  out.resize(static_cast<std::size_t>(d * cols_));
  const double* values = host_values().data();
  for (int t = 0; t < d; ++t) {
    const double* c = values + t * buckets();
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
  if (device_) return device_->decompress(max_bytes);
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

std::vector<Entry> CompressedProduct::top_k_exhaustive(std::size_t k) const {
  if (k == 0 || rows_ == 0 || cols_ == 0) return {};
  const int d = repetitions();
  const detail::FloatMedians rounded(tables_, host_values(), finite_);
  detail::SharedBestK best(k);
#pragma omp parallel if (static_cast<double>(rows_) * static_cast<double>(cols_) > kParallelEntries)
  {
    std::vector<Entry> batch;
    batch.reserve(detail::SharedBestK::kBatch);
    std::vector<double> row, single(static_cast<std::size_t>(d));
    std::vector<index> reaching;
    // Most entries are below the floor: their median decides it, without the rest of summarize();
    // where the rounded medians are at hand, theirs does.
    const auto offer = [&](index i, index j) {
      if (std::fabs(median_of(single)) < best.floor()) return;
      best.offer(summarize(i, j, single), batch);
    };
#pragma omp for schedule(dynamic, 16)
    for (index i = 0; i < rows_; ++i) {
      if (rounded.usable()) {  // the floor only rises along the row: its value at the start is a safe one
        rounded.reaching(i, detail::FloatMedians::bound(best.floor()), reaching);
        for (index j : reaching) {
          single_estimates(i, j, single);
          offer(i, j);
        }
        continue;
      }
      row_estimates(i, row);
      for (index j = 0; j < cols_; ++j) {
        gather(row, cols_, j, single);
        offer(i, j);
      }
    }
    best.hand_over(batch);
  }
  return best.ranked();
}

std::vector<Entry> CompressedProduct::above_exhaustive(double threshold, std::size_t max_entries) const {
  const int d = repetitions();
  const int threads = static_cast<double>(rows_) * static_cast<double>(cols_) > kParallelEntries ? omp_get_max_threads() : 1;
  const detail::FloatMedians rounded(tables_, host_values(), finite_);
  const float bound = detail::FloatMedians::bound(threshold);
  std::vector<std::vector<Entry>> found(static_cast<std::size_t>(threads));
  std::atomic<std::size_t> total{0};
  std::atomic<bool> too_many{false};
#pragma omp parallel num_threads(threads)
  {
    auto& mine = found[static_cast<std::size_t>(omp_get_thread_num())];
    std::vector<double> row, single(static_cast<std::size_t>(d));
    std::vector<index> reaching;
    const auto take = [&](index i, index j) {
      const Entry e = summarize(i, j, single);
      if (std::fabs(e.value) >= threshold) {
        mine.push_back(e);
        if (++total > max_entries) too_many = true;
      }
    };
#pragma omp for schedule(static)
    for (index i = 0; i < rows_; ++i) {
      if (too_many.load(std::memory_order_relaxed)) continue;
      if (rounded.usable()) {  // entries whose rounded |median| is below the rounded threshold are below it
        rounded.reaching(i, bound, reaching);
        for (index j : reaching) single_estimates(i, j, single), take(i, j);
        continue;
      }
      row_estimates(i, row);
      for (index j = 0; j < cols_; ++j) {
        gather(row, cols_, j, single);
        take(i, j);
      }
    }
  }
  if (too_many)
    throw too_many_entries("pagh::CompressedProduct::above", max_entries, threshold);
  std::vector<Entry> out;  // static schedule: thread blocks are in row order
  for (auto& part : found) out.insert(out.end(), part.begin(), part.end());
  return out;
}

}  // namespace pagh
