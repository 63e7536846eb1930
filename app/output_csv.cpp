// --format csv|tsv: the entry table alone (one header row, then one row per entry), for pandas and
// spreadsheets, and the one place that dispatches a report to its renderer by --format. Numbers are
// written in their shortest exact form (std::to_chars), so a program reads back the very doubles
// the text table rounds; the sketch parameters and metrics are in --format json.
#include <charconv>
#include <ostream>
#include <string>
#include <vector>

#include "common_options.hpp"
#include "reports.hpp"

namespace pagh_mm {
namespace {

std::string shortest(double value) {
  char text[64];
  const auto result = std::to_chars(text, text + sizeof text, value);
  return {text, static_cast<std::size_t>(result.ptr - text)};
}

// Whether ReportedEntry carries the z-score (|estimate| / sigma) that the text table shows: the
// column follows the field, so csv never lags behind the other formats.
template <class Entry>
constexpr bool kHasZ = requires(const Entry& e) { e.z; };

// A template, so that the branch for a field the struct lacks is never compiled.
template <class Entry>
void put_z(const Entry& e, char separator, std::ostream& out) {
  if constexpr (kHasZ<Entry>) out << separator << shortest(e.z);
}

}  // namespace

// Columns as in the text table: rank (for ranked lists), row, col (1-based), estimate, spread
// (the text's "+-"), z, and with --verify exact and error (estimate - exact). No field needs
// quoting: every one is a number.
void print_entries_delimited(const std::vector<ReportedEntry>& entries, bool with_rank, char separator, std::ostream& out) {
  const bool with_exact = !entries.empty() && entries.front().exact.has_value();
  std::vector<const char*> columns;
  if (with_rank) columns.push_back("rank");
  columns.insert(columns.end(), {"row", "col", "estimate", "spread"});
  if constexpr (kHasZ<ReportedEntry>) columns.push_back("z");
  if (with_exact) columns.insert(columns.end(), {"exact", "error"});
  for (std::size_t c = 0; c < columns.size(); ++c) out << (c ? std::string(1, separator) : "") << columns[c];
  out << '\n';
  std::size_t rank = 0;
  for (const auto& e : entries) {
    if (with_rank) out << ++rank << separator;
    out << e.row << separator << e.col << separator << shortest(e.estimate) << separator << shortest(e.spread);
    put_z(e, separator, out);
    if (with_exact) out << separator << shortest(*e.exact) << separator << shortest(e.estimate - *e.exact);
    out << '\n';
  }
}

void print_multiply(const MultiplyReport& report, OutputFormat format, std::ostream& out) {
  switch (format) {
    case OutputFormat::json: return print_multiply_json(report, out);
    case OutputFormat::csv: return print_entries_delimited(report.entries, true, ',', out);
    case OutputFormat::tsv: return print_entries_delimited(report.entries, true, '\t', out);
    case OutputFormat::text: break;
  }
  print_multiply_text(report, out);
}

void print_sketch_answer(const SketchAnswerReport& report, OutputFormat format, std::ostream& out) {
  const bool ranked = report.selection.kind != Selection::Kind::query;
  switch (format) {
    case OutputFormat::json: return print_sketch_answer_json(report, out);
    case OutputFormat::csv: return print_entries_delimited(report.entries, ranked, ',', out);
    case OutputFormat::tsv: return print_entries_delimited(report.entries, ranked, '\t', out);
    case OutputFormat::text: break;
  }
  print_sketch_answer_text(report, out);
}

}  // namespace pagh_mm
