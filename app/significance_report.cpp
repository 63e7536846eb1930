// Whether reported entries stand out from the largest of the m * p pure-noise estimates, and what
// sketch would resolve them (sketch/significance.hpp has the model).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <string>

#include "reports.hpp"
#include "sketch/significance.hpp"

namespace pagh_mm {

std::vector<ReportedEntry> to_reported(const std::vector<pagh::Entry>& entries, double sigma) {
  std::vector<ReportedEntry> out;
  out.reserve(entries.size());
  for (const auto& e : entries) {
    ReportedEntry r;
    r.row = e.row + 1, r.col = e.col + 1, r.estimate = e.value, r.spread = e.spread;
    r.z = sigma > 0 ? std::fabs(e.value) / sigma : (e.value != 0 ? INFINITY : 0.0);
    out.push_back(r);
  }
  return out;
}

Significance assess_significance(const pagh::CompressedProduct& product, const std::vector<ReportedEntry>& entries,
                                 const pagh::RecoveryStats& recovery) {
  Significance s;
  s.candidates = static_cast<double>(product.rows()) * static_cast<double>(product.cols());
  s.ceiling = pagh::noise_ceiling(s.candidates, product.repetitions());
  s.recovery = recovery.reason;
  if (entries.empty()) return s;
  s.min_z = INFINITY;
  for (const auto& e : entries) s.min_z = std::min(s.min_z, e.z), s.max_z = std::max(s.max_z, e.z);
  s.expected_noise = std::min<double>(static_cast<double>(entries.size()),
                                      pagh::expected_noise_entries(s.candidates, product.repetitions(), s.min_z));
  // sigma shrinks as 1/sqrt(b) (||C||_F fixed): the weakest entry reaches the ceiling at
  // b * (ceiling / z)^2; the ceiling itself does not depend on b.
  if (s.min_z < s.ceiling && s.min_z > 0) {
    const double wanted = static_cast<double>(product.buckets()) * (s.ceiling / s.min_z) * (s.ceiling / s.min_z);
    s.resolve_buckets = wanted > 0x1p62 ? std::int64_t{1} << 62 : static_cast<std::int64_t>(std::bit_ceil(static_cast<std::uint64_t>(std::ceil(wanted))));
  }
  return s;
}

std::string noise_warning(const Significance& s, std::size_t reported) {
  if (reported == 0 || s.max_z >= s.ceiling) return "";
  char text[400];
  std::snprintf(text, sizeof text,
                "no reported entry can be told from noise: the largest is at %.3g sigma, the largest of %.3g pure-noise estimates "
                "is expected near %.3g sigma; a sketch of b = %lld buckets (--buckets) would resolve entries of the reported size",
                s.max_z, s.candidates, s.ceiling, static_cast<long long>(s.resolve_buckets));
  return text;
}

}  // namespace pagh_mm
