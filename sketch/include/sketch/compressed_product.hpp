// The compressed product: d sketches c_t of length b of C = A B, with the hash tables that map an
// entry (i, j) to its bucket h1(i) XOR h2(j). Every query reads the sketches; nothing ever
// materializes the m x p product unless decompress() is asked for.
#pragma once

#include <Eigen/Dense>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "sketch/entry.hpp"
#include "sketch/hashing.hpp"
#include "sketch/memory_limit.hpp"
#include "sketch/params.hpp"
#include "sketch/recovery.hpp"
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
};

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
  std::span<const double> sketch(int t) const;

  // The product as a backend returns it: `host` (the sketches, the tables) with `device` holding the
  // same sketches on a GPU, which then answers top_k, above and decompress. Copies share `device`.
  static CompressedProduct with_device_sketches(CompressedProduct host, std::shared_ptr<const DeviceSketches> device);
  // Whether top_k, above and decompress run on a device (until subtract() changes the sketches).
  bool on_device() const { return device_ != nullptr; }
  // That device copy (nullptr when there is none).
  const DeviceSketches* device_sketches() const { return device_.get(); }

  // Median of the d unbiased single estimates s1(i) s2(j) c_t[h1(i) XOR h2(j)]; for even d the
  // mean of the two middle ones. Throws pagh::Error if (i, j) is out of range.
  double estimate(std::int64_t i, std::int64_t j) const;
  Entry entry(std::int64_t i, std::int64_t j) const;
  // sqrt(mean_t sum_h c_t[h]^2): each sum is an unbiased estimate of ||AB||_F^2.
  double frobenius_estimate() const { return frobenius_; }
  // Standard deviation bound of one single estimate, ||AB||_F / sqrt(b), from the estimate above.
  double sigma() const;

  // Removes entries of C known exactly (for instance the diagonal of a Gram product, cheap to
  // compute) from the sketches, by linearity: the product then estimates C minus them, and their
  // energy no longer adds to every other estimate's noise. Throws pagh::Error for an entry out of
  // range. (A saved sketch keeps no record of it: save() writes the sketches as they are.) The
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
  void measure();    // frobenius_ and finite_ from the sketches
  // The d single estimates of row i against every column, written to out[t * cols + j].
  void row_estimates(std::int64_t i, std::vector<double>& out) const;
  // The oracle: every one of the m * p estimates is evaluated (streaming over rows in parallel).
  std::vector<Entry> top_k_exhaustive(std::size_t k) const;
  std::vector<Entry> above_exhaustive(double threshold, std::size_t max_entries) const;

  std::int64_t rows_, cols_, inner_;
  SketchParams params_;
  HashTables tables_;
  std::vector<double> sketches_;
  CompressTimings timings_;
  double frobenius_ = 0;
  bool finite_ = true;  // every sketch value finite (heavy-bucket recovery needs it)
  std::shared_ptr<const DeviceSketches> device_;  // the same sketches on a device, if a backend keeps them
};

// Median of a small array (reorders it); the mean of the two middle values for even sizes.
double median_of(std::span<double> values);

}  // namespace pagh
