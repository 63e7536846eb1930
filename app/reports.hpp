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
#include "sketch/verify.hpp"

namespace pagh_mm {

inline constexpr int kJsonSchemaVersion = 1;

enum class OutputFormat;  // --format (common_options.hpp)

// An entry as reported: 1-based indices, the estimate, its error bar, and the exact value when known.
struct ReportedEntry {
  std::int64_t row = 0, col = 0;  // 1-based
  double estimate = 0, spread = 0;
  std::optional<double> exact;
  double z = 0;  // |estimate| / sigma
};

// sigma: the product's sigma(), for the z-scores.
std::vector<ReportedEntry> to_reported(const std::vector<pagh::Entry>& entries, double sigma);

// Whether the reported entries stand out from noise (sketch/significance.hpp), and how they were
// found (sketch/recovery.hpp).
struct Significance {
  double candidates = 0;      // m * p estimates
  double ceiling = 0;         // z of the largest estimate noise alone is expected to reach
  double expected_noise = 0;  // pure-noise estimates expected at or above the weakest reported z
  double min_z = 0, max_z = 0;  // the weakest and strongest reported z
  std::int64_t resolve_buckets = 0;  // b at which the weakest reported entry would reach the ceiling (0: it does)
  std::string recovery;       // which method found the entries, and its cost
};
Significance assess_significance(const pagh::CompressedProduct& product, const std::vector<ReportedEntry>& entries,
                                 const pagh::RecoveryStats& recovery);
// One line for stderr when every reported entry is below the noise ceiling; empty otherwise.
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

struct MultiplyReport {
  InputSummary a, b;
  std::int64_t inner = 0;
  std::string backend_requested, backend_name, backend_device, backend_note;
  const pagh::CompressedProduct* product = nullptr;
  Selection selection;
  std::vector<ReportedEntry> entries;
  Significance significance;
  std::optional<pagh::Metrics> metrics;
  std::string exact_method;
  double read_a_ms = 0, read_b_ms = 0, select_ms = 0, exact_ms = 0, verify_ms = 0, write_ms = 0, total_ms = 0;
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
