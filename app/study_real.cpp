#include "study_real.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>

#include "cli_error.hpp"
#include "inputs.hpp"
#include "known_diagonal.hpp"
#include "output_files.hpp"
#include "resource_plan.hpp"
#include "sketch/exact_answers.hpp"
#include "sketch/method.hpp"
#include "sketch/noise_model.hpp"
#include "sketch/refine.hpp"
#include "sketch/verify.hpp"
#include "study_data_script.hpp"  // generated from study_data.py: kStudyDataScript
#include "study_python.hpp"

namespace pagh_mm {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kTop = 10, kWide = 50;

struct ManifestLine {
  std::string name, status, a, b, description;  // skipped: a holds the reason
};

std::vector<ManifestLine> read_manifest(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw CliError(ExitCode::software, path.string(), "the data helper wrote no manifest");
  std::vector<ManifestLine> lines;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    std::vector<std::string> fields;
    std::stringstream text(line);
    for (std::string field; std::getline(text, field, '\t');) fields.push_back(field);
    fields.resize(5);
    lines.push_back({fields[0], fields[1], fields[2], fields[3], fields[4]});
  }
  return lines;
}

// Runs study_data.py into `data`; its exit status 2 is an unknown name, 3 a missing numpy/scipy.
std::vector<ManifestLine> build_data(const RealStudyOptions& o, const fs::path& data) {
  std::vector<std::string> args = {data.string()};
  args.insert(args.end(), o.workloads.begin(), o.workloads.end());
  const ScriptRun run = run_python_script(o.python, kStudyDataScript, "study_data", args, data);
  if (!run.started) throw CliError(ExitCode::unavailable, "--python " + o.python, "cannot be run, so no real-data workload can be built");
  if (run.exit_status == 2) usage_error("--workloads", run.last_line);
  if (run.exit_status == 3) throw CliError(ExitCode::unavailable, "study --preset real", run.last_line);
  if (run.exit_status != 0)
    throw CliError(ExitCode::software, "study --preset real",
                   "the data helper failed" + (run.last_line.empty() ? std::string() : ": " + run.last_line));
  return read_manifest(data / "manifest.tsv");
}

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// The time of one call, from as many calls as 2 ms take (one at least): tiny products (tens of
// microseconds) are otherwise timed at the clock's and the scheduler's resolution.
template <class Call>
double mean_ms(Call&& call) {
  const auto start = std::chrono::steady_clock::now();
  int calls = 0;
  do {
    call();
    ++calls;
  } while (calls < 1000 && ms_since(start) < 2.0);
  return ms_since(start) / calls;
}

// The operands as the exact product takes them: both sparse, or both dense (a mixed pair is
// multiplied densely, as pagh-mm's exact method does).
struct Operands {
  bool sparse = false;
  Eigen::MatrixXd dense_a, dense_b;
  Eigen::SparseMatrix<double> sparse_a, sparse_b;
};

Operands exact_operands(const InputMatrix& a, const InputMatrix& b) {
  Operands o;
  o.sparse = !a.is_dense() && !b.is_dense();
  if (o.sparse) {
    o.sparse_a = std::get<1>(a.data), o.sparse_b = std::get<1>(b.data);
    return o;
  }
  const auto dense = [](const MatrixData& m) { return m.index() == 0 ? std::get<0>(m) : Eigen::MatrixXd(std::get<1>(m)); };
  o.dense_a = dense(a.data), o.dense_b = dense(b.data);
  return o;
}

std::vector<pagh::Entry> exact_top(const Operands& o, std::size_t k, int threads) {
  return o.sparse ? pagh::exact_top_k(o.sparse_a, o.sparse_b, k) : pagh::exact_top_k(o.dense_a, o.dense_b, k, threads);
}

// The exact product to compare with (C, or C without its diagonal), dense or sparse as formed.
struct Reference {
  bool sparse = false;
  Eigen::SparseMatrix<double> sparse_c;
  Eigen::MatrixXd dense_c;
  double energy = 0;  // ||C||_F^2
  double tenth = 0;   // the 10th largest |C|
  std::size_t nonzeros = 0;
  pagh::Metrics verify(const pagh::CompressedProduct& product, std::size_t k) const {
    return sparse ? pagh::verify(product, sparse_c, k) : pagh::verify(product, dense_c, k);
  }
};

