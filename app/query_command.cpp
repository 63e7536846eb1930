// pagh-mm query SKETCH i j [i j ...]: estimates of given entries from a saved sketch, without A, B.
#include <cstdint>
#include <iostream>

#include "cli_error.hpp"
#include "commands.hpp"
#include "common_options.hpp"
#include "reports.hpp"
#include "sketch_answers.hpp"

namespace pagh_mm {
namespace {

constexpr const char* kUsage = R"(usage: pagh-mm query SKETCH i j [i j ...] [--format text|json]

Prints the estimate of C(i, j), with its error bar, for each pair of 1-based indices, from a sketch
saved by pagh-mm --save-sketch. A and B are not needed.

Example:
  pagh-mm --save-sketch C.pagh data/A.mtx data/B.mtx
  pagh-mm query C.pagh 51 46 12 8
)";

}  // namespace

int run_query(const std::vector<std::string>& args) {
  po::options_description visible(kHelpWidth, kHelpWidth / 2);
  visible.add(format_option_group());
  visible.add_options()("help,h", "show this help");
  po::options_description all;
  all.add(visible).add_options()("arguments", po::value<std::vector<std::string>>(), "SKETCH i j ...");
  po::positional_options_description positional;
  positional.add("arguments", -1);
  const auto vm = parse_command_line(args, all, positional);
  if (vm.count("help")) {
    std::cout << kUsage << '\n' << visible;
    return 0;
  }
  const Diagnostics diag = read_diagnostics(vm);
  const auto words = vm.count("arguments") ? vm["arguments"].as<std::vector<std::string>>() : std::vector<std::string>{};
  if (words.empty()) usage_error("query", "expected a sketch file and pairs of indices i j");
  if (words.size() < 3 || words.size() % 2 == 0)
    usage_error("query", "expected pairs of indices i j after the sketch file, got " + std::to_string(words.size() - 1) +
                             " number" + (words.size() == 2 ? "" : "s"));

  // Parse every index before loading the sketch: a typo should not wait for a large file.
  std::vector<std::pair<std::int64_t, std::int64_t>> wanted;
  const auto index = [](const std::string& text) {
    const std::int64_t i = parse_integer("query", text, INT64_MIN, INT64_MAX);
    if (i < 1) usage_error("query", "indices are 1-based, got " + text);
    return i;
  };
  for (std::size_t w = 1; w + 1 < words.size(); w += 2) wanted.emplace_back(index(words[w]), index(words[w + 1]));

  const pagh::CompressedProduct product = load_sketch(words[0]);
  SketchAnswerReport report;
  report.command = "query";
  report.sketch_path = words[0];
  report.product = &product;
  report.selection.kind = Selection::Kind::query;
  const pagh::NoiseModel noise(product);
  for (const auto& [i, j] : wanted) {
    if (i > product.rows() || j > product.cols())
      usage_error("query", "entry (" + std::to_string(i) + ", " + std::to_string(j) + ") is outside the " +
                               std::to_string(product.rows()) + " x " + std::to_string(product.cols()) +
                               " product (indices are 1-based)");
    pagh::Entry e = product.entry(i - 1, j - 1);
    e.row = i - 1, e.col = j - 1;
    report.entries.push_back(to_reported({e}, product, noise, 0.0).front());  // chosen before sketching: no cutoff
  }
  print_sketch_answer(report, diag.format, std::cout);
  return 0;
}

}  // namespace pagh_mm
