// pagh-mm top SKETCH [-k K] [--threshold T] [-o FILE]: the largest entries from a saved sketch.
#include <cstdio>
#include <iostream>

#include "cli_error.hpp"
#include "commands.hpp"
#include "common_options.hpp"
#include "matrix_io/write.hpp"
#include "output_files.hpp"
#include "reports.hpp"
#include "sketch_answers.hpp"
#include "version.hpp"

namespace pagh_mm {
namespace {

constexpr const char* kUsage = R"(usage: pagh-mm top SKETCH [-k K] [--threshold T] [-o FILE] [--format text|json]

Prints the K entries of largest |estimate| (or every entry with |estimate| >= T) of the product
whose sketch pagh-mm --save-sketch saved, with error bars. A and B are not needed.

Example:
  pagh-mm --save-sketch C.pagh data/A.mtx data/B.mtx
  pagh-mm top C.pagh -k 4 -o top4.mtx
)";

// Finding the largest entries evaluates at least every candidate of one bucket, about m * p / b
// entries (heavy-bucket recovery and the scan alike); beyond 2^34 of them (minutes of work) a sketch
// is too short for its product to rank, whatever the machine: refused as unusable data (65). Saved
// sketches of pagh-mm have b >= pad * max(m, p), so m * p / b <= min(m, p) / pad: far below.
void check_rankable(const pagh::CompressedProduct& product, const std::string& path) {
  const double per_bucket = static_cast<double>(product.rows()) * static_cast<double>(product.cols()) /
                            static_cast<double>(product.buckets());
  if (per_bucket > static_cast<double>(std::uint64_t{1} << 34))
    throw CliError(ExitCode::data, path,
                   "too short to rank: b = " + std::to_string(product.buckets()) + " buckets for a " +
                       std::to_string(product.rows()) + " x " + std::to_string(product.cols()) +
                       " product puts about " + std::to_string(static_cast<long long>(per_bucket)) +
                       " entries in each bucket, more than 2^34 (query still answers single entries)");
}

}  // namespace

int run_top(const std::vector<std::string>& args) {
  po::options_description visible(kHelpWidth, kHelpWidth / 2);
  visible.add_options()
      ("top,k", po::value<std::string>()->value_name("K"), "the K entries of largest |estimate| [10]")
      ("threshold", po::value<std::string>()->value_name("T"), "every entry with |estimate| >= T instead (at most K with -k)")
      ("output,o", po::value<std::string>()->value_name("FILE"), "also write them as a Matrix Market coordinate file")
      ("exhaustive", "evaluate all m*p estimates (the oracle; by default entries come from the sketch's heavy buckets)");
  visible.add(format_option_group()).add(diagnostic_option_group(false));
  visible.add_options()("help,h", "show this help");
  po::options_description all;
  all.add(visible).add_options()("sketch", po::value<std::vector<std::string>>(), "SKETCH");
  po::positional_options_description positional;
  positional.add("sketch", -1);
  const auto vm = parse_command_line(args, all, positional);
  if (vm.count("help")) {
    std::cout << kUsage << '\n' << visible;
    return 0;
  }
  const Diagnostics diag = read_diagnostics(vm);
  const auto paths = vm.count("sketch") ? vm["sketch"].as<std::vector<std::string>>() : std::vector<std::string>{};
  if (paths.size() != 1) usage_error("top", "expected one sketch file, got " + std::to_string(paths.size()));
  Selection selection;
  selection.k = 10;
  if (vm.count("top")) selection.k = static_cast<std::size_t>(parse_integer("-k", vm["top"].as<std::string>(), 1, kMaxReportedEntries));
  if (vm.count("threshold")) {
    selection.kind = Selection::Kind::threshold;
    selection.threshold = parse_non_negative_number("--threshold", vm["threshold"].as<std::string>());
    selection.limited = vm.count("top") > 0;
  }
  OutputTransaction outputs;
  const std::string output_path = vm.count("output") ? vm["output"].as<std::string>() : "";
  const auto staging = output_path.empty() ? std::filesystem::path() : outputs.stage(output_path, "-o");
  outputs.refuse_overwriting(paths[0], "the sketch");

  const pagh::CompressedProduct product = load_sketch(paths[0]);
  check_rankable(product, paths[0]);
  if (diag.verbose() && selection.kind == Selection::Kind::top &&
      static_cast<double>(selection.k) > static_cast<double>(product.rows()) * static_cast<double>(product.cols()))
    std::fprintf(stderr, "pagh-mm: -k %zu exceeds the number of entries of C (%lld x %lld): every entry is reported\n",
                 selection.k, static_cast<long long>(product.rows()), static_cast<long long>(product.cols()));
  const pagh::Recovery how = vm.count("exhaustive") ? pagh::Recovery::exhaustive : pagh::Recovery::automatic;
  pagh::RecoveryStats recovery;
  std::vector<pagh::Entry> entries;
  double cutoff = 0;  // of the intervals (pagh::keep_top)
  if (selection.kind == Selection::Kind::top) {
    entries = product.top_k(selection.k + 1, how, &recovery);
    cutoff = pagh::keep_top(entries, selection.k);
  } else {
    entries = entries_above([&](double t) { return product.above(t, kMaxAboveEntries, how, &recovery); }, *selection.threshold,
                            selection.limited ? std::optional<std::size_t>(selection.k) : std::nullopt, "--threshold", &cutoff);
  }

  if (!output_path.empty()) {
    namespace mio = pagh::matrix_io;
    std::vector<mio::Entry> out;
    for (const auto& e : entries) out.push_back({e.row, e.col, e.value});
    mio::WriteOptions w;
    w.comments = {"pagh-mm " + std::string(version_string()) + " top: estimates from the sketch " + paths[0] +
                      ", not exact values",
                  "sketch: " + describe_sketch(product), "largest |estimate| first"};
    try {
      mio::write_matrix_market(staging, product.rows(), product.cols(), out, w);
    } catch (const mio::MatrixMarketError& e) {
      throw CliError(classify_write_failure(e.reason()), "-o " + output_path, e.reason());
    }
    outputs.commit();
    if (outputs.writes_standard_output()) return 0;  // -o -: the file is the output
  }

  SketchAnswerReport report;
  report.command = "top";
  report.sketch_path = paths[0];
  report.product = &product;
  report.selection = selection;
  const pagh::NoiseModel noise(product);
  report.entries = to_reported(entries, product, noise, cutoff);
  report.significance = assess_significance(noise, report.entries, recovery);
  report_significance(report.significance, report.entries.size(), diag);
  report.output_path = output_path;
  print_sketch_answer(report, diag.format, std::cout);
  return 0;
}

}  // namespace pagh_mm