Reference reference(const Operands& o, bool without_diagonal) {
  Reference r;
  r.sparse = o.sparse;
  std::vector<double> magnitudes;
  if (o.sparse) {
    r.sparse_c = pagh::exact_sparse_product(o.sparse_a, o.sparse_b);
    if (without_diagonal) r.sparse_c.prune([](Eigen::Index i, Eigen::Index j, double) { return i != j; });
    for (Eigen::Index j = 0; j < r.sparse_c.outerSize(); ++j)
      for (Eigen::SparseMatrix<double>::InnerIterator it(r.sparse_c, j); it; ++it) magnitudes.push_back(std::fabs(it.value()));
  } else {
    r.dense_c = o.dense_a * o.dense_b;
    if (without_diagonal) r.dense_c.diagonal().setZero();
    magnitudes.assign(r.dense_c.data(), r.dense_c.data() + r.dense_c.size());
    for (double& v : magnitudes) v = std::fabs(v);
  }
  for (double v : magnitudes) r.energy += v * v, r.nonzeros += v != 0;
  if (magnitudes.size() >= kTop) {
    std::nth_element(magnitudes.begin(), magnitudes.begin() + (kTop - 1), magnitudes.end(), std::greater<>());
    r.tenth = magnitudes[kTop - 1];
  }
  return r;
}

// The refined top-10 (sketch/refine.hpp) of a sketch: tie-aware recall against the truth.
void refine_top(const pagh::CompressedProduct& product, const pagh::ExactEntries& exact, bool off_diagonal, const Reference& truth,
                RealRow& row) {
  const auto clock = std::chrono::steady_clock::now();
  const pagh::NoiseModel noise(product);
  const pagh::TopCandidates candidates = [&](std::size_t n) {
    return off_diagonal ? top_off_diagonal(product, n) : product.top_k(n);
  };
  pagh::RefineOptions options;  // pagh-mm's, for -k 10
  options.max_candidates = pagh::candidate_limit(static_cast<double>(product.rows()) * static_cast<double>(product.cols()), kTop);
  if (off_diagonal)
    options.universe = static_cast<double>(product.rows()) * static_cast<double>(product.cols()) -
                       static_cast<double>(std::min(product.rows(), product.cols()));
  const pagh::RefinedAnswer answer =
      pagh::refine_top_k(candidates, noise, product.frobenius_estimate() * product.frobenius_estimate(), exact, kTop, options);
  row.refine_ms = ms_since(clock);
  row.refined_complete = answer.complete;
  const double wanted = static_cast<double>(std::min(kTop, truth.nonzeros));
  const auto hits = std::count_if(answer.entries.begin(), answer.entries.end(),
                                  [&](const pagh::Entry& e) { return std::fabs(e.value) >= truth.tenth * (1 - 1e-9); });
  row.refined_recall_10 = wanted > 0 ? std::min(1.0, static_cast<double>(hits) / wanted) : 1.0;
}

std::string shape_of(const InputMatrix& a, const InputMatrix& b) {
  std::ostringstream s;
  s << a.rows() << " x " << a.cols() << " x " << b.cols() << ", nnz " << a.stored_entries() << " / " << b.stored_entries()
    << (a.is_dense() && b.is_dense() ? " (dense)" : "");
  return s.str();
}

}  // namespace

