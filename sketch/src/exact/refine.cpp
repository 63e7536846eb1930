// Refinement: the sketch proposes, the operands decide (sketch/refine.hpp states the bound).
#include "sketch/refine.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "estimate/entry_ranking.hpp"
#include "sketch/noise_model.hpp"
#include "sketch/too_many_entries.hpp"

namespace pagh {
namespace {

struct PositionHash {
  std::size_t operator()(const std::pair<std::int64_t, std::int64_t>& p) const {
    return std::hash<std::int64_t>()(p.first * 0x9E3779B97F4A7C15ll ^ p.second);
  }
};

// The exact values evaluated so far, and what they cost.
class Evaluated {
 public:
  // known: the entries of RefineOptions::known that may still rank in the answer.
  Evaluated(const ExactEntries& exact, const RefineOptions& o, std::vector<Entry> known)
      : exact_(exact), o_(o), known_(std::move(known)) {}

  // Evaluates the candidates (ranked by |estimate|) not seen before, in rank order, while the work
  // limit allows; returns how many leading candidates are now evaluated.
  std::size_t add(const std::vector<Entry>& ranked) {
    std::vector<Entry> fresh;
    std::size_t covered = 0;
    double work = products_;
    for (; covered < ranked.size(); ++covered) {
      const Entry& e = ranked[covered];
      if (values_.count({e.row, e.col})) continue;
      const double cost = std::max(1.0, exact_.cost(e.row, e.col));
      if (work + cost > o_.max_products) break;
      work += cost;
      fresh.push_back(e);
    }
    for (const Entry& e : exact_.evaluate(fresh, o_.threads)) {
      values_.emplace(std::pair{e.row, e.col}, e.value);
      energy_ += e.value * e.value;
    }
    products_ = work;
    return covered;
  }

  // The evaluated entries with |value| >= floor (nonzero) and the known ones with |value| >= floor,
  // ranked.
  std::vector<Entry> ranked(double floor) const {
    std::vector<Entry> out;
    for (const auto& [position, value] : values_)
      if (value != 0 && std::fabs(value) >= floor) out.push_back(Entry{position.first, position.second, value, 0.0});
    for (const Entry& e : known_)
      if (std::fabs(e.value) >= floor) out.push_back(e);
    std::sort(out.begin(), out.end(), detail::ranks_before);
    return out;
  }

  std::size_t size() const { return values_.size(); }
  double energy() const { return energy_; }
  double products() const { return products_; }

