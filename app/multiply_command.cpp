// pagh-mm [options] A.mtx B.mtx: read, sketch, select entries, optionally verify, write, report.
//
// Order matters for the promise "no partial output, ever": outputs are checked (and staged) before
// any work, written to staging names after all computation, and moved into place together at the
// end; the report goes to stdout last.
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <future>
#include <iostream>
#include <memory>
#include <optional>

#include "cli_error.hpp"
#include "correlation.hpp"
#include "commands.hpp"
#include "inputs.hpp"
#include "matrix_io/write.hpp"
#include "known_diagonal.hpp"
#include "method_choice.hpp"
#include "multiply_hooks.hpp"
#include "multiply_memory.hpp"
#include "multiply_options.hpp"
#include "npy_output.hpp"
#include "output_files.hpp"
#include "pagh/error.hpp"
#include "pagh/output_file.hpp"
#include "progress.hpp"
#include "refined_answers.hpp"
#include "reports.hpp"
#include "resource_plan.hpp"
#include "sketch_answers.hpp"
#include "sketch/params.hpp"
#include "version.hpp"

namespace pagh_mm {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

// The most memory a dense m x p result may take (matches CompressedProduct::decompress's default).
constexpr double kDenseLimitBytes = 8.0 * (1ull << 30);

std::string gib(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g GiB", bytes / (1ull << 30));
  return text;
}

void check_dense_fits(const char* option, std::int64_t m, std::int64_t p, int copies, const char* what) {
  const double bytes = static_cast<double>(m) * static_cast<double>(p) * 8.0 * copies;
  if (bytes > kDenseLimitBytes)
    usage_error(option, std::string(what) + " of the " + std::to_string(m) + " x " + std::to_string(p) + " product needs " +
                            gib(bytes) + ", more than the " + gib(kDenseLimitBytes) + " limit; use --top or --threshold");
}

// Only precisions wider than the one chosen can help; fp64 has none.
std::string wider_precision_advice(fwht::DType chosen) {
  if (chosen == fwht::DType::f64) return " (scale the inputs down)";
  if (chosen == fwht::DType::f32) return " (use fp64, or scale the inputs down)";
  return " (use fp32 or fp64, or scale the inputs down)";
}

InputSummary summarize(const InputMatrix& m) {
  return {m.path, m.rows(), m.cols(), m.stored_entries(), m.representation()};
}

// The product answers on the device that holds its sketches, if any.
// `cutoff`: that of the intervals (pagh::keep_top, sketch/noise_model.hpp).
std::vector<pagh::Entry> select_entries(const pagh::CompressedProduct& c, const MultiplyOptions& o,
                                        pagh::RecoveryStats& stats, double& cutoff) {
  const pagh::Recovery how = o.exhaustive ? pagh::Recovery::exhaustive : pagh::Recovery::automatic;
  if (!o.threshold) {
    std::vector<pagh::Entry> leading = c.top_k(o.top + 1, how, &stats);
    cutoff = pagh::keep_top(leading, o.top);
    return leading;
  }
  return entries_above([&](double t) { return c.above(t, kMaxAboveEntries, how, &stats); }, *o.threshold,
                       o.top_given ? std::optional<std::size_t>(o.top) : std::nullopt, "--threshold", &cutoff);
}

std::vector<std::string> output_comments(const MultiplyOptions& o, const pagh::CompressedProduct& c, const std::string& what,
                                         bool refined = false) {
  return {"pagh-mm " + std::string(version_string()) +
              (refined ? ": exact values of the entries of C = A*B that a compressed product selected"
                       : ": estimates of C = A*B from a compressed product, not exact values"),
          "A: " + o.a_path + ", B: " + o.b_path,
          "sketch: " + describe_sketch(c),
          "sigma = ||C||_F/sqrt(b) = " + std::to_string(c.sigma()) + " (std. dev. bound of one single estimate)",
          what};
}

// Writes -o and --save-sketch to their staging paths (writers that are atomic themselves).
void write_outputs(const MultiplyOptions& o, const pagh::CompressedProduct& c,
                   const std::vector<pagh::Entry>& selected,
                   const std::filesystem::path& matrix_staging, const std::filesystem::path& sketch_staging,
                   MultiplyReport& report) {
  namespace mio = pagh::matrix_io;
  if (!o.output_path.empty()) {
    mio::WriteOptions w;
    try {
      if (o.full) {
        w.comments = output_comments(o, c, "every entry of the estimate (dense array, column by column)");
        if (is_npy_path(o.output_path)) mio::write_npy(matrix_staging, c.decompress());
        else mio::write_matrix_market(matrix_staging, c.decompress(), w);
        report.output_format = "array";
        report.output_entries = c.rows() * c.cols();
      } else {
        std::vector<mio::Entry> entries;
        entries.reserve(selected.size());
        for (const auto& e : selected) entries.push_back({e.row, e.col, e.value});
        w.comments = report.refinement
                         ? output_comments(o, c, "the entries reported by pagh-mm, largest |value| first", true)
                         : output_comments(o, c, "the entries reported by pagh-mm, largest |estimate| first");
        if (is_npy_path(o.output_path)) write_entries_npy(matrix_staging, entries);
        else mio::write_matrix_market(matrix_staging, c.rows(), c.cols(), entries, w);
        report.output_format = "coordinate";
        report.output_entries = static_cast<std::int64_t>(entries.size());
      }
    } catch (const mio::MatrixMarketError& e) {
      throw CliError(classify_write_failure(e.reason()), "-o " + o.output_path, e.reason());
    }
    report.output_path = o.output_path;
  }
  if (!o.sketch_path.empty()) {
    try {
      c.save(sketch_staging.string());
    } catch (const pagh::OutputError& e) {
      throw CliError(e.cannot_create() ? ExitCode::cannot_create : ExitCode::io_error, "--save-sketch " + o.sketch_path,
                     e.reason());
    } catch (const pagh::Error& e) {
      // The library's message names the staging path; keep only its reason.
      const std::string what = e.what();
      const auto colon = what.rfind(": ");
      throw CliError(classify_write_failure(what), "--save-sketch " + o.sketch_path,
                     colon == std::string::npos ? what : what.substr(colon + 2));
    }
    report.sketch_path = o.sketch_path;
  }
}

// A sketch of A*B with the given parameters, the known diagonal subtracted where it applies, and
// the entries the options select.
struct Sketched {
  std::optional<pagh::CompressedProduct> product;
  KnownDiagonal diagonal;
  pagh::RecoveryStats recovery;
  std::vector<pagh::Entry> selected;
  double cutoff = 0;  // what the estimates' intervals are conditioned on (pagh::keep_top)
  double select_ms = 0;
  double diagonal_ms = 0, noise_ms = 0;  // parts of the selection, for -v
  std::optional<pagh::NoiseModel> noise;  // of the sketch as selected from (after any subtraction)
  std::optional<Refinement> refined;      // the selected entries' exact values (refined_answers.hpp)
};

std::unique_ptr<Sketched> sketch_and_select(SketchBackend& backend, const InputMatrix& a, const InputMatrix& b, const MultiplyOptions& o,
                                            const pagh::SketchParams& params) {
  auto out = std::make_unique<Sketched>();
  MultiplyOptions with = o;
  with.sketch.params = params;
  out->product.emplace(compress_within_memory(backend, a, b, with));
  pagh::CompressedProduct& product = *out->product;
  // Storage precisions narrower than the data overflow to inf/NaN; say so instead of printing NaN.
  if (!std::isfinite(product.frobenius_estimate()))
    throw CliError(ExitCode::data, "--precision " + precision_name(params.precision),
                   "the sketch overflowed: the transformed values of these inputs exceed the range of " +
                       precision_name(params.precision) + wider_precision_advice(params.precision));
  const auto t = Clock::now();
  // A saved sketch or the whole estimate stay the sketch of C itself: nothing is subtracted then.
  // --verify checks the sketch of C unless the question is the off-diagonal product (--no-diagonal).
  const bool keep_c = o.full || !o.sketch_path.empty() || (o.verify && !o.no_diagonal);
  if (keep_c) out->diagonal.excluded = o.no_diagonal;
  else out->diagonal = subtract_known_diagonal(product, a, b, o);
  out->diagonal_ms = ms_since(t);
  if (refines(o)) {
    const auto n = Clock::now();
    out->noise.emplace(product);
    out->noise_ms = ms_since(n);
    out->refined = refine_selection(product, out->diagonal, *out->noise, a, b, o);
    out->selected = out->refined->answer.entries;
    out->select_ms = ms_since(t);
    return out;
  }
  if (out->diagonal.subtracted || out->diagonal.excluded)
    out->selected = select_with_known_diagonal(product, out->diagonal, o, out->recovery, out->cutoff);
  else
    out->selected = select_entries(product, o, out->recovery, out->cutoff);
  out->select_ms = ms_since(t);
  const auto n = Clock::now();
  out->noise.emplace(product);
  out->noise_ms = ms_since(n);
  return out;
}

// The magnitude the sketch should resolve: --resolve's, or the K-th entry's when -k K (without a
// length given) found it not significant; 0 when the first sketch stands.
double resolve_target(const MultiplyOptions& o, const Sketched& s) {
  if (o.resolve) return *o.resolve;
  if (o.sketch.size_given || o.threshold || s.selected.size() < o.top || o.top == 0) return 0;
  const pagh::Entry& kth = s.selected[o.top - 1];
  if (s.diagonal.on_diagonal(kth)) return 0;  // known exactly
  // Refined: the values are exact; what a longer sketch buys is the certainty that none was missed.
  // Where the cutoff reaches the K-th value (estimates tied with it), no sketch length separates them.
  if (s.refined) return s.refined->answer.complete || s.refined->answer.cutoff >= std::fabs(kth.value) ? 0.0 : std::fabs(kth.value);
  return s.noise->assess(*s.product, kth).significant ? 0.0 : std::fabs(kth.value);
}

// The longest sketch chosen automatically: what a quarter of the available memory holds (d
// sketches in f64 with their f32 transforms, twice), at most 2^30; -k's own choice also at most
// 64 times the first length (--resolve names its target: only memory bounds it).
std::int64_t largest_auto_buckets(const MultiplyOptions& o, std::int64_t first) {
  const double per_bucket = 24.0 * o.sketch.params.repetitions;
  const double by_memory = static_cast<double>(available_memory().bytes) / 4 / per_bucket;
  double cap = std::min(by_memory, double(std::int64_t{1} << 30));
  if (!o.resolve) cap = std::min(cap, 64.0 * static_cast<double>(first));
  return static_cast<std::int64_t>(std::bit_floor(static_cast<std::uint64_t>(std::max(cap, 1.0))));
}

// --method chose the exact product: its entries, written and reported like the sketch's.
int run_exact(const MultiplyOptions& o, SketchBackend& backend, const InputMatrix& a, const InputMatrix& b, OutputTransaction& outputs,
              const std::filesystem::path& matrix_staging, Progress& progress, int stage, int stages, MultiplyReport& report,
              Clock::time_point start) {
  progress.stage(++stage, stages, "computing the exact product");
  const std::vector<pagh::Entry> selected = exact_entries(backend, a, b, o, report.method.exact_on_host, report.exact_ms);
  report.exact_method = report.method.engine;
  report.entries = to_reported_exact(selected);
  report.selection.k = o.top;
  if (o.threshold) {
    report.selection.kind = Selection::Kind::threshold;
    report.selection.threshold = o.threshold;
    report.selection.limited = o.top_given;
  }
  if (!o.output_path.empty()) {
    progress.stage(++stage, stages, "writing outputs");
    const auto t = Clock::now();
    namespace mio = pagh::matrix_io;
    mio::WriteOptions w;
    w.comments = {"pagh-mm " + std::string(version_string()) + ": exact entries of C = A*B (--method " + report.method.requested + ")",
                  "A: " + o.a_path + ", B: " + o.b_path, "the entries reported by pagh-mm, largest |value| first"};
    std::vector<mio::Entry> entries;
    for (const auto& e : selected) entries.push_back({e.row, e.col, e.value});
    try {
      if (is_npy_path(o.output_path)) write_entries_npy(matrix_staging, entries);
      else mio::write_matrix_market(matrix_staging, a.rows(), b.cols(), entries, w);
    } catch (const mio::MatrixMarketError& e) {
      throw CliError(classify_write_failure(e.reason()), "-o " + o.output_path, e.reason());
    }
    outputs.commit();
    report.output_path = o.output_path, report.output_format = "coordinate";
    report.output_entries = static_cast<std::int64_t>(entries.size());
    report.write_ms = ms_since(t);
  }
  progress.finish();
  report.total_ms = ms_since(start);
  const Diagnostics& diag = o.diagnostics;
  if (!diag.quiet()) std::fprintf(stderr, "pagh-mm: method %s\n", report.method.reason.c_str());
  if (outputs.writes_standard_output()) return 0;
  print_multiply(report, diag.format, std::cout);
  return 0;
}

// weigh_backends for the product the inputs' headers declare, when both are read densely and fit
// together; nullopt otherwise (the read reports any problem with them).
std::optional<BackendWeighing> weigh_declared_product(const MultiplyOptions& o) {
  const auto a = declared_dense_size(o.a_path, o.transpose_a);
  const auto b = a ? declared_dense_size(o.b_path) : std::nullopt;
  if (!a || !b || a->second != b->first) return std::nullopt;
  try {
    return weigh_backends({.m = a->first, .K = a->second, .p = b->second}, o.sketch.params, method_to_weigh(o), o.sketch.params.threads);
  } catch (const std::exception&) {
    // Parameters the sketch refuses, shapes beyond the model: the run says so later, unweighed.
    return std::nullopt;
  }
}

}  // namespace

