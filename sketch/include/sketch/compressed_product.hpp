// The compressed product: d sketches c_t of length b of C = A B, with the hash tables that map an
// entry (i, j) to its bucket h1(i) XOR h2(j). Every query reads the sketches; nothing ever
// materializes the m x p product unless decompress() is asked for.
#pragma once

#include <Eigen/Dense>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "sketch/entry.hpp"
#include "sketch/hashing.hpp"
#include "sketch/memory_limit.hpp"
#include "sketch/params.hpp"
#include "sketch/recovery.hpp"
#include "sketch/sketch_statistics.hpp"
#include "sketch/too_many_entries.hpp"

namespace pagh {

// Wall-clock times of compress(), in milliseconds, and how many k took each path.
struct CompressTimings {
  double hashing_ms = 0, sketching_ms = 0, inverse_ms = 0, total_ms = 0;
  std::int64_t transformed_k = 0, direct_k = 0, empty_k = 0;
};

// The sketches of a product as a GPU backend still holds them on its device: top_k, above and
// decompress computed there with the CompressedProduct semantics (the same answers), only the answer
// copied back. Implemented by pagh::sketch_cuda; a CompressedProduct returned by pagh::sketch with
// Backend::cuda holds one beside its host copy of the same sketches.
class DeviceSketches {
 public:
  virtual ~DeviceSketches() = default;
  virtual std::vector<Entry> top_k(std::size_t k, Recovery how, RecoveryStats* stats) const = 0;
  virtual std::vector<Entry> above(double threshold, std::size_t max_entries, Recovery how, RecoveryStats* stats) const = 0;
  virtual Eigen::MatrixXd decompress(std::size_t max_bytes) const = 0;
  // The d * b sketch values in device memory (sketch t at [t*b, (t+1)*b)), for collectives on
  // device buffers (distributed/nccl_sum.hpp); nullptr if this copy does not expose them.
  virtual const double* device_values() const { return nullptr; }
  // What a product kept on the device (CompressedProduct::kept_on_device) reads there instead of a
  // host copy; the defaults throw pagh::Error (a copy that offers none of them is only usable beside
  // host values). copy_to_host: all d * b values into `out`; values_at: out[i] = the value at
  // positions[i] (t * b + bucket); statistics: measured as measure_sketch_values measures host values.
  virtual void copy_to_host(std::span<double> out) const;
  virtual void values_at(std::span<const std::int64_t> positions, std::span<double> out) const;
  virtual SketchStatistics statistics() const;
  // A copy of these sketches with `known` (in range) subtracted as CompressedProduct::subtract
  // subtracts them from host values, bit for bit; nullptr where this copy cannot (subtract() then
  // works on the host copy).
  virtual std::shared_ptr<const DeviceSketches> minus(std::span<const Entry>) const { return nullptr; }
};

namespace detail {
// The d * b sketch values on the host, made at once or at the first read (by `fill`, once, whichever
// thread reads first). Copies copy the values (or the fact that none were made yet).
class HostValues {
 public:
  HostValues() = default;
  explicit HostValues(std::vector<double> values) : values_(std::move(values)), ready_(true) {}
  HostValues(const HostValues& other) { *this = other; }
  HostValues& operator=(const HostValues& other) {
    if (this == &other) return *this;
    std::scoped_lock both(lock_, other.lock_);
    values_ = other.values_;
    ready_.store(other.ready_.load(std::memory_order_acquire), std::memory_order_release);
    return *this;
  }
  HostValues(HostValues&& other) noexcept { *this = std::move(other); }
  HostValues& operator=(HostValues&& other) noexcept {
    if (this == &other) return *this;
    std::scoped_lock both(lock_, other.lock_);
    values_ = std::move(other.values_);
    ready_.store(other.ready_.load(std::memory_order_acquire), std::memory_order_release);
    return *this;
  }
  bool ready() const { return ready_.load(std::memory_order_acquire); }
  template <class Fill>
  const std::vector<double>& get(Fill&& fill) const {
    if (!ready()) {
      std::lock_guard<std::mutex> hold(lock_);
      if (!ready_.load(std::memory_order_relaxed)) {
        fill(values_);
        ready_.store(true, std::memory_order_release);
      }
    }
    return values_;
  }
  // For subtract(): the values, made.
  std::vector<double>& made() { return values_; }
  // Counts a read of single values elsewhere (on the device) and returns how many there were.
  std::int64_t note_read() const { return reads_.fetch_add(1, std::memory_order_relaxed) + 1; }