 private:
  const ExactEntries& exact_;
  const RefineOptions& o_;
  std::vector<Entry> known_;
  std::unordered_map<std::pair<std::int64_t, std::int64_t>, double, PositionHash> values_;
  double energy_ = 0, products_ = 0;
};

// Expected entries with |C| >= v that were not evaluated although every entry with
// |estimate| > cutoff was: at most (energy left) / v^2 of them, and no more than the entries not
// evaluated, each missed only when its error reaches v - cutoff.
double expected_missed(const NoiseModel& noise, double energy, double entries, const Evaluated& done, double v, double cutoff) {
  const double left = std::max(0.0, energy - done.energy());
  const double unevaluated = entries - static_cast<double>(done.size());
  if (left <= 0 || unevaluated <= 0) return 0;
  if (!(v > 0)) return unevaluated;
  const double gap = v - cutoff;
  return std::min(left / (v * v), unevaluated) * (gap > 0 ? std::min(1.0, noise.far_tail(gap)) : 1.0);
}

// The candidates a round needs for the bound to reach `rate` at this V: those whose estimates pass the
// cutoff at which it would. Above a cutoff c lie the entries reaching V (at most N(V)) and about
// expected_noise(c) estimates lifted there by noise alone.
double settling_candidates(const NoiseModel& noise, double energy, double entries, const Evaluated& done, double v, double rate) {
  if (!(v > 0)) return 0;
  const double reach = std::min(std::max(0.0, energy - done.energy()) / (v * v), entries - static_cast<double>(done.size()));
  if (reach <= rate) return 0;
  const double cutoff = v - noise.significance_threshold(rate / reach * noise.candidates());
  return cutoff > 0 ? reach + noise.expected_noise(cutoff) : entries;
}

// |value| of the weakest nonzero entry of a ranked answer (0 if none): what an entry must reach to
// belong in it (known entries of value 0 rank last and decide nothing).
double weakest_nonzero(const std::vector<Entry>& ranked) {
  for (auto e = ranked.rbegin(); e != ranked.rend(); ++e)
    if (e->value != 0) return std::fabs(e->value);
  return 0.0;
}

void finish(RefinedAnswer& answer, const Evaluated& done, const RefineOptions& o) {
  answer.candidates = done.size();
  answer.products = done.products();
  answer.complete = answer.expected_missed <= o.missed_rate;
}

}  // namespace

std::size_t candidate_limit(double entries, std::size_t k) {
  return entries <= 0x1p24 ? std::max<std::size_t>(4096, 64 * k) : std::max<std::size_t>(1024, 16 * k);
}

RefinedAnswer refine_top_k(const TopCandidates& candidates, const NoiseModel& noise, double energy, const ExactEntries& exact,
                           std::size_t k, const RefineOptions& o) {
  RefinedAnswer answer;
  std::vector<Entry> known(o.known.begin(), o.known.end());  // only its k best can rank in the answer
  if (known.size() > k) {
    std::nth_element(known.begin(), known.begin() + static_cast<std::ptrdiff_t>(k), known.end(), detail::ranks_before);
    known.resize(k);
  }
  Evaluated done(exact, o, std::move(known));
  if (k == 0) {
    finish(answer, done, o);
    return answer;
  }
  const double entries = o.universe > 0 ? o.universe : static_cast<double>(exact.rows()) * static_cast<double>(exact.cols());
  const auto limit = static_cast<std::size_t>(std::min(entries, static_cast<double>(std::max(o.max_candidates, k))));
  std::size_t n = std::min(limit, std::max(4 * k, o.first_candidates));
  double previous_cutoff = std::numeric_limits<double>::infinity();
  for (;;) {
    const std::vector<Entry> ranked = candidates(n);
    ++answer.rounds;
    const std::size_t covered = done.add(ranked);
    const bool exhausted = ranked.size() < n;  // the sketch has no further nonzero estimate
    answer.cutoff = covered < ranked.size() ? std::fabs(ranked[covered].value)
                    : exhausted || ranked.empty() ? 0.0
                                                  : std::fabs(ranked.back().value);
    answer.entries = done.ranked(0);
    if (answer.entries.size() > k) answer.entries.resize(k);
    const double v = weakest_nonzero(answer.entries);
    answer.expected_missed = expected_missed(noise, energy, entries, done, v, answer.cutoff);
    const bool budget_spent = covered < ranked.size();
    // More candidates that do not lower the cutoff are ties of it: they cannot tighten the bound.
    const bool stalled = answer.cutoff >= previous_cutoff;
    previous_cutoff = answer.cutoff;
    if (answer.expected_missed <= o.missed_rate || exhausted || budget_spent || stalled || n >= limit) break;
    // Fewer further candidates than the entries the bound still expects missed cannot find them
    // all, nor can a round whose cutoff stays where the bound cannot reach the rate at this V: such
    // rounds are skipped.
    const double wanted = std::max(static_cast<double>(covered) + std::ceil(answer.expected_missed),
                                   std::ceil(settling_candidates(noise, energy, entries, done, v, o.missed_rate)));
    n = std::min(limit, std::max(4 * n, wanted < static_cast<double>(limit) ? static_cast<std::size_t>(wanted) : limit));
  }
  finish(answer, done, o);
  return answer;
}

RefinedAnswer refine_above(const CandidatesAbove& candidates, const NoiseModel& noise, double energy, const ExactEntries& exact,
                           double threshold, std::size_t max_entries, const RefineOptions& o) {
  if (!(threshold > 0)) throw Error("refine_above: the threshold must be positive, not " + std::to_string(threshold));
  RefinedAnswer answer;
  std::vector<Entry> known;
  for (const Entry& e : o.known)
    if (std::fabs(e.value) >= threshold) known.push_back(e);
  Evaluated done(exact, o, std::move(known));
  // delta: far_tail(delta) * N <= rate with N = energy / threshold^2 entries that may reach it.
  const double reach = std::max(1.0, energy / (threshold * threshold));
  const double delta = noise.significance_threshold(o.missed_rate * noise.candidates() / reach);
  // Candidates down to threshold - delta; where that is too many, halve the distance to the
  // threshold (the bound then says what may be missing).
  double lower = std::max(threshold - delta, 0.0);
  std::vector<Entry> ranked;
  for (int attempt = 0;; ++attempt) {
    const double asked = attempt < 12 ? lower : threshold;
    try {
      ranked = candidates(asked > 0 ? asked : std::numeric_limits<double>::denorm_min(), o.max_candidates);
      lower = asked;
      break;
    } catch (const TooManyEntries&) {
      if (attempt >= 12) throw;
      lower = 0.5 * (lower + threshold);
    }
  }
  answer.rounds = 1;
  const std::size_t covered = done.add(ranked);
  answer.cutoff = covered < ranked.size() ? std::fabs(ranked[covered].value) : lower;
  answer.entries = done.ranked(threshold);
  if (answer.entries.size() > max_entries) throw too_many_entries("refine_above", max_entries, threshold);
  const double entries = o.universe > 0 ? o.universe : static_cast<double>(exact.rows()) * static_cast<double>(exact.cols());
  answer.expected_missed = expected_missed(noise, energy, entries, done, threshold, answer.cutoff);
  finish(answer, done, o);
  return answer;
}

}  // namespace pagh