int run_multiply(const std::vector<std::string>& args, MultiplyHooks* hooks) {
  const auto start = Clock::now();
  const auto parsed = parse_multiply_options(args);
  if (!parsed) return 0;
  const MultiplyOptions& o = *parsed;
  const Diagnostics& diag = o.diagnostics;
  check_threads_can_start(o.sketch.params.threads, "--threads");
  if (hooks) hooks->started(o);

  // The backend starts (on a GPU machine the CUDA driver and context take a good part of a second)
  // while the outputs are staged and the inputs read. Errors keep the order of a backend started
  // first: the backend (69), then the outputs (73), then the inputs; a step that fails waits for
  // the backend and reports the backend's error instead when it has one.
  // --backend auto on dense inputs of known shape: the CPU where it answers sooner than a GPU whose
  // context would have to start and be torn down (weigh_backends).
  std::optional<BackendWeighing> weighed;
  if (o.sketch.backend == BackendChoice::automatic) weighed = weigh_declared_product(o);
  double backend_start_ms = 0;
  std::future<BackendSelection> starting = std::async(std::launch::async, [&o, &backend_start_ms, &weighed] {
    const auto begin = Clock::now();
    BackendSelection selected = select_backend(o.sketch.backend, o.sketch.params.threads, weighed ? &*weighed : nullptr);
    backend_start_ms = ms_since(begin);
    return selected;
  });
  const auto after_backend_errors = [&starting](auto&& step) -> decltype(auto) {
    try {
      return step();
    } catch (...) {
      if (starting.valid()) starting.get();  // throws the backend's error, if any
      throw;
    }
  };
  OutputTransaction outputs;
  const auto matrix_staging = after_backend_errors(
      [&] { return o.output_path.empty() ? std::filesystem::path() : outputs.stage(o.output_path, "-o"); });
  const auto sketch_staging = after_backend_errors(
      [&] { return o.sketch_path.empty() ? std::filesystem::path() : outputs.stage(o.sketch_path, "--save-sketch"); });
  after_backend_errors([&] {
    outputs.refuse_overwriting(o.a_path, "the input A");
    outputs.refuse_overwriting(o.b_path, "the input B");
  });

  const int stages = 4 + (o.verify ? 1 : 0) + (o.output_path.empty() && o.sketch_path.empty() ? 0 : 1);
  int stage = 0;
  Progress progress(diag.progress, diag.quiet());
  MultiplyReport report;

  progress.stage(++stage, stages, "reading " + o.a_path);
  auto t = Clock::now();
  auto shares = after_backend_errors([&] { return hooks ? hooks->read_inputs(o) : std::nullopt; });
  InputMatrix a = shares ? std::move(shares->first)
                         : after_backend_errors([&] { return read_input(o.a_path, o.transpose_a, o.sketch.params.threads); });
  report.read_a_ms = ms_since(t);
  progress.stage(++stage, stages, "reading " + o.b_path);
  t = Clock::now();
  InputMatrix b = shares ? std::move(shares->second)
                         : after_backend_errors([&] { return read_input(o.b_path, false, o.sketch.params.threads); });
  report.read_b_ms = ms_since(t);
  shares.reset();
  // Operands shared by MPI ranks (shared_operands.hpp): the exact product needs them whole, on rank 0.
  const auto whole_for_exact = [&] {
    if (!a.shared) return;
    a = read_input(o.a_path, o.transpose_a, o.sketch.params.threads);
    b = read_input(o.b_path, false, o.sketch.params.threads);
  };
  t = Clock::now();
  BackendSelection selection = starting.get();
  const double backend_wait_ms = ms_since(t);
  if (diag.verbose())
    std::fprintf(stderr, "pagh-mm: backend started in %.1f ms beside reading (%.1f ms waited for it after reading)\n",
                 backend_start_ms, backend_wait_ms);
  if (hooks) selection.backend = hooks->backend(std::move(selection.backend));
  SketchBackend& backend = *selection.backend;
  report.backend_requested = to_string(o.sketch.backend);
  report.backend_name = backend.name();
  report.backend_device = backend.device();
  report.backend_note = selection.auto_note;
  check_multipliable(a, b);
  report.a = summarize(a), report.b = summarize(b), report.inner = a.cols();
  if (o.correlation) report.correlation = standardize_for_correlation(a, b);
  try {
    pagh::sketch_length(a.rows(), b.cols(), o.sketch.params);  // the sketch length these inputs need
  } catch (const pagh::Error& e) {
    const std::string what = e.what();
    usage_error(o.sketch.params.buckets ? "--buckets" : "--pad", what.substr(what.find(": ") + 2));
  }
  // Ranking evaluates at least one bucket's m * p / b candidates (as pagh-mm top refuses them).
  const double per_bucket = static_cast<double>(a.rows()) * static_cast<double>(b.cols()) /
                            static_cast<double>(pagh::sketch_length(a.rows(), b.cols(), o.sketch.params));
  if (per_bucket > static_cast<double>(std::uint64_t{1} << 34))
    usage_error(o.sketch.params.buckets ? "--buckets" : "--pad",
                "too short a sketch to rank a " + std::to_string(a.rows()) + " x " + std::to_string(b.cols()) +
                    " product: about " + std::to_string(static_cast<long long>(per_bucket)) +
                    " entries per bucket, more than 2^34; choose a longer sketch");
  if (o.full) check_dense_fits("--full", a.rows(), b.cols(), 1, "the dense array");
  // --verify: against the dense exact product where it and the estimate fit; sparse inputs whose
  // product does not fit densely are checked against the exact sparse product (Eigen) instead.
  const bool sparse_verify = verifies_sparsely(a, b, o);
  if (sparse_verify) {
    const double bytes = 16.0 * pagh::product_work(std::get<1>(a.data), std::get<1>(b.data));  // value + index per nonzero
    if (bytes > kDenseLimitBytes)
      usage_error("--verify", "the exact sparse product may need " + gib(bytes) + " (" + gib(kDenseLimitBytes) +
                                  " allowed): it does not fit, so the sketch cannot be verified here");
  } else if (o.verify) {
    check_dense_fits("--verify", a.rows(), b.cols(), 2, "the exact product and the decompressed estimate");
  }
  if (diag.verbose())
    for (const auto* m : {&a, &b})
      std::fprintf(stderr, "pagh-mm: %s: %lld x %lld, %s, %lld stored entries\n", m->path.c_str(),
                   static_cast<long long>(m->rows()), static_cast<long long>(m->cols()), m->representation(),
                   static_cast<long long>(m->stored_entries()));

  report.method = choose_multiply_method(backend, a, b, o);
  if (diag.verbose()) std::fprintf(stderr, "pagh-mm: method %s\n", report.method.reason.c_str());
  if (report.method.exact()) {
    whole_for_exact();
    return run_exact(o, backend, a, b, outputs, matrix_staging, progress, stage, stages, report, start);
  }

  progress.stage(++stage, stages, "sketching");
  const auto first_sketch = Clock::now();
  auto sketched = sketch_and_select(backend, a, b, o, o.sketch.params);
  // The sketch length from the question: --resolve TAU, or -k K (with no --pad/--buckets) when the
  // K-th entry was not significant: once more at the length that resolves it, if that fits.
  // Two rounds at most: the first estimate of the K-th entry is lifted by noise, so the second
  // sketch can show that it needs more.
  const std::int64_t first_b = sketched->product->buckets();
  for (int round = 0; round < 2; ++round) {
    const double target = resolve_target(o, *sketched);
    if (!(target > 0)) break;
    const pagh::NoiseModel& pilot = *sketched->noise;
    const std::int64_t pilot_b = sketched->product->buckets(), wanted = pilot.buckets_to_resolve(target);
    const std::int64_t cap = largest_auto_buckets(o, first_b);
    char note[400];
    if (wanted <= pilot_b) {
      if (pilot_b == first_b) std::snprintf(note, sizeof note, "b = %lld resolves entries of %.4g", static_cast<long long>(pilot_b), target);
      else std::snprintf(note, sizeof note, "b = %lld (from b = %lld) resolves entries of %.4g", static_cast<long long>(pilot_b),
                         static_cast<long long>(first_b), target);
    } else if (wanted > cap) {
      std::snprintf(note, sizeof note, "resolving entries of %.4g needs b = %lld, more than the %lld allowed here; kept b = %lld",
                    target, static_cast<long long>(wanted), static_cast<long long>(cap), static_cast<long long>(pilot_b));
    } else {
      pagh::SketchParams params = o.sketch.params;
      params.buckets = wanted;
      MethodReport exact_instead = choose_multiply_method(backend, a, b, o, &params);
      if (exact_instead.exact()) {
        report.method = exact_instead;
        report.method.reason = "exact, as the sketch that resolves entries of " + std::to_string(target) + " (b = " +
                               std::to_string(wanted) + ") costs more: " + exact_instead.reason.substr(exact_instead.reason.find(": ") + 2);
        sketched.reset();
        whole_for_exact();
        return run_exact(o, backend, a, b, outputs, matrix_staging, progress, stage, stages, report, start);
      }
      sketched.reset();
      report.earlier_ms = ms_since(first_sketch);
      sketched = sketch_and_select(backend, a, b, o, params);
      std::snprintf(note, sizeof note, "b = %lld (from b = %lld) to resolve entries of %.4g", static_cast<long long>(wanted),
                    static_cast<long long>(first_b), target);
    }
    report.size_note = std::string(o.resolve ? "--resolve: " : "-k " + std::to_string(o.top) + ": ") + note;
    if (wanted <= pilot_b || wanted > cap) break;
  }
  pagh::CompressedProduct& product = *sketched->product;
  const KnownDiagonal& diagonal = sketched->diagonal;
  pagh::RecoveryStats& recovery = sketched->recovery;
  const std::vector<pagh::Entry>& selected = sketched->selected;
  report.product = &product;
  report.select_ms = sketched->select_ms;
  report.diagonal_subtracted = diagonal.subtracted;
  report.diagonal_share = diagonal.energy_share;
  if (diag.verbose()) {
    const auto& ct = product.timings();
    std::fprintf(stderr, "pagh-mm: sketch %s; inner indices transformed %lld, direct %lld, empty %lld\n",
                 describe_sketch(product).c_str(), static_cast<long long>(ct.transformed_k),
                 static_cast<long long>(ct.direct_k), static_cast<long long>(ct.empty_k));
    std::fprintf(stderr, "pagh-mm: selection %.1f ms: known diagonal %.1f ms, then %s %.1f ms; noise model %.1f ms\n",
                 sketched->select_ms, sketched->diagonal_ms, sketched->refined ? "exact values of candidates" : "entries",
                 sketched->select_ms - sketched->diagonal_ms - (sketched->refined ? sketched->noise_ms : 0.0), sketched->noise_ms);
    if (diagonal.subtracted)
      std::fprintf(stderr, "pagh-mm: the exact diagonal (%.3g of ||C||_F^2) was subtracted from the sketch\n", diagonal.energy_share);
  }
  progress.stage(++stage, stages, "selecting entries");
  const pagh::NoiseModel& noise = *sketched->noise;
  if (sketched->refined) {
    report.entries = to_reported_refined(selected);
    report.refinement = sketched->refined->answer;
    report.refine_ms = sketched->refined->ms;
  } else {
    report.entries = to_reported(selected, product, noise, sketched->cutoff);
    for (auto& e : report.entries)
      if (diagonal.subtracted && e.row == e.col) mark_known(e);
  }
  report.significance = assess_significance(noise, report.entries, recovery);
  report.selection.k = o.top;
  if (o.threshold) {
    report.selection.kind = Selection::Kind::threshold;
    report.selection.threshold = o.threshold;
    report.selection.limited = o.top_given;
  }

  if (o.verify) {
    progress.stage(++stage, stages, "verifying against the exact product");
    if (sparse_verify) {
      const Eigen::SparseMatrix<double> exact = pagh::exact_sparse_product(std::get<1>(a.data), std::get<1>(b.data), &report.exact_ms);
      t = Clock::now();
      // The sketch estimates C minus what was subtracted: its metrics are against the same.
      Eigen::SparseMatrix<double> estimated = exact;
      if (diagonal.subtracted) {
        for (const auto& e : diagonal.entries) estimated.coeffRef(e.row, e.col) -= e.value;
        estimated.prune(0.0);
      }
      report.metrics = pagh::verify(product, estimated, o.top);
      report.verify_ms = ms_since(t);
      report.exact_method = "Eigen sparse product on the CPU";
      for (auto& e : report.entries) e.exact = exact.coeff(e.row - 1, e.col - 1);
      if (report.refinement) {
        std::vector<double> magnitudes;
        for (Eigen::Index j = 0; j < exact.outerSize(); ++j)
          for (Eigen::SparseMatrix<double>::InnerIterator it(exact, j); it; ++it)
            if (!(o.no_diagonal && it.row() == it.col())) magnitudes.push_back(std::fabs(it.value()));
        report.reported_recall = reported_recall(std::move(magnitudes), report.entries, o);
      }
    } else {
      const Eigen::MatrixXd exact = backend.exact_product(a.data, b.data, report.exact_ms);
      t = Clock::now();
      Eigen::MatrixXd estimated = exact;
      if (diagonal.subtracted)
        for (const auto& e : diagonal.entries) estimated(e.row, e.col) -= e.value;
      report.metrics = pagh::verify(product, estimated, o.top);
      report.verify_ms = ms_since(t);
      report.exact_method = backend.exact_method();
      for (auto& e : report.entries) e.exact = exact(e.row - 1, e.col - 1);
      if (report.refinement) {
        std::vector<double> magnitudes(exact.data(), exact.data() + exact.size());
        for (double& v : magnitudes) v = std::fabs(v);
        if (o.no_diagonal)
          for (Eigen::Index i = 0; i < std::min(exact.rows(), exact.cols()); ++i) magnitudes[i * exact.rows() + i] = 0;
        report.reported_recall = reported_recall(std::move(magnitudes), report.entries, o);
      }
    }
  }

  if (!o.output_path.empty() || !o.sketch_path.empty()) {
    progress.stage(++stage, stages, "writing outputs");
    t = Clock::now();
    write_outputs(o, product, selected, matrix_staging, sketch_staging, report);
    outputs.commit();
    report.write_ms = ms_since(t);
  }
  progress.finish();
  report.total_ms = ms_since(start);
  // Which backend ran and how long a sketch: said after the run, so that a failure stays a single
  // line on stderr.
  if (!diag.quiet() && !selection.auto_note.empty()) std::fprintf(stderr, "pagh-mm: %s\n", selection.auto_note.c_str());
  if (!diag.quiet() && !report.size_note.empty()) std::fprintf(stderr, "pagh-mm: sketch length: %s\n", report.size_note.c_str());
  if (diag.verbose() && selection.auto_note.empty()) std::fprintf(stderr, "pagh-mm: backend %s\n", backend.name().c_str());
  if (report.refinement) {
    const std::string warning = refinement_warning(*report.refinement, noise, o.threshold);
    if (!diag.quiet() && !warning.empty()) std::fprintf(stderr, "pagh-mm: %s\n", warning.c_str());
  } else {
    report_significance(report.significance, report.entries.size(), diag);
  }
  if (diag.verbose() && !selection.auto_detail.empty()) std::fprintf(stderr, "pagh-mm: (%s)\n", selection.auto_detail.c_str());
  if (diag.verbose() && !o.threshold && static_cast<double>(o.top) > static_cast<double>(a.rows()) * static_cast<double>(b.cols()))
    std::fprintf(stderr, "pagh-mm: -k %zu exceeds the number of entries of C (%lld x %lld): every entry is reported\n",
                 o.top, static_cast<long long>(a.rows()), static_cast<long long>(b.cols()));

  if (outputs.writes_standard_output()) return 0;  // -o - or --save-sketch -: the file is the output
  print_multiply(report, diag.format, std::cout);
  return 0;
}

}  // namespace pagh_mm
