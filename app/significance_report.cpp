// What the sketch's noise model (sketch/noise_model.hpp) says about the reported entries: their
// intervals and significance, whether any stands out from noise, and what sketch would resolve them.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "reports.hpp"

namespace pagh_mm {

std::vector<ReportedEntry> to_reported(const std::vector<pagh::Entry>& entries, const pagh::CompressedProduct& product,
                                       const pagh::NoiseModel& noise, double cutoff) {
  std::vector<ReportedEntry> out;
  out.reserve(entries.size());
  const double sigma = noise.tail_sigma();
  for (const auto& e : entries) {
    const pagh::EntryAssessment a = noise.assess(product, e, kIntervalCoverage, kFalsePositiveRate, cutoff);
    ReportedEntry r;
    r.row = e.row + 1, r.col = e.col + 1, r.estimate = e.value, r.spread = e.spread;
    r.half_width = a.half_width, r.low = a.interval.low, r.high = a.interval.high, r.noise_expected = a.expected_noise, r.significant = a.significant;
    r.z = sigma > 0 ? std::fabs(e.value) / sigma : (e.value != 0 ? INFINITY : 0.0);
    out.push_back(r);
  }
  return out;
}

void mark_known(ReportedEntry& e) {
  e.known = true, e.significant = true, e.half_width = 0, e.spread = 0, e.noise_expected = 0, e.z = INFINITY;
  e.low = e.high = e.estimate;
}

std::vector<ReportedEntry> to_reported_exact(const std::vector<pagh::Entry>& entries) {
  std::vector<ReportedEntry> out;
  out.reserve(entries.size());
  for (const auto& e : entries) {
    ReportedEntry r;
    r.row = e.row + 1, r.col = e.col + 1, r.estimate = e.value, r.exact = e.value;
    mark_known(r);
    out.push_back(r);
  }
  return out;
}

std::vector<ReportedEntry> to_reported_refined(const std::vector<pagh::Entry>& entries) {
  std::vector<ReportedEntry> out = to_reported_exact(entries);
  for (auto& e : out) e.exact.reset();
  return out;
}

Significance assess_significance(const pagh::NoiseModel& noise, const std::vector<ReportedEntry>& entries,
                                 const pagh::RecoveryStats& recovery) {
  Significance s;
  s.candidates = noise.candidates();
  s.sigma = noise.sigma();
  s.half_width = noise.half_width(kIntervalCoverage);
  s.agreement_needed = noise.agreement_threshold(kFalsePositiveRate);
  s.ceiling = s.sigma > 0 ? noise.noise_ceiling() / s.sigma : 0.0;
  s.recovery = recovery.reason;
  s.significant = static_cast<std::size_t>(std::count_if(entries.begin(), entries.end(), [](const ReportedEntry& e) { return e.significant; }));
  s.tail_sigma = noise.tail_sigma();
  if (entries.empty()) return s;
  s.min_z = INFINITY;
  double strongest = 0, weakest = INFINITY;
  for (const auto& e : entries) {
    s.min_z = std::min(s.min_z, e.z), s.max_z = std::max(s.max_z, e.z);
    strongest = std::max(strongest, std::fabs(e.estimate)), weakest = std::min(weakest, std::fabs(e.estimate));
  }
  s.expected_noise = std::min<double>(static_cast<double>(entries.size()), noise.expected_noise(weakest));
  if (s.significant == 0 && strongest > 0) s.resolve_buckets = noise.buckets_to_resolve(strongest);
  return s;
}

std::string noise_warning(const Significance& s, std::size_t reported) {
  if (reported == 0 || s.significant > 0) return "";
  char text[600];
  std::snprintf(text, sizeof text,
                "no reported entry can be told from noise: among %.3g candidates, noise alone makes estimates as large as "
                "these (the largest of the pure-noise estimates is expected near %.3g sigma; an entry is significant when all d "
                "repetitions agree on at least %.4g); a sketch of b = %lld buckets (--buckets) would resolve entries of the "
                "reported size, if they are real",
                s.candidates, s.ceiling, s.agreement_needed, static_cast<long long>(s.resolve_buckets));
  return text;
}

}  // namespace pagh_mm
