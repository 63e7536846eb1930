// The text rendering of results: aligned, 1-based, for people. Numbers use %g with enough digits to
// tell estimates apart; exact values of integer products print as integers.
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <string>

#include "common_options.hpp"
#include "reports.hpp"

namespace pagh_mm {
namespace {

std::string format(const char* pattern, auto... values) {
  char buffer[512];
  std::snprintf(buffer, sizeof buffer, pattern, values...);
  return buffer;
}

std::string number(double v) { return format("%.6g", v); }

void print_entry_table(const std::vector<ReportedEntry>& entries, bool with_rank, std::ostream& out) {
  const bool with_exact = !entries.empty() && entries.front().exact.has_value();
  out << (with_rank ? " rank" : "") << format("%7s %7s %14s %11s %11s %7s %-6s %11s", "row", "col", "estimate", "low", "high", "z", "", "spread");
  if (with_exact) out << format(" %14s %11s", "exact", "error");
  out << '\n';
  std::size_t rank = 0;
  for (const auto& e : entries) {
    if (with_rank) out << format("%5zu", ++rank);
    out << format("%7" PRId64 " %7" PRId64 " %14.6g %11.5g %11.5g %7.3g %-6s %11.4g", e.row, e.col, e.estimate, e.low, e.high, e.z,
                  e.known ? "exact" : e.significant ? "" : "noise", e.spread);
    if (with_exact) out << format(" %14.6g %11.4g", *e.exact, e.estimate - *e.exact);
    out << '\n';
  }
}

std::string selection_heading(const Selection& s, std::size_t found, int sketches) {
  // Selected entries' intervals allow for the selection (NoiseModel::selected_interval); queried ones need not.
  const std::string given = s.kind == Selection::Kind::query ? "" : ", given that the entry was selected for its |estimate|";
  const std::string bars = "(1-based; low..high is the 95% interval of the exact value" + given +
                           "; \"noise\": not told from noise at a 5% false-positive rate; spread is half the range of the " +
                           std::to_string(sketches) + " single estimates)";
  switch (s.kind) {
    case Selection::Kind::top:
      return "top " + std::to_string(found) + " entries by |estimate| " + bars;
    case Selection::Kind::threshold:
      if (found == 0) return "no entry has |estimate| >= " + number(*s.threshold);
      return std::to_string(found) + " entries with |estimate| >= " + number(*s.threshold) +
             (s.limited ? " (the largest " + std::to_string(s.k) + " at most)" : "") + " " + bars;
    case Selection::Kind::query:
      return "estimates " + bars;
  }
  return "";
}

// How many reported entries stand out from noise, and what the intervals and z-scores mean.
void print_significance(const Significance& s, std::size_t reported, std::ostream& out) {
  if (reported == 0) return;
  out << format("noise     %zu of %zu entries are significant (all d repetitions agree on at least %.4g; noise alone "
                "reaches that among %.3g candidates with probability <= 5%%); the largest of the pure-noise estimates is "
                "expected near %.3g sigma; z uses the tail sigma %.4g (sigma without the buckets of significant entries)\n",
                s.significant, reported, s.agreement_needed, s.candidates, s.ceiling, s.tail_sigma);
}

}  // namespace

std::string describe_sketch(const pagh::CompressedProduct& product) {
  const auto& p = product.params();
  std::string text = "b = " + std::to_string(product.buckets()) + " buckets";
  // Name the padding only when it is what chose b (not an explicit --buckets).
  pagh::SketchParams by_pad = p;
  by_pad.buckets = 0;
  // With an explicit b, pad * max(m, p) may exceed the largest sketch: then the pad did not choose b
  // (and sketch_length would refuse it; describing a valid sketch must not fail).
  const double by_pad_length = p.pad * static_cast<double>(std::max(product.rows(), product.cols()));
  if (p.pad > 0 && by_pad_length <= 4294967296.0 && pagh::sketch_length(product.rows(), product.cols(), by_pad) == product.buckets())
    text += " (pad " + number(p.pad) + ")";
  return text + ", d = " + std::to_string(product.repetitions()) + " sketches, seed " + std::to_string(p.seed) + ", " +
         precision_name(p.precision) + ", " + algorithm_name(p.algorithm) + ", stabilization " +
         stabilization_name(p.stabilization);
}

void print_multiply_text(const MultiplyReport& r, std::ostream& out) {
  out << format("product   C = A*B, %" PRId64 " x %" PRId64 " (inner dimension %" PRId64 ")\n", r.a.rows, r.b.cols, r.inner);
  for (const auto* in : {&r.a, &r.b})
    out << format("%-9s %s: %" PRId64 " x %" PRId64 ", %s, %" PRId64 " stored entries\n", in == &r.a ? "A" : "B",
                  in->path.c_str(), in->rows, in->cols, in->representation.c_str(), in->stored_entries);
  if (r.correlation)
    out << format("standard  --correlation: rows of A and columns of B centred and scaled to unit norm over the %" PRId64
                  " samples (C is their Pearson correlation); %" PRId64 " + %" PRId64 " constant ones have none\n",
                  r.inner, r.correlation->constant_rows_a, r.correlation->constant_cols_b);
  out << "method    " << r.method.reason << '\n';
  if (r.diagonal_subtracted)
    out << format("diagonal  computed exactly and subtracted from the sketch (%.3g of ||C||_F^2); its entries are marked exact\n",
                  r.diagonal_share);
  out << "backend   " << r.backend_name << ": " << r.backend_device << '\n';
  if (!r.product) {
    out << '\n' << (r.selection.kind == Selection::Kind::threshold ? std::to_string(r.entries.size()) + " entries with |value| >= " + number(*r.selection.threshold)
                                                                   : "top " + std::to_string(r.entries.size()) + " entries by |value|")
        << " of the exact product (1-based)" << (r.entries.empty() ? "\n" : ":\n");
    if (!r.entries.empty()) out << format(" rank %7s %7s %14s\n", "row", "col", "value");
    std::size_t rank = 0;
    for (const auto& e : r.entries) out << format("%5zu %7" PRId64 " %7" PRId64 " %14.6g\n", ++rank, e.row, e.col, e.estimate);
    out << format("\ntime (ms) read %.3g | exact %.3g", r.read_a_ms + r.read_b_ms, r.exact_ms);
    if (!r.output_path.empty()) out << format(" | write %.3g", r.write_ms);
    out << format(" | total %.3g\n", r.total_ms);
    if (!r.output_path.empty())
      out << "wrote     " << r.output_path << " (Matrix Market " << r.output_format << ", " << r.output_entries << " entries)\n";
    return;
  }
  const auto& c = *r.product;
  out << "sketch    " << describe_sketch(c) << '\n';
  out << "||C||_F   ~ " << number(c.frobenius_estimate()) << " (from the sketch); sigma = ||C||_F/sqrt(b) = "
      << number(c.sigma()) << " (std. dev. bound of one single estimate)\n\n";

  if (r.refinement) {
    const pagh::RefinedAnswer& x = *r.refinement;
    const bool above = r.selection.kind == Selection::Kind::threshold;
    out << (above ? std::to_string(r.entries.size()) + " entries with |value| >= " + number(*r.selection.threshold)
                  : "top " + std::to_string(r.entries.size()) + " entries by |value|")
        << " (1-based; exact values of the sketch's candidates)" << (r.entries.empty() ? "\n" : ":\n");
    if (!r.entries.empty()) print_entry_table(r.entries, true, out);
    out << format("exact     %zu candidates evaluated exactly from A and B (every entry with |estimate| > %.4g; %.3g scalar "
                  "products, %d round%s); entries missed that belong here: %.3g expected%s\n",
                  x.candidates, x.cutoff, x.products, x.rounds, x.rounds == 1 ? "" : "s", x.expected_missed,
                  x.complete ? "" : " (the answer may be incomplete)");
  } else {
    out << selection_heading(r.selection, r.entries.size(), c.repetitions()) << (r.entries.empty() ? "\n" : ":\n");
    if (!r.entries.empty()) print_entry_table(r.entries, true, out);
    print_significance(r.significance, r.entries.size(), out);
  }

  if (r.metrics) {
    const auto& m = *r.metrics;
    out << "\nverification against the exact product" << (r.diagonal_subtracted ? " minus its diagonal" : "") << " (" << r.exact_method << ", " << format("%.3g", r.exact_ms) << " ms):\n";
    const auto line = [&](const std::string& label, const std::string& value) {
      out << format("  %-28s %s\n", label.c_str(), value.c_str());
    };
    if (m.all_entries) {
      line("relative Frobenius error", format("%.4g   (||C^ - C||_F / ||C||_F over all entries)", m.relative_frobenius_error));
      line("max |error|", format("%.4g = %.3g sigma", m.max_abs_error, m.max_error_in_sigmas));
    } else {
      line("relative Frobenius error", "not computed (it needs all m*p estimates; the product is too large to form)");
      line("max |error|", format("%.4g = %.3g sigma   (over the nonzeros of C and the top-%zu)", m.max_abs_error,
                                 m.max_error_in_sigmas, m.top_k));
    }
    line("||C||_F exact / estimated", format("%.6g / %.6g", m.frobenius_exact, m.frobenius_estimate));
    line("top-" + std::to_string(m.top_k) + " recall / precision", format("%.3f / %.3f   (ties counted)", m.top_k_recall, m.top_k_precision));
    line("95% intervals covering C", format("%.3f of the reported entries (intervals as selected)", m.interval_coverage));
    line("significant / false", format("%zu / %zu   (false: significant, yet |exact| within the interval of 0)", m.significant,
                                       m.false_significant));
    if (r.reported_recall) line("reported entries' recall", format("%.3f   (exact values of the candidates; ties counted)", *r.reported_recall));
  }

  const auto& t = c.timings();
  out << format("\ntime (ms) read %.3g", r.read_a_ms + r.read_b_ms);
  if (r.earlier_ms > 0) out << format(" | shorter sketches %.3g", r.earlier_ms);
  out << format(" | sketch %.3g (hashing %.3g, sketching %.3g, inverse %.3g) | select %.3g", t.total_ms, t.hashing_ms, t.sketching_ms,
                t.inverse_ms, r.select_ms);
  if (r.refinement) out << format(" (of which exact values %.3g)", r.refine_ms);
  if (r.metrics) out << format(" | exact %.3g | metrics %.3g", r.exact_ms, r.verify_ms);
  if (!r.output_path.empty() || !r.sketch_path.empty()) out << format(" | write %.3g", r.write_ms);
  out << format(" | total %.3g\n", r.total_ms);
  if (!r.output_path.empty())
    out << "wrote     " << r.output_path << " (Matrix Market " << r.output_format << ", " << r.output_entries << " entries)\n";
  if (!r.sketch_path.empty()) out << "saved     sketch to " << r.sketch_path << '\n';
}

void print_sketch_answer_text(const SketchAnswerReport& r, std::ostream& out) {
  const auto& c = *r.product;
  out << format("sketch    %s: C is %" PRId64 " x %" PRId64 " (inner dimension %" PRId64 ")\n", r.sketch_path.c_str(),
                c.rows(), c.cols(), c.inner());
  out << "          " << describe_sketch(c) << '\n';
  out << "||C||_F   ~ " << number(c.frobenius_estimate()) << " (from the sketch); sigma = ||C||_F/sqrt(b) = "
      << number(c.sigma()) << "\n\n";
  out << selection_heading(r.selection, r.entries.size(), c.repetitions()) << (r.entries.empty() ? "\n" : ":\n");
  if (!r.entries.empty()) print_entry_table(r.entries, r.selection.kind != Selection::Kind::query, out);
  if (r.selection.kind != Selection::Kind::query) print_significance(r.significance, r.entries.size(), out);
  if (!r.output_path.empty()) out << "wrote     " << r.output_path << " (Matrix Market coordinate, " << r.entries.size() << " entries)\n";
}

}  // namespace pagh_mm
