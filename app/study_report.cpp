#include "study_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <tuple>

#include "common_options.hpp"
#include "output_files.hpp"
#include "study_plot_script.hpp"  // generated from study_plot.py: kStudyPlotScript
#include "study_numbers.hpp"
#include "study_python.hpp"

namespace pagh_mm {
namespace {

namespace fs = std::filesystem;

std::string g(double v, const char* pattern = "%.6g") { return formatted(v, pattern); }

// A configuration's name in tables: the column it belongs to in the precision table.
std::string arithmetic_column(const StudyConfig& c) {
  return c.algorithm == fwht::Algorithm::alman_rao ? "alman-rao" : stabilization_name(c.stabilization);
}

// Medians over seeds of one quantity, keyed by (workload, config).
template <class Key, class Get>
std::map<Key, double> medians(const std::vector<StudyRow>& rows, Key (*key)(const StudyRow&), Get get) {
  std::map<Key, std::vector<double>> values;
  for (const auto& r : rows)
    if (const auto v = get(r)) values[key(r)].push_back(*v);
  std::map<Key, double> out;
  for (auto& [k, v] : values) out[k] = median(std::move(v));
  return out;
}

using PadKey = std::tuple<std::string, double, int>;
PadKey pad_key(const StudyRow& r) { return {r.workload, r.config.pad, r.config.sketches}; }
using ArithKey = std::tuple<std::string, std::string, std::string>;
ArithKey arith_key(const StudyRow& r) { return {r.workload, precision_name(r.config.precision), arithmetic_column(r.config)}; }

}  // namespace

std::string study_csv(const std::vector<StudyRow>& rows) {
  std::ostringstream out;
  out << "workload,m,k,p,seed,sweep,pad,buckets,sketches,precision,stabilization,algorithm,"
         "relative_frobenius_error,single_estimate_bound,max_abs_error,max_error_in_sigmas,frobenius_exact,"
         "frobenius_estimate,top_k,top_k_recall,top_k_precision,deviation_from_fp64,compress_ms,exact_ms\n";
  for (const auto& r : rows) {
    const auto& c = r.config;
    const auto& m = r.metrics;
    out << r.workload << ',' << r.m << ',' << r.k << ',' << r.p << ',' << r.seed << ',' << c.sweep << ',' << g(c.pad) << ','
        << r.buckets << ',' << c.sketches << ',' << precision_name(c.precision) << ',' << stabilization_name(c.stabilization)
        << ',' << algorithm_name(c.algorithm) << ',' << g(m.relative_frobenius_error) << ',' << g(r.single_estimate_bound)
        << ',' << g(m.max_abs_error) << ',' << g(m.max_error_in_sigmas) << ',' << g(m.frobenius_exact) << ','
        << g(m.frobenius_estimate) << ',' << m.top_k << ',' << g(m.top_k_recall) << ',' << g(m.top_k_precision) << ','
        << (r.deviation_from_fp64 ? g(*r.deviation_from_fp64) : "") << ',' << g(r.compress_ms, "%.4g") << ','
        << g(r.exact_ms, "%.4g") << '\n';
  }
  return out.str();
}

std::string study_summary_markdown(const StudyContext& ctx, const std::vector<StudyRow>& rows,
                                   const std::vector<std::string>& plots, const std::string& plot_note) {
  const auto& preset = ctx.preset;
  std::ostringstream md;
  md << "# pagh-mm accuracy study: preset `" << preset.name << "`\n\n";
  md << "pagh-mm " << ctx.version << " (git " << ctx.commit << "), backend " << ctx.backend << " (" << ctx.device << "), "
     << ctx.date << "; " << rows.size() << " runs in " << g(ctx.wall_seconds, "%.0f") << " s. Command: `" << ctx.command
     << "`. Every number below is the median over " << preset.seeds << " seed" << (preset.seeds == 1 ? "" : "s")
     << " (seed s draws the matrices with seed s and the hash functions with seed 1000 + s); results.csv has every "
        "run.\n\n";
  md << "Metrics, against the exact product C (computed with " << (ctx.backend == "cpu" ? "Eigen" : "the backend")
     << "): *rel. error* = ‖C^ − C‖_F / ‖C‖_F over all entries of the decompressed estimate C^; "
        "*bound* = √(m p / b), the relative error one sketch would have if every estimate had the variance bound "
        "‖C‖_F² / b; *max error / σ* = max |C^ − C| in units of σ = ‖C‖_F / √b; *recall* = the fraction of the top-"
     << preset.top_k << " entries of |C| found among the sketch's top-" << preset.top_k
     << "; *dev. fp64* = ‖C^ − C^_fp64‖_F / ‖C^_fp64‖_F against the fp64 sketch with the same hash functions "
        "(the arithmetic's own error, with the estimator's error cancelled).\n\n";

  md << "## Workloads\n\n| workload | m x k x p | what it is | ‖C‖_F | sketch's ‖C‖_F / exact (pad 8, d 3) | max error / σ | recall (pad 8, d 3) |\n";
  md << "|---|---|---|---:|---:|---:|---:|\n";
  const auto frob = medians(rows, pad_key, [](const StudyRow& r) { return std::optional(r.metrics.frobenius_exact); });
  const auto ratio = medians(rows, pad_key, [](const StudyRow& r) {
    return std::optional(r.metrics.frobenius_exact > 0 ? r.metrics.frobenius_estimate / r.metrics.frobenius_exact : NAN);
  });
  const auto sigmas = medians(rows, pad_key, [](const StudyRow& r) {
    return r.config.sweep == "pad_d" ? std::optional(r.metrics.max_error_in_sigmas) : std::nullopt;
  });
  const auto rel = medians(rows, pad_key, [](const StudyRow& r) {
    return r.config.sweep == "pad_d" ? std::optional(r.metrics.relative_frobenius_error) : std::nullopt;
  });
  const auto recall = medians(rows, pad_key, [](const StudyRow& r) {
    return r.config.sweep == "pad_d" ? std::optional(r.metrics.top_k_recall) : std::nullopt;
  });
  const auto bound = medians(rows, pad_key, [](const StudyRow& r) { return std::optional(r.single_estimate_bound); });
  for (std::size_t w = 0; w < ctx.workloads.size(); ++w) {
    const PadKey base{ctx.workloads[w], 8.0, 3};
    const auto at = [&](const auto& map) { const auto it = map.find(base); return it == map.end() ? std::string("-") : g(it->second, "%.3g"); };
    md << "| " << ctx.workloads[w] << " | " << ctx.workload_shapes[w] << " | " << ctx.workload_descriptions[w] << " | "
       << at(frob) << " | " << at(ratio) << " | " << at(sigmas) << " | " << at(recall) << " |\n";
  }

  md << "\n## Estimator error versus padding and sketches (fp32, no stabilization, folklore)\n\n";
  md << "Each cell: rel. error / top-" << preset.top_k << " recall.\n\n";
  for (const auto& workload : ctx.workloads) {
    md << "**" << workload << "**\n\n| pad | bound |";
    for (int d : preset.sketches) md << " d = " << d << " |";
    md << "\n|---:|---:|";
    for (std::size_t i = 0; i < preset.sketches.size(); ++i) md << "---:|";
    md << '\n';
    for (double pad : preset.pads) {
      const auto b = bound.find({workload, pad, preset.sketches.front()});
      md << "| " << g(pad) << " | " << (b == bound.end() ? "-" : g(b->second, "%.3g")) << " |";
      for (int d : preset.sketches) {
        const auto e = rel.find({workload, pad, d});
        const auto r = recall.find({workload, pad, d});
        md << ' ' << (e == rel.end() ? "-" : g(e->second, "%.3g")) << " / " << (r == recall.end() ? "-" : g(r->second, "%.2f"))
           << " |";
      }
      md << '\n';
    }
    md << '\n';
  }

  md << "## Arithmetic: precision and stabilization (pad 8, d 3)\n\n";
  md << "Each cell: dev. fp64 (rel. error). fp64 with no stabilization is the reference (0 by definition).\n\n";
  const std::vector<std::string> columns = {"none", "kahan", "neumaier", "alman-rao"};
  const auto dev = medians(rows, arith_key, [](const StudyRow& r) { return r.deviation_from_fp64; });
  const auto arel = medians(rows, arith_key, [](const StudyRow& r) {
    return r.config.sweep == "precision" ? std::optional(r.metrics.relative_frobenius_error) : std::nullopt;
  });
  md << "| workload | precision |";
  for (const auto& c : columns) md << ' ' << c << " |";
  md << "\n|---|---|";
  for (std::size_t i = 0; i < columns.size(); ++i) md << "---:|";
  md << '\n';
  for (const auto& workload : ctx.workloads)
    for (fwht::DType precision : preset.precisions) {
      md << "| " << workload << " | " << precision_name(precision) << " |";
      for (const auto& c : columns) {
        const ArithKey key{workload, precision_name(precision), c};
        const auto d = dev.find(key);
        const auto e = arel.find(key);
        md << ' ' << (d == dev.end() ? "-" : g(d->second, "%.2e")) << " (" << (e == arel.end() ? "-" : g(e->second, "%.3g"))
           << ") |";
      }
      md << '\n';
    }

  md << "\n## Plots\n\n";
  if (plots.empty()) md << "Plots were skipped: " << plot_note << "\n";
  for (const auto& p : plots) md << "![" << p << "](" << p << ")\n\n";
  return md.str();
}

PlotResult draw_study_plots(const fs::path& directory, const std::string& python) {
  PlotResult result;
  const ScriptRun run = run_python_script(python, kStudyPlotScript, "study_plot", {(directory / "results.csv").string(), directory.string()},
                                          directory);
  if (!run.started) return {{}, run.last_line};
  if (run.exit_status != 0)
    return {{}, run.last_line.empty() ? "the plot script failed" : "the plot script said: " + run.last_line};
  for (const char* name : {"error_vs_pad.png", "recall_vs_pad.png", "precision.png"})
    if (fs::exists(directory / name)) result.files.push_back(name);
  if (result.files.empty()) result.note = "the plot script wrote no PNG";
  return result;
}

}  // namespace pagh_mm