 private:
  mutable std::atomic<std::int64_t> reads_{0};
  mutable std::mutex lock_;
  mutable std::vector<double> values_;
  mutable std::atomic<bool> ready_{false};
};
}  // namespace detail

class CompressedProduct {
 public:
  // sketches: d * b values, sketch t at [t*b, (t+1)*b). Used by compress() and load().
  CompressedProduct(std::int64_t rows, std::int64_t cols, std::int64_t inner, const SketchParams& params, HashTables tables,
                    std::vector<double> sketches, CompressTimings timings = {});

  std::int64_t rows() const { return rows_; }
  std::int64_t cols() const { return cols_; }
  std::int64_t inner() const { return inner_; }
  std::int64_t buckets() const { return tables_.buckets; }
  int repetitions() const { return tables_.repetitions; }
  const SketchParams& params() const { return params_; }
  const HashTables& tables() const { return tables_; }
  const CompressTimings& timings() const { return timings_; }
  // Sketch t's values on the host (a product kept on the device copies all d sketches here first).
  std::span<const double> sketch(int t) const;

  // The product as a backend returns it: `host` (the sketches, the tables) with `device` holding the
  // same sketches on a GPU, which then answers top_k, above and decompress. Copies share `device`.
  static CompressedProduct with_device_sketches(CompressedProduct host, std::shared_ptr<const DeviceSketches> device);
  // Whether top_k, above and decompress run on a device (until subtract() changes the sketches).
  bool on_device() const { return device_ != nullptr; }
  // That device copy (nullptr when there is none).
  const DeviceSketches* device_sketches() const { return device_.get(); }
  // The product as a GPU backend returns it without copying the sketches: `device` holds them and
  // answers the queries, the statistics and the values of single entries; the host copy of the
  // d * b values is made only when something reads them all (sketch(), save(), subtract(), host
  // queries). tables: the host's copy of the hash tables.
  static CompressedProduct kept_on_device(std::int64_t rows, std::int64_t cols, std::int64_t inner, const SketchParams& params,
                                          HashTables tables, std::shared_ptr<const DeviceSketches> device,
                                          CompressTimings timings = {});
  // Whether the host holds the d * b values (always, unless kept_on_device and none was needed yet).
  bool host_copy_made() const { return sketches_.ready(); }
  // What the noise model and the overflow check read (sketch_statistics.hpp): measured on the host
  // values, or on the device while the host has none.
  SketchStatistics statistics() const;

  // Median of the d unbiased single estimates s1(i) s2(j) c_t[h1(i) XOR h2(j)]; for even d the
  // mean of the two middle ones. Throws pagh::Error if (i, j) is out of range.
  double estimate(std::int64_t i, std::int64_t j) const;
  Entry entry(std::int64_t i, std::int64_t j) const;
  // The d single estimates s1(i) s2(j) c_t[h1(i) XOR h2(j)] of (i, j), range checked as estimate();
  // read on the device while the host has no copy of the values.
  std::vector<double> estimates_of(std::int64_t i, std::int64_t j) const;
  // sqrt(mean_t sum_h c_t[h]^2): each sum is an unbiased estimate of ||AB||_F^2.
  double frobenius_estimate() const { return frobenius_; }
  // Standard deviation bound of one single estimate, ||AB||_F / sqrt(b), from the estimate above.
  double sigma() const;

