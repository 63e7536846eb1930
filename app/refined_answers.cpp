#include "refined_answers.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>

#include "cli_error.hpp"
#include "sketch/too_many_entries.hpp"
#include "shared_operands.hpp"
#include "sketch_answers.hpp"

namespace pagh_mm {
namespace {

// The operands as refinement reads them (the inputs' own storage, no copy of a dense one).
template <class Use>
auto with_operands(const InputMatrix& a, const InputMatrix& b, Use&& use) {
  if (a.shared) return use(a.shared->exact_entries());
  return std::visit([&](const auto& x) { return std::visit([&](const auto& y) { return use(pagh::ExactEntries(x, y)); }, b.data); },
                    a.data);
}

}  // namespace

// --full writes the estimate itself: its reported entries stay the estimate's, unless --refine.
bool refines(const MultiplyOptions& o) { return o.refine.value_or(o.method == pagh::Method::automatic && !o.full); }

Refinement refine_selection(const pagh::CompressedProduct& product, const KnownDiagonal& diagonal,
                            const pagh::NoiseModel& noise, const InputMatrix& a, const InputMatrix& b, const MultiplyOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  const pagh::Recovery how = o.exhaustive ? pagh::Recovery::exhaustive : pagh::Recovery::automatic;
  const bool off_diagonal = diagonal.subtracted || diagonal.excluded;
  const auto drop_diagonal = [&](std::vector<pagh::Entry> entries) {
    if (off_diagonal) std::erase_if(entries, [](const pagh::Entry& e) { return e.row == e.col; });
    return entries;
  };
  const pagh::TopCandidates top = [&](std::size_t n) {
    return off_diagonal ? top_off_diagonal(product, n, how) : product.top_k(n, how);
  };
  const pagh::CandidatesAbove above = [&](double t, std::size_t cap) {
    return drop_diagonal(product.above(t, cap, how));
  };
  pagh::RefineOptions options;
  options.threads = o.sketch.params.threads;
  options.max_candidates = pagh::candidate_limit(static_cast<double>(product.rows()) * static_cast<double>(product.cols()), o.top);
  if (off_diagonal)  // the diagonal is known (or left out): never a missed entry
    options.universe = static_cast<double>(product.rows()) * static_cast<double>(product.cols()) -
                       static_cast<double>(std::min(product.rows(), product.cols()));
  // The known diagonal joins the answer unless --no-diagonal left it out; it ranks with the rest.
  if (diagonal.subtracted && !diagonal.excluded) options.known = diagonal.entries;
  const double energy = product.frobenius_estimate() * product.frobenius_estimate();
  Refinement r;
  try {
    r.answer = with_operands(a, b, [&](const pagh::ExactEntries& exact) {
      return o.threshold ? pagh::refine_above(above, noise, energy, exact, *o.threshold, kMaxAboveEntries, options)
                         : pagh::refine_top_k(top, noise, energy, exact, o.top, options);
    });
  } catch (const pagh::TooManyEntries&) {  // even at the threshold itself: the sketch cannot single them out
    if (!o.threshold) throw;
    usage_error("--threshold", "too many entries have |estimate| >= " + std::to_string(*o.threshold) +
                                   " to evaluate exactly; raise the threshold, ask for the top entries (-k) or use --method exact");
  }
  auto& found = r.answer.entries;
  const std::size_t cap = !o.threshold || o.top_given ? o.top : found.size();
  if (found.size() > cap) found.resize(cap);
  r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return r;
}

double reported_recall(std::vector<double> magnitudes, const std::vector<ReportedEntry>& reported, const MultiplyOptions& o) {
  std::erase(magnitudes, 0.0);
  if (o.threshold) {
    const auto reach = std::count_if(magnitudes.begin(), magnitudes.end(), [&](double v) { return v >= *o.threshold; });
    if (reach == 0) return 1.0;
    const auto found = std::count_if(reported.begin(), reported.end(), [](const ReportedEntry& e) { return e.exact && *e.exact != 0; });
    return std::min(1.0, static_cast<double>(found) / static_cast<double>(reach));
  }
  const std::size_t k = std::min(o.top, magnitudes.size());
  if (k == 0) return 1.0;
  std::nth_element(magnitudes.begin(), magnitudes.begin() + static_cast<std::ptrdiff_t>(k - 1), magnitudes.end(), std::greater<>());
  const double kth = magnitudes[k - 1] * (1 - 1e-9);
  const auto hits = std::count_if(reported.begin(), reported.end(), [&](const ReportedEntry& e) { return e.exact && std::fabs(*e.exact) >= kth; });
  return std::min(1.0, static_cast<double>(hits) / static_cast<double>(k));
}

std::string refinement_warning(const pagh::RefinedAnswer& answer, const pagh::NoiseModel& noise, std::optional<double> threshold) {
  if (answer.complete) return "";
  // The smallest magnitude the answer must resolve: the threshold asked for, else the k-th entry
  // found. Without either there is no length to suggest.
  const double target = threshold ? *threshold : answer.entries.empty() ? 0.0 : std::fabs(answer.entries.back().value);
  const std::string longer =
      target > 0 ? "a longer sketch (--buckets " + std::to_string(noise.buckets_to_resolve(target)) + ")" : std::string("a longer sketch");
  char text[600];
  std::snprintf(text, sizeof text,
                "the answer may be incomplete: %zu candidates were evaluated exactly (every entry with |estimate| > %.4g), "
                "and about %.3g entries that belong in it may not have been; %s or --method exact would settle it",
                answer.candidates, answer.cutoff, answer.expected_missed, longer.c_str());
  return text;
}

}  // namespace pagh_mm