RealStudy run_real_study(const RealStudyOptions& o, SketchBackend& backend) {
  RealStudy study;
  study.backend = backend.name(), study.device = backend.device();
  const auto start = std::chrono::steady_clock::now();
  const fs::path data = o.out / "data";
  ensure_directory(data, "--out");
  Progress progress(o.progress, o.quiet);
  progress.step(0, 1, "building the workloads (study_data.py)");
  const auto manifest = build_data(o, data);

  std::vector<const ManifestLine*> ready;
  for (const auto& line : manifest) {
    RealWorkloadInfo info{line.name, line.description, "", line.status == "ok", ""};
    if (info.ran) ready.push_back(&line);
    else info.skipped_because = line.a;
    study.workloads.push_back(info);
  }
  if (ready.empty())
    throw CliError(ExitCode::unavailable, "study --preset real",
                   "no workload could be built (" + (manifest.empty() ? std::string("none named") : manifest.front().a) + ")");
  for (const auto& w : study.workloads)
    if (!w.ran && !o.quiet) std::fprintf(stderr, "pagh-mm: study: skipped %s: %s\n", w.name.c_str(), w.skipped_because.c_str());

  const pagh::Throughput rates = pagh::cpu_throughput(o.threads, fwht::DType::f32);
  const double memory = static_cast<double>(available_memory().bytes);
  // Runs per workload: every pad, and one more without the diagonal where it is subtracted.
  const std::int64_t total = static_cast<std::int64_t>(ready.size() * (o.pads.size() + 1)) * o.seeds;
  std::int64_t done = 0;
  for (const ManifestLine* line : ready) {
    progress.step(done, total, line->name + ": reading, exact product");
    const InputMatrix a = read_input((data / line->a).string(), false, o.threads);
    const InputMatrix b = read_input((data / line->b).string(), false, o.threads);
    check_multipliable(a, b);
    for (auto& w : study.workloads)
      if (w.name == line->name) w.shape = shape_of(a, b);
    const Operands operands = exact_operands(a, b);
    const pagh::ExactEntries exact = operands.sparse ? pagh::ExactEntries(operands.sparse_a, operands.sparse_b)
                                                     : pagh::ExactEntries(operands.dense_a, operands.dense_b);
    const Reference full = reference(operands, false);
    // Square products whose diagonal holds >= 1 % of the energy (pagh-mm's rule, here from the exact
    // product) are also sketched as pagh-mm --no-diagonal answers them: the exact diagonal
    // subtracted from the sketch, the answers compared with C minus its diagonal.
    std::optional<Reference> off_diagonal;
    std::vector<pagh::Entry> diagonal;
    if (a.rows() == b.cols()) {
      diagonal = operands.sparse ? pagh::product_diagonal(operands.sparse_a, operands.sparse_b)
                                 : pagh::product_diagonal(operands.dense_a, operands.dense_b);
      double energy = 0;
      for (const auto& e : diagonal) energy += e.value * e.value;
      if (energy >= 0.01 * full.energy) off_diagonal = reference(operands, true);
    }
    // The automatic method's answer also pays for counting the operands and weighing the two.
    const auto count = [&] {
      return operands.sparse ? pagh::count_product(operands.sparse_a, operands.sparse_b)
                             : pagh::count_dense_product(a.rows(), a.cols(), b.cols());
    };
    const pagh::ProductCounts counts = count();
    std::vector<std::pair<double, const Reference*>> variants;
    for (double pad : o.pads) variants.push_back({pad, &full});
    if (off_diagonal) variants.push_back({o.pads.front(), &*off_diagonal});
    for (const auto& [pad, truth] : variants) {
      const bool subtract = truth != &full;
      for (int s = 1; s <= o.seeds; ++s) {
        progress.step(done, total, line->name + ": pad " + std::to_string(static_cast<int>(pad)) + (subtract ? " without diagonal" : "") +
                                       ", seed " + std::to_string(s));
        pagh::SketchParams params;
        params.pad = pad, params.repetitions = o.sketches, params.seed = 1000 + static_cast<std::uint64_t>(s);
        params.threads = o.threads;
        RealRow row;
        row.workload = line->name, row.m = a.rows(), row.k = a.cols(), row.p = b.cols();
        row.seed = static_cast<std::uint64_t>(s), row.pad = pad, row.sketches = o.sketches;
        row.diagonal = subtract ? "subtracted" : "kept";

        row.exact_ms = mean_ms([&] { static_cast<void>(exact_top(operands, kTop, o.threads)); });
        auto clock = std::chrono::steady_clock::now();
        pagh::CompressedProduct product = backend.compress(a.data, b.data, params);
        if (subtract) {
          const auto known = operands.sparse ? pagh::product_diagonal(operands.sparse_a, operands.sparse_b)
                                             : pagh::product_diagonal(operands.dense_a, operands.dense_b);
          product.subtract(known);
        }
        static_cast<void>(product.top_k(kTop));  // the answer a user waits for
        row.sketch_ms = ms_since(clock);
        row.buckets = product.buckets();
        refine_top(product, exact, subtract, *truth, row);

        const pagh::Metrics top = truth->verify(product, kTop);
        const pagh::Metrics wide = truth->verify(product, kWide);
        row.recall_10 = top.top_k_recall, row.recall_50 = wide.top_k_recall;
        row.coverage_10 = top.interval_coverage, row.coverage_50 = wide.interval_coverage;
        row.significant_50 = wide.significant, row.false_significant_50 = wide.false_significant;
        row.sigma = pagh::NoiseModel(product).sigma();
        row.tenth_in_sigmas = row.sigma > 0 ? truth->tenth / row.sigma : INFINITY;

        const pagh::MethodChoice choice = pagh::choose_method(pagh::Method::automatic, counts, params, rates, memory);
        const double choosing_ms =
            mean_ms([&] { static_cast<void>(pagh::choose_method(pagh::Method::automatic, count(), params, rates, memory)); });
        row.auto_method = choice.method == pagh::Method::exact ? "exact" : "sketch";
        // pagh-mm's automatic answer when it sketches is the refined one.
        row.auto_ms = choosing_ms + (choice.method == pagh::Method::exact ? row.exact_ms : row.sketch_ms + row.refine_ms);
        study.rows.push_back(std::move(row));
        ++done;
      }
    }
  }
  progress.step(done, total, "writing results");
  progress.finish();
  study.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return study;
}

}  // namespace pagh_mm
