// What the commands that answer from a sketch share: loading a saved sketch with the right exit
// status, and selecting the entries above a threshold.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common_options.hpp"
#include "reports.hpp"
#include "sketch/compressed_product.hpp"

namespace pagh_mm {

// 66 when the file cannot be opened, 65 when it is not a valid sketch (wrong magic, version,
// truncated, checksum mismatch), each with the library's reason.
pagh::CompressedProduct load_sketch(const std::string& path);

// The most entries a threshold query may select (more is a usage error: the threshold is too low).
inline constexpr std::size_t kMaxAboveEntries = std::size_t{1} << 26;

// On stderr: the recovery method with -v, and (unless -q) a warning when every reported entry is
// below the noise ceiling (Significance in reports.hpp).
void report_significance(const Significance& significance, std::size_t reported, const Diagnostics& diag);

// Every entry with |estimate| >= threshold, largest first (ties: row, then column), at most `cap`.
// More than 2^26 such entries is a usage error (64) naming `option`: the threshold is too low.
// `above` answers CompressedProduct::above(threshold). `cutoff`, if given, receives what the
// answer's intervals are conditioned on (NoiseModel::selected_interval): the threshold, or the
// largest |estimate| that the cap left out.
std::vector<pagh::Entry> entries_above(const std::function<std::vector<pagh::Entry>(double)>& above, double threshold,
                                       std::optional<std::size_t> cap, const std::string& option, double* cutoff = nullptr);

}  // namespace pagh_mm
