// The outputs of `pagh-mm study`: results.csv (one row per run), summary.md (medians over seeds,
// in tables), and PNG plots drawn by a small embedded Python/matplotlib script (study_plot.py).
// Every file is written atomically; the plots are skipped, with a note, when the plotter is missing.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "study_grid.hpp"
#include "sketch/verify.hpp"

namespace pagh_mm {

struct StudyRow {
  std::string workload;
  std::int64_t m = 0, k = 0, p = 0;
  std::uint64_t seed = 0;
  StudyConfig config;
  std::int64_t buckets = 0;
  pagh::Metrics metrics;
  double single_estimate_bound = 0;           // sqrt(m p / b): relative Frobenius error of one sketch, in theory
  std::optional<double> deviation_from_fp64;  // precision sweep: ||C^ - C^_fp64||_F / ||C^_fp64||_F
  double compress_ms = 0, exact_ms = 0;
};

struct StudyContext {
  StudyPreset preset;
  std::string backend, device, version, commit, date;
  std::string command;  // as typed, for the summary
  std::vector<std::string> workloads;
  std::vector<std::string> workload_descriptions;  // parallel to workloads
  std::vector<std::string> workload_shapes;        // "384 x 384 x 384"
  double wall_seconds = 0;
};

std::string study_csv(const std::vector<StudyRow>& rows);
// `plots`: the PNG files that exist (linked from the summary), or empty with `plot_note` saying why.
std::string study_summary_markdown(const StudyContext& context, const std::vector<StudyRow>& rows,
                                   const std::vector<std::string>& plots, const std::string& plot_note);

struct PlotResult {
  std::vector<std::string> files;  // PNG names in the directory, when drawn
  std::string note;                // why plots were skipped, or empty
};
// Runs the embedded plot script with `python` on results.csv in `directory`.
PlotResult draw_study_plots(const std::filesystem::path& directory, const std::string& python);

}  // namespace pagh_mm
