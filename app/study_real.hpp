// pagh-mm study --preset real: the answers a user gets on data nobody here wrote. The workloads
// (scikit-learn's bundled sets, R Matrix's SuiteSparse examples and neighbour graphs) are built by
// the embedded study_data.py into DIR/data as Matrix Market files, read back with matrix_io, and
// each is sketched at a few sizes and several hash seeds (and, where the diagonal of a square
// product holds >= 1 % of its energy, with that diagonal subtracted, against C minus its diagonal,
// as pagh-mm --no-diagonal answers) against its exact product: tie-aware
// recall@10 and @50, the 95 % intervals' coverage, significant entries that are noise, the time of
// the sketch's top-10 against the exact top-10, the recall of the refined top-10 (the sketch's
// candidates evaluated exactly, pagh-mm's default answer), and what the cost model's automatic choice
// (sketch/method.hpp) picks and how long its answer takes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "backend.hpp"
#include "progress.hpp"

namespace pagh_mm {

struct RealStudyOptions {
  std::filesystem::path out;            // results.csv, summary.md; the data in out/data
  std::vector<std::string> workloads;   // empty: every workload study_data.py knows
  int seeds = 3;                        // hash seeds 1001 .. 1000 + seeds (the data are fixed)
  std::vector<double> pads = {8, 64};   // the default size, and a larger one
  int sketches = 3;
  std::string python;                   // interpreter of the data helper
  int threads = 0;
  std::string command;                  // as typed, for the summary
  bool quiet = false;
  ProgressMode progress = ProgressMode::automatic;
};

// One sketch of one workload (a pad and a seed), with the exact answer timed beside it.
struct RealRow {
  std::string workload;
  std::int64_t m = 0, k = 0, p = 0;
  std::uint64_t seed = 0;
  double pad = 0;
  std::int64_t buckets = 0;
  int sketches = 0;
  std::string diagonal;                     // "kept", or "subtracted": compared with C minus its diagonal
  double recall_10 = 0, recall_50 = 0;      // tie-aware (sketch/verify.hpp)
  double coverage_10 = 0, coverage_50 = 0;  // of the 95 % intervals of the reported top-10 / top-50
  std::size_t significant_50 = 0, false_significant_50 = 0;  // among the reported top-50
  double sigma = 0;                         // one single estimate's standard deviation, ||C||_F / sqrt(b)
  double tenth_in_sigmas = 0;               // the exact 10th largest |C| over sigma
  double sketch_ms = 0;                     // compress + top-10
  double refined_recall_10 = 0;             // pagh-mm's default answer: the candidates' exact values (refine.hpp)
  bool refined_complete = false;            // its bound on missed entries is within 5 %
  double refine_ms = 0;                     // the refinement after the sketch
  double exact_ms = 0;                      // the exact top-10 (pagh::exact_top_k)
  std::string auto_method;                  // what choose_method(automatic) picks at this size
  double auto_ms = 0;                       // the measured time of the choice and of that method's answer
};

struct RealWorkloadInfo {
  std::string name, description, shape;  // shape: "m x k x p, nnz(A), nnz(B)"
  bool ran = false;
  std::string skipped_because;
};

struct RealStudy {
  std::vector<RealWorkloadInfo> workloads;
  std::vector<RealRow> rows;
  std::string backend, device;
  double wall_seconds = 0;
};

// Builds the data (out/data), runs every configuration, and returns what it measured. Throws
// CliError: 69 when python3 or the data helper cannot run, or no workload could be built (the
// reasons named); 64 for an unknown --workloads name.
RealStudy run_real_study(const RealStudyOptions& options, SketchBackend& backend);

std::string real_study_csv(const std::vector<RealRow>& rows);
std::string real_study_summary(const RealStudyOptions& options, const RealStudy& study, const std::string& version,
                               const std::string& commit, const std::string& date);

}  // namespace pagh_mm
