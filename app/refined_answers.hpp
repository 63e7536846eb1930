// pagh-mm's answer when it sketches and holds A and B: the entries the sketch ranks first are
// evaluated exactly and re-ranked by their exact values (sketch/refine.hpp), with a bound on what
// the candidates may have missed. --method sketch reports the sketch's estimates instead (unless
// --refine), as saved sketches (query, top) always do.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "inputs.hpp"
#include "known_diagonal.hpp"
#include "multiply_options.hpp"
#include "reports.hpp"
#include "sketch/noise_model.hpp"
#include "sketch/refine.hpp"

namespace pagh_mm {

// Whether the reported entries are refined: --refine / --no-refine, else with --method auto only
// (and not with --full, which writes the estimate itself).
bool refines(const MultiplyOptions& o);

struct Refinement {
  pagh::RefinedAnswer answer;  // entries 0-based, the known diagonal merged in as the options ask
  double ms = 0;
};

// The --top / --threshold question answered by refinement. The candidates are the product's leading
// estimates; entries on the diagonal are left to the known diagonal (subtracted or excluded).
Refinement refine_selection(const pagh::CompressedProduct& product, const KnownDiagonal& diagonal,
                            const pagh::NoiseModel& noise, const InputMatrix& a, const InputMatrix& b, const MultiplyOptions& o);

// --verify of a refined answer: for -k K, the share of min(K, nonzeros of C) reported entries whose
// |exact| reaches the K-th largest |C| (ties counted, within 1e-9); for --threshold, reported entries
// over the entries of C that reach it. `magnitudes`: |C| of every nonzero that could be reported
// (the diagonal left out with --no-diagonal).
double reported_recall(std::vector<double> magnitudes, const std::vector<ReportedEntry>& reported, const MultiplyOptions& o);

// One line for stderr when the refined answer may miss entries; empty otherwise. `threshold`:
// --threshold's value, which the suggested sketch length must resolve (else the k-th entry).
std::string refinement_warning(const pagh::RefinedAnswer& answer, const pagh::NoiseModel& noise, std::optional<double> threshold);

}  // namespace pagh_mm