  // Removes entries of C known exactly (for instance the diagonal of a Gram product, cheap to
  // compute) from the sketches, by linearity: the product then estimates C minus them, and their
  // energy no longer adds to every other estimate's noise. Throws pagh::Error for an entry out of
  // range. (A saved sketch keeps no record of it: save() writes the sketches as they are.) A product
  // kept on the device subtracts there (DeviceSketches::minus) and stays there; otherwise the
  // queries then run on the host sketches, which alone hold the subtraction.
  void subtract(std::span<const Entry> known);

  // The whole m x p estimate; throws pagh::Error if it would need more than max_bytes.
  Eigen::MatrixXd decompress(std::size_t max_bytes = std::size_t{8} << 30) const;
  // The k entries of largest |estimate| (ties: smaller row, then column). The answer is the same
  // whichever Recovery runs (recovery.hpp): by default candidates come from the heavy buckets and
  // the cost follows d * b and k, not m * p.
  std::vector<Entry> top_k(std::size_t k, Recovery how = Recovery::automatic, RecoveryStats* stats = nullptr) const;
  // Entries with |estimate| >= threshold, in row-major order; throws TooManyEntries if more than
  // max_entries qualify (so a low threshold cannot exhaust memory), pagh::Error for a threshold
  // that is negative or NaN.
  std::vector<Entry> above(double threshold, std::size_t max_entries = std::size_t{1} << 26, Recovery how = Recovery::automatic,
                           RecoveryStats* stats = nullptr) const;

  // Versioned binary file: header (dimensions, parameters, seed), the sketches, and a checksum;
  // the hash tables are redrawn from the seed on load. Written by the project's output rule
  // (pagh/output_file.hpp): a regular file atomically (temporary + rename), a symbolic link's target
  // likewise, a device or FIFO directly; failures throw pagh::OutputError.
  void save(const std::string& path) const;
  // load() validates every header field and the file's size before reading the sketches, refuses
  // non-finite sketch values, and throws MemoryLimitExceeded (before allocating) when the loaded
  // product would need more than limits.max_bytes; any other problem throws pagh::Error.
  static CompressedProduct load(const std::string& path, const LoadLimits& limits = {});

 private:
  class Recoverer;  // heavy_buckets.cpp
  // kept_on_device: no host values; frobenius_ and finite_ from the device's statistics.
  CompressedProduct(std::int64_t rows, std::int64_t cols, std::int64_t inner, const SketchParams& params, HashTables tables,
                    CompressTimings timings, std::shared_ptr<const DeviceSketches> device);
  void measure_on_device();  // statistics_, frobenius_ and finite_ from device_
  void measure();    // frobenius_ and finite_ from the sketches
  // The host values, copied from the device first where the product was kept there.
  const std::vector<double>& host_values() const;
  // The d single estimates of row i against every column, written to out[t * cols + j].
  void row_estimates(std::int64_t i, std::vector<double>& out) const;
  // The d single estimates of entry (i, j), in range, written to out[t].
  void single_estimates(std::int64_t i, std::int64_t j, std::span<double> out) const;
  // The oracle: every one of the m * p estimates is evaluated (streaming over rows in parallel).
  std::vector<Entry> top_k_exhaustive(std::size_t k) const;
  std::vector<Entry> above_exhaustive(double threshold, std::size_t max_entries) const;

  std::int64_t rows_, cols_, inner_;
  SketchParams params_;
  HashTables tables_;
  detail::HostValues sketches_;
  CompressTimings timings_;
  double frobenius_ = 0;
  bool finite_ = true;  // every sketch value finite (heavy-bucket recovery needs it)
  std::shared_ptr<const DeviceSketches> device_;         // the same sketches on a device, if a backend keeps them
  std::shared_ptr<const SketchStatistics> statistics_;  // kept_on_device: measured there, until subtract()
};

// Median of a small array (reorders it); the mean of the two middle values for even sizes.
double median_of(std::span<double> values);

}  // namespace pagh
