// pagh-mm study: accuracy of the compressed product versus the exact product, over a grid of
// padding, sketches, precision, stabilization and workloads (study_grid.hpp), written as CSV, a
// markdown summary and PNG plots (study_report.hpp).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <sstream>

#include "cli_error.hpp"
#include "commands.hpp"
#include "common_options.hpp"
#include "output_files.hpp"
#include "progress.hpp"
#include "sketch/verify.hpp"
#include "study_grid.hpp"
#include "study_python.hpp"
#include "study_real.hpp"
#include "study_report.hpp"
#include "version.hpp"

namespace pagh_mm {
namespace {

namespace fs = std::filesystem;

constexpr const char* kUsage = R"(usage: pagh-mm study [--preset smoke|default|large|real] [--out DIR] [options]

Measures the compressed product against the exact product on synthetic workloads (planted-dense,
sparse, low-rank-sparse, covariance), sweeping pad x d (fp32) and precision x stabilization
(pad 8, d 3), over several seeds. Writes DIR/results.csv (every run), DIR/summary.md (medians, in
tables) and DIR/*.png (plots, when /usr/bin/python3 has matplotlib: Debian python3-matplotlib).

Presets: smoke    48-dimensional, 1 seed, a few seconds (used by the tests)
         default  384-dimensional (sparse: 1536), 3 seeds, 432 runs: about 80 s on 2 CPU cores
         large    4096-dimensional (sparse: 16384), 5 seeds, wider grid: meant for a GPU
         real     data that Debian packages ship (scikit-learn's digits and breast cancer sets, R Matrix's
                  SuiteSparse lund_a, pores_1, KNex, US-county and world-grid neighbour graphs), built
                  into DIR/data by an embedded python3 helper; pad 8 and 64, d 3, 3 hash seeds (and pad 8
                  with a diagonal of >= 1 % of the energy subtracted, as --no-diagonal); recall@10/50,
                  95 % interval coverage, false significant entries, sketch vs exact top-10 time and the
                  automatic method's choice (CPU). Workloads whose package is missing are skipped, with a
                  note: digits-gram, digits-cooccurrence, breast-cancer-gram, breast-cancer-cooccurrence
                  (python3-sklearn), lund_a-square, pores_1-square, pores_1-gram (r-cran-matrix),
                  knex-gram, us-counties-neighbours, world-grid-neighbours (r-cran-matrix, Rscript)

Examples:
  pagh-mm study --out study
  pagh-mm study --preset smoke --workloads planted-dense,sparse --out /tmp/s
  pagh-mm study --large --backend cuda --out study-large
  pagh-mm study --preset real --out study-real
)";

std::string today_utc() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d", &tm);
  return text;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) items.push_back(item);
  return items;
}

std::string config_label(const StudyConfig& c) {
  char text[128];
  std::snprintf(text, sizeof text, "pad %g, d %d, %s, %s, %s", c.pad, c.sketches, precision_name(c.precision).c_str(),
                stabilization_name(c.stabilization).c_str(), algorithm_name(c.algorithm).c_str());
  return text;
}

// --preset real (study_real.hpp): its workloads are named by the data helper, which checks them.
int run_real_preset(const po::variables_map& vm, const std::vector<std::string>& args, const Diagnostics& diag,
                    const std::string& python) {
  RealStudyOptions o;
  o.python = python, o.quiet = diag.quiet(), o.progress = diag.progress;
  if (vm.count("seeds")) o.seeds = static_cast<int>(parse_integer("--seeds", vm["seeds"].as<std::string>(), 1, 1000));
  if (vm.count("workloads")) {
    o.workloads = split_list(vm["workloads"].as<std::string>());
    if (o.workloads.empty()) usage_error("--workloads", "names no workload");
  }
  o.threads = vm.count("threads") ? static_cast<int>(parse_integer("--threads", vm["threads"].as<std::string>(), 0, 4096)) : 0;
  const BackendChoice choice = parse_backend_choice("--backend", vm["backend"].as<std::string>());
  if (choice == BackendChoice::cuda)
    usage_error("--backend", "the real preset runs on the CPU (its exact answers and cost model are the CPU's)");
  const auto backend = make_cpu_backend(o.threads);
  o.out = vm["out"].as<std::string>();
  ensure_directory(o.out, "--out");
  o.command = "pagh-mm study";
  for (const auto& a : args) o.command += " " + a;
  const RealStudy study = run_real_study(o, *backend);
  write_text_file_atomically(o.out / "results.csv", real_study_csv(study.rows));
  write_text_file_atomically(o.out / "summary.md", real_study_summary(o, study, version_string(), git_commit(), today_utc()));
  std::size_t ran = 0;
  for (const auto& w : study.workloads) ran += w.ran;
  std::printf("study real: %zu runs of %zu workloads (%zu skipped) in %.1f s on cpu\n", study.rows.size(), ran,
              study.workloads.size() - ran, study.wall_seconds);
  std::printf("wrote %s and %s\n", (o.out / "results.csv").c_str(), (o.out / "summary.md").c_str());
  return 0;
}

}  // namespace

int run_study(const std::vector<std::string>& args) {
  po::options_description study("Study", kHelpWidth, kHelpWidth / 2);
  study.add_options()
      ("preset", po::value<std::string>()->value_name("smoke|default|large|real")->default_value("default"), "size of the study")
      ("large", "the large preset (same as --preset large)")
      ("out", po::value<std::string>()->value_name("DIR")->default_value("pagh-mm-study"), "output directory (created)")
      ("seeds", po::value<std::string>()->value_name("N"), "seeds per workload [preset: smoke 1, default 3, large 5]")
      ("workloads", po::value<std::string>()->value_name("LIST"),
       "comma-separated subset of planted-dense,sparse,low-rank-sparse,covariance (real: of its workloads) [all]")
      ("plot", po::value<std::string>()->value_name("auto|never")->default_value("auto"),
       "draw PNG plots when python3-matplotlib is available")
      ("backend", po::value<std::string>()->value_name("auto|cpu|cuda")->default_value("auto"), "where to compute")
      ("threads", po::value<std::string>()->value_name("T"), "CPU threads, 0 = all [0]")
      ("python", po::value<std::string>()->value_name("PATH"),
       "python3 that runs the plot and data helpers [/usr/bin/python3, else python3 on PATH]")
      ("help,h", "show this help");
  po::options_description visible(kHelpWidth, kHelpWidth / 2);
  visible.add(study).add(diagnostic_option_group(true));
  const auto vm = parse_command_line(args, visible, {});
  if (vm.count("help")) {
    std::cout << kUsage << '\n' << visible;
    return 0;
  }
  const Diagnostics diag = read_diagnostics(vm);
  if (vm.count("large") && !vm["preset"].defaulted()) usage_error("--large", "cannot be combined with --preset");
  const std::string python = vm.count("python") ? vm["python"].as<std::string>() : default_python();
  if (!vm.count("large") && vm["preset"].as<std::string>() == "real") return run_real_preset(vm, args, diag, python);
  StudyPreset preset = study_preset(vm.count("large") ? "large" : vm["preset"].as<std::string>());
  if (vm.count("seeds")) preset.seeds = static_cast<int>(parse_integer("--seeds", vm["seeds"].as<std::string>(), 1, 1000));
  std::vector<std::string> workloads = study_workload_names();
  if (vm.count("workloads")) {
    workloads = split_list(vm["workloads"].as<std::string>());
    if (workloads.empty()) usage_error("--workloads", "names no workload");
    for (const auto& w : workloads) {
      const auto all = study_workload_names();
      if (std::find(all.begin(), all.end(), w) == all.end())
        usage_error("--workloads", "unknown workload '" + w + "' (expected planted-dense, sparse, low-rank-sparse or covariance)");
    }
  }
  const std::string plot_mode = vm["plot"].as<std::string>();
  if (plot_mode != "auto" && plot_mode != "never") usage_error("--plot", "unknown value '" + plot_mode + "' (expected auto or never)");
  const int threads = vm.count("threads") ? static_cast<int>(parse_integer("--threads", vm["threads"].as<std::string>(), 0, 4096)) : 0;

  BackendSelection selection = select_backend(parse_backend_choice("--backend", vm["backend"].as<std::string>()), threads);
  SketchBackend& backend = *selection.backend;
  const fs::path out(vm["out"].as<std::string>());
  ensure_directory(out, "--out");
  if (!diag.quiet() && !selection.auto_note.empty()) std::fprintf(stderr, "pagh-mm: %s\n", selection.auto_note.c_str());
  if (!diag.quiet() && preset.name == "large" && backend.name() == "cpu")
    std::fprintf(stderr, "pagh-mm: warning: the large preset is meant for a GPU; on the CPU it takes hours\n");

  const auto configs = study_configs(preset);
  const std::int64_t total = static_cast<std::int64_t>(configs.size() * workloads.size()) * preset.seeds;
  StudyContext context;
  context.preset = preset;
  context.backend = backend.name(), context.device = backend.device();
  context.version = version_string(), context.commit = git_commit(), context.date = today_utc();
  context.workloads = workloads;
  context.command = "pagh-mm study";
  for (const auto& a : args) context.command += " " + a;
  std::vector<StudyRow> rows;
  rows.reserve(static_cast<std::size_t>(total));

  const auto start = std::chrono::steady_clock::now();
  Progress progress(diag.progress, diag.quiet());
  std::int64_t done = 0;
  for (int s = 1; s <= preset.seeds; ++s) {
    for (const auto& name : workloads) {
      progress.step(done, total, name + " seed " + std::to_string(s) + ": generating, exact product");
      const StudyWorkload w = make_workload(name, preset.n, static_cast<std::uint64_t>(s));
      if (s == 1) {
        context.workload_descriptions.push_back(w.description);
        context.workload_shapes.push_back(std::to_string(w.m) + " x " + std::to_string(w.k) + " x " + std::to_string(w.p));
      }
      double exact_ms = 0;
      const Eigen::MatrixXd exact = backend.exact_product(w.a, w.b, exact_ms);
      Eigen::MatrixXd fp64_estimate;  // the precision sweep's reference (its first configuration)
      for (const auto& c : configs) {
        progress.step(done, total, name + " seed " + std::to_string(s) + ": " + config_label(c));
        pagh::SketchParams params;
        params.pad = c.pad, params.repetitions = c.sketches, params.seed = 1000 + static_cast<std::uint64_t>(s);
        params.precision = c.precision, params.stabilization = c.stabilization, params.algorithm = c.algorithm;
        params.threads = threads;
        const pagh::CompressedProduct product = backend.compress(w.a, w.b, params);
        StudyRow row;
        row.workload = name, row.m = w.m, row.k = w.k, row.p = w.p, row.seed = static_cast<std::uint64_t>(s);
        row.config = c, row.buckets = product.buckets();
        row.metrics = pagh::verify(product, exact, preset.top_k);
        row.single_estimate_bound = std::sqrt(static_cast<double>(w.m) * static_cast<double>(w.p) / product.buckets());
        row.compress_ms = product.timings().total_ms, row.exact_ms = exact_ms;
        if (c.sweep == "precision") {
          if (fp64_estimate.size() == 0) {
            fp64_estimate = product.decompress();  // configs put fp64/none/folklore first
            row.deviation_from_fp64 = 0.0;
          } else {
            const double reference = fp64_estimate.norm();
            row.deviation_from_fp64 = reference > 0 ? (product.decompress() - fp64_estimate).norm() / reference : 0.0;
          }
        }
        rows.push_back(std::move(row));
        ++done;
      }
    }
  }
  progress.step(done, total, "writing results");
  context.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  write_text_file_atomically(out / "results.csv", study_csv(rows));
  PlotResult plots;
  if (plot_mode == "never") plots.note = "--plot never";
  else plots = draw_study_plots(out, python);
  write_text_file_atomically(out / "summary.md", study_summary_markdown(context, rows, plots.files, plots.note));
  progress.finish();

  std::printf("study %s: %zu runs in %.1f s on %s\n", preset.name.c_str(), rows.size(), context.wall_seconds,
              backend.name().c_str());
  std::printf("wrote %s and %s\n", (out / "results.csv").c_str(), (out / "summary.md").c_str());
  if (plots.files.empty()) {
    std::printf("plots skipped: %s\n", plots.note.c_str());
  } else {
    std::printf("plots:");
    for (const auto& f : plots.files) std::printf(" %s", (out / f).c_str());
    std::printf("\n");
  }
  return 0;
}

}  // namespace pagh_mm
