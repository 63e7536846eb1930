// What the commands print: the collected results of a run (multiply, query, top) and the text and
// JSON renderings of them (output_text.cpp, output_json.cpp). Keeping the data separate from the
// rendering is what makes the two formats say the same thing.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "sketch/compressed_product.hpp"
#include "sketch/noise_model.hpp"
#include "sketch/refine.hpp"
#include "sketch/verify.hpp"
#include "correlation.hpp"

namespace pagh_mm {

inline constexpr int kJsonSchemaVersion = 1;

enum class OutputFormat;  // --format (common_options.hpp)

// The interval's coverage and the family-wise false-positive rate of the significance flags.
inline constexpr double kIntervalCoverage = 0.95;
inline constexpr double kFalsePositiveRate = 0.05;

// An entry as reported: 1-based indices, the estimate, its interval, and the exact value when known.
struct ReportedEntry {
  std::int64_t row = 0, col = 0;  // 1-based
  double estimate = 0, spread = 0;  // spread: half the range of the d single estimates
  double half_width = 0;            // estimate +- half_width covers the exact value with kIntervalCoverage, for an entry chosen beforehand
  double low = 0, high = 0;         // the interval with kIntervalCoverage for the entry as selected (NoiseModel::selected_interval)
  double z = 0;                     // |estimate| / tail sigma (Significance::tail_sigma)
  double noise_expected = 0;        // pure-noise entries expected to agree as well among the m * p
  bool significant = true;          // noise_expected <= kFalsePositiveRate (exact answers: always)
  bool known = false;               // computed exactly, not estimated (a subtracted diagonal entry)
  std::optional<double> exact;
};

// An entry whose value is known exactly: interval 0, significant.
void mark_known(ReportedEntry& e);

// The entries with their intervals and significance from the sketch's noise model
// (sketch/noise_model.hpp); z uses the tail sigma, without the buckets of significant entries.
// `cutoff`: the entries were selected for |estimate| above it (pagh::keep_top in sketch/noise_model.hpp; 0
// for entries chosen before sketching).
std::vector<ReportedEntry> to_reported(const std::vector<pagh::Entry>& entries, const pagh::CompressedProduct& product,
                                       const pagh::NoiseModel& noise, double cutoff);
// Exact answers: intervals of width 0, every entry significant.
std::vector<ReportedEntry> to_reported_exact(const std::vector<pagh::Entry>& entries);
// Refined answers (exact values of the sketch's candidates): known, interval 0; `exact` is left
// for --verify to fill.
std::vector<ReportedEntry> to_reported_refined(const std::vector<pagh::Entry>& entries);

// Whether the reported entries stand out from noise (sketch/noise_model.hpp), and how they were
// found (sketch/recovery.hpp).
struct Significance {
  double candidates = 0;        // m * p estimates
  double sigma = 0;             // ||C||_F / sqrt(b), from the sketch
  double tail_sigma = 0;        // the same without the buckets of significant entries (NoiseModel::tail_sigma)
  double ceiling = 0;           // the magnitude the largest of the m * p noise medians is expected to reach, in sigmas
  double half_width = 0;        // of every interval (kIntervalCoverage)
  double agreement_needed = 0;  // the agreement of the d repetitions that makes an entry significant
  std::size_t significant = 0;  // reported entries that are
  double expected_noise = 0;    // pure-noise estimates expected at or above the weakest reported |estimate|
  double min_z = 0, max_z = 0;  // the weakest and strongest reported z
  std::int64_t resolve_buckets = 0;  // b at which the strongest reported entry would be significant (0: it is)
  std::string recovery;       // which method found the entries, and its cost
};
Significance assess_significance(const pagh::NoiseModel& noise, const std::vector<ReportedEntry>& entries,
                                 const pagh::RecoveryStats& recovery);
// One line for stderr when no reported entry is significant; empty otherwise.
std::string noise_warning(const Significance& s, std::size_t reported);

struct InputSummary {
  std::string path;
  std::int64_t rows = 0, cols = 0, stored_entries = 0;
  std::string representation;  // dense | sparse
};

// Which entries were asked for.
struct Selection {
  enum class Kind { top, threshold, query } kind = Kind::top;
  std::size_t k = 0;               // top (and the cap of threshold when limited)
  std::optional<double> threshold;
  bool limited = false;            // threshold with a --top cap
};

// Sketch or exact (--method), and why.
struct MethodReport {
  std::string requested;  // auto | sketch | exact
  std::string ran;        // sketch | exact
  std::string reason;     // why, with the cost model's estimates
  std::string engine;     // what computes the exact product
  bool exact_on_host = true;  // Eigen on the CPU, also under a device backend when that is cheaper
  double sketch_estimate_ms = 0, exact_estimate_ms = 0;
  bool exact() const { return ran == "exact"; }
};

struct MultiplyReport {
  InputSummary a, b;
  MethodReport method;
  std::int64_t inner = 0;
  std::string backend_requested, backend_name, backend_device, backend_note;
  const pagh::CompressedProduct* product = nullptr;  // null when the exact method ran
  Selection selection;
  std::vector<ReportedEntry> entries;
  Significance significance;
  std::optional<pagh::RefinedAnswer> refinement;  // when the reported entries are exact values of candidates
  std::optional<pagh::Metrics> metrics;  // of the sketch, against C minus the subtracted diagonal
  std::optional<double> reported_recall; // --verify of a refined answer: its share of the exact answer (ties counted)
  std::string size_note;                 // how the sketch length was chosen, when not by --pad/--buckets
  std::optional<Standardized> correlation;  // --correlation
  bool diagonal_subtracted = false;
  double diagonal_share = 0;             // of ||C||_F^2
  std::string exact_method;
  double read_a_ms = 0, read_b_ms = 0, select_ms = 0, refine_ms = 0, exact_ms = 0, verify_ms = 0, write_ms = 0, total_ms = 0;
  double earlier_ms = 0;  // sketches and selections at lengths given up for a longer one (-k K, --resolve)
  std::string output_path, output_format;  // -o and "coordinate" | "array"
  std::int64_t output_entries = 0;
  std::string sketch_path;                 // --save-sketch
};

struct SketchAnswerReport {
  std::string command;      // "query" | "top"
  std::string sketch_path;
  const pagh::CompressedProduct* product = nullptr;
  Selection selection;
  std::vector<ReportedEntry> entries;
  Significance significance;
  std::string output_path;  // top -o
};

void print_multiply_text(const MultiplyReport& report, std::ostream& out);
void print_multiply_json(const MultiplyReport& report, std::ostream& out);
void print_sketch_answer_text(const SketchAnswerReport& report, std::ostream& out);
void print_sketch_answer_json(const SketchAnswerReport& report, std::ostream& out);
// The entry table alone, one header row, for spreadsheets and pandas (output_csv.cpp).
void print_entries_delimited(const std::vector<ReportedEntry>& entries, bool with_rank, char separator, std::ostream& out);
// The report in the --format chosen (output_csv.cpp dispatches to the renderers).
void print_multiply(const MultiplyReport& report, OutputFormat format, std::ostream& out);
void print_sketch_answer(const SketchAnswerReport& report, OutputFormat format, std::ostream& out);

// "b = 1024 buckets (pad 8), d = 3 sketches, seed 1, fp32, folklore, stabilization none"
std::string describe_sketch(const pagh::CompressedProduct& product);

}  // namespace pagh_mm
