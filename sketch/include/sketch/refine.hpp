// Exact values for the entries a sketch selects. A sketch is a good way to *find* the large entries
// of A * B and a poor way to *measure* them: an estimate carries the noise of every entry that shares
// its buckets, and the entries ranked first are the ones whose noise happened to lift them (the
// winner's curse), so even calibrated intervals cover less often among them than for a random entry.
// With A and B at hand one entry costs a single scalar product, nnz(A[i, :]) + nnz(B[:, j]) work, so
// the candidates the sketch ranks first are evaluated exactly and re-ranked by their exact values.
//
// What stays uncertain is only which entries were *not* evaluated. Every entry with
// |estimate| > cutoff was; an entry that belongs in the answer (|C(i, j)| >= V, the weakest exact
// value kept) but was not evaluated has an error of at least V - cutoff, which the sketch's noise
// model bounds: at most N(V) = (||C||_F^2 - the evaluated entries' energy) / V^2 entries of C reach
// V (and no more than the entries not evaluated), so the expected number missed is at most
// N(V) * P(|error| >= V - cutoff). The candidate set
// grows (at least 4x a round, and at once past the cutoff at which the bound would reach the rate
// asked for) until the bound is below that rate, the work limit is reached, or a round does not
// lower the cutoff (ties of it); either way the bound is reported. ||C||_F^2 comes from the sketch, so the bound is an estimate.
#pragma once

#include <Eigen/Dense>
#include <Eigen/SparseCore>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <variant>
#include <vector>

#include "sketch/entry.hpp"

namespace pagh {

class NoiseModel;

// C(i, j) = sum_k A(i, k) B(k, j) in double, k ascending, for chosen (i, j). Holds a row-major copy
// of a sparse A (its rows are what one entry reads) and references to the rest: the operands must
// outlive it.
class ExactEntries {
 public:
  ExactEntries(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B);
  ExactEntries(const Eigen::SparseMatrix<double>& A, const Eigen::SparseMatrix<double>& B);
  ExactEntries(const Eigen::MatrixXd& A, const Eigen::SparseMatrix<double>& B);
  ExactEntries(const Eigen::SparseMatrix<double>& A, const Eigen::MatrixXd& B);
  // Values computed elsewhere, e.g. summed over processes that each hold some of the inner indices:
  // evaluate(positions, threads) gives C at the positions (in their order), cost(i, j) the scalar
  // products one evaluation forms. Positions are checked against rows x cols before either is called.
  struct Delegate {
    std::function<std::vector<Entry>(const std::vector<Entry>& positions, int threads)> evaluate;
    std::function<double(std::int64_t i, std::int64_t j)> cost;
  };
  ExactEntries(std::int64_t rows, std::int64_t inner, std::int64_t cols, Delegate delegate);

  std::int64_t rows() const { return rows_; }
  std::int64_t cols() const { return cols_; }
  // Throws pagh::Error for a position outside the product.
  double operator()(std::int64_t i, std::int64_t j) const;
  // The scalar products one evaluation of (i, j) forms (the work model of the limit below).
  double cost(std::int64_t i, std::int64_t j) const;
  // Every entry's exact value (spread 0), on `threads` threads (0 = all); the result does not
  // depend on the thread count.
  std::vector<Entry> evaluate(const std::vector<Entry>& positions, int threads = 0) const;

 private:
  void check(std::int64_t i, std::int64_t j) const;
  double value(std::int64_t i, std::int64_t j) const;  // unchecked
  using RowMajor = Eigen::SparseMatrix<double, Eigen::RowMajor>;
  std::variant<const Eigen::MatrixXd*, RowMajor> a_;
  std::variant<const Eigen::MatrixXd*, const Eigen::SparseMatrix<double>*> b_;
  std::shared_ptr<const Delegate> delegate_;  // set: a_ and b_ are unused
  std::int64_t rows_ = 0, inner_ = 0, cols_ = 0;
};

// The limits keep refinement a small part of a sketch's cost: where the sketch is too short to
// certify the answer within them (ties near the cutoff, a noisy sketch), the bound says so and a
// longer sketch is the remedy, not millions of candidates.
struct RefineOptions {
  double missed_rate = 0.05;           // stop when the expected number of missed entries is at most this
  std::size_t first_candidates = 64;   // the first round evaluates max(4 k, this) candidates
  double max_products = 1e8;           // scalar products all rounds together may form
  std::size_t max_candidates = 1024;   // candidates all rounds together (at least k)
  double universe = 0;                 // entries that may belong to the answer (0: rows x cols; less
                                       // where some are known and left out, e.g. a diagonal)
  // Entries whose exact values are known apart from the sketch (e.g. a diagonal subtracted from it):
  // they join the answer and its ranking, so V is the weakest entry of the whole answer. Outside
  // the universe; their energy is not in the sketch's. A view: the entries must outlive the call.
  std::span<const Entry> known;
  int threads = 0;                     // for the exact evaluations (0 = all)
};

// The candidate limit pagh-mm uses for k entries of a product with `entries` entries: candidates
// come from heavy-bucket recovery, whose cost grows with their number (steeply where many estimates
// tie), so max(1024, 16 k); a product small enough to scan (<= 2^24 entries) affords max(4096, 64 k).
std::size_t candidate_limit(double entries, std::size_t k);

struct RefinedAnswer {
  std::vector<Entry> entries;   // exact values (spread 0), ranked |value| desc, row, col: the evaluated
                                // ones nonzero, then RefineOptions::known where they rank
  std::size_t candidates = 0;   // distinct entries evaluated exactly
  double cutoff = 0;            // every entry with |estimate| > cutoff was evaluated
  double expected_missed = 0;   // the bound above (an estimate: ||C||_F comes from the sketch)
  double products = 0;          // scalar products formed
  int rounds = 0;
  bool complete = false;        // expected_missed <= RefineOptions::missed_rate
};

// The `n` entries with the largest |estimate| (CompressedProduct::top_k, or a device's).
using TopCandidates = std::function<std::vector<Entry>(std::size_t n)>;
// Every entry with |estimate| >= t, at most `cap` (throws TooManyEntries beyond).
using CandidatesAbove = std::function<std::vector<Entry>(double t, std::size_t cap)>;

// The k entries of largest |C(i, j)| among the candidates, with exact values. energy: ||C||_F^2 of
// what the sketch holds (CompressedProduct::frobenius_estimate() squared).
RefinedAnswer refine_top_k(const TopCandidates& candidates, const NoiseModel& noise, double energy, const ExactEntries& exact,
                           std::size_t k, const RefineOptions& options = {});
// Every candidate with |C(i, j)| >= threshold (> 0), exact, at most max_entries of them (more is
// TooManyEntries, as CompressedProduct::above). The candidates are the entries whose estimate is
// within the noise of the threshold: |estimate| >= threshold - delta, delta such that the
// expected number missed is within the rate.
RefinedAnswer refine_above(const CandidatesAbove& candidates, const NoiseModel& noise, double energy, const ExactEntries& exact,
                           double threshold, std::size_t max_entries, const RefineOptions& options = {});

}  // namespace pagh
