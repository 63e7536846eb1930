#include "common_options.hpp"

#include <charconv>
#include <cmath>
#include <limits>

#include "cli_error.hpp"
#include "resource_plan.hpp"

namespace pagh_mm {

namespace {

std::string value_of(const po::variables_map& vm, const char* name) { return vm[name].as<std::string>(); }

}  // namespace

double parse_number(const std::string& option, const std::string& text) {
  double value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || !std::isfinite(value))
    usage_error(option, "expected a number, got '" + text + "'");
  return value;
}

double parse_positive_number(const std::string& option, const std::string& text) {
  const double value = parse_number(option, text);
  if (!(value > 0)) usage_error(option, "must be a positive number, got '" + text + "'");
  return value;
}

double parse_non_negative_number(const std::string& option, const std::string& text) {
  const double value = parse_number(option, text);
  if (value < 0) usage_error(option, "must be zero or positive, got '" + text + "'");
  return value;
}

std::int64_t parse_integer(const std::string& option, const std::string& text, std::int64_t min, std::int64_t max) {
  std::int64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end) usage_error(option, "expected an integer, got '" + text + "'");
  if (value < min || value > max)
    usage_error(option, "must be between " + std::to_string(min) + " and " + std::to_string(max) + ", got " + text);
  return value;
}

std::uint64_t parse_unsigned(const std::string& option, const std::string& text) {
  std::uint64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end)
    usage_error(option, "expected an integer between 0 and 2^64-1, got '" + text + "'");
  return value;
}

std::string precision_name(fwht::DType precision) {
  switch (precision) {
    case fwht::DType::f64: return "fp64";
    case fwht::DType::f32: return "fp32";
    case fwht::DType::f16: return "fp16";
    case fwht::DType::bf16: return "bf16";
    default: return std::string(fwht::to_string(precision));
  }
}

std::string algorithm_name(fwht::Algorithm algorithm) {
  return algorithm == fwht::Algorithm::alman_rao ? "alman-rao" : "folklore";
}

std::string stabilization_name(fwht::Stabilization stabilization) { return std::string(fwht::to_string(stabilization)); }

fwht::DType parse_precision(const std::string& option, const std::string& text) {
  if (text == "fp64") return fwht::DType::f64;
  if (text == "fp32") return fwht::DType::f32;
  if (text == "fp16") return fwht::DType::f16;
  if (text == "bf16") return fwht::DType::bf16;
  usage_error(option, "unknown precision '" + text + "' (expected fp64, fp32, fp16 or bf16)");
}

fwht::Stabilization parse_stabilization(const std::string& option, const std::string& text) {
  if (text == "none") return fwht::Stabilization::none;
  if (text == "kahan") return fwht::Stabilization::kahan;
  if (text == "neumaier") return fwht::Stabilization::neumaier;
  usage_error(option, "unknown stabilization '" + text + "' (expected none, kahan or neumaier)");
}

fwht::Algorithm parse_algorithm(const std::string& option, const std::string& text) {
  if (text == "folklore") return fwht::Algorithm::folklore;
  if (text == "alman-rao" || text == "alman_rao") return fwht::Algorithm::alman_rao;
  usage_error(option, "unknown algorithm '" + text + "' (expected folklore or alman-rao)");
}

void check_sketch_params(const pagh::SketchParams& params) {
  if (params.algorithm == fwht::Algorithm::alman_rao && params.stabilization != fwht::Stabilization::none)
    usage_error("--algorithm alman-rao", "has no stabilized variant: use --algorithm folklore with --stabilize " +
                                             stabilization_name(params.stabilization) + ", or --stabilize none");
}

po::options_description sketch_option_group() {
  po::options_description group("Sketch", kHelpWidth, kHelpWidth / 2);
  group.add_options()
      ("backend", po::value<std::string>()->value_name("auto|cpu|cuda")->default_value("auto"),
       "where to compute; auto uses a usable GPU when this build has the CUDA backend, else the CPU, and says which on stderr")
      ("pad", po::value<std::string>()->value_name("P"),
       "sketch length b = next power of two >= P * max(rows(A), cols(B)) [8]")
      ("buckets", po::value<std::string>()->value_name("b"), "explicit sketch length b, a power of two (instead of --pad)")
      ("sketches,d", po::value<std::string>()->value_name("d"), "independent sketches; estimates are their median [3]")
      ("seed", po::value<std::string>()->value_name("S"), "seed of the hash functions (Philox4_32_10) [1]")
      ("precision", po::value<std::string>()->value_name("fp64|fp32|fp16|bf16"),
       "storage of the transformed vectors [fp32]; fp16/bf16 compute in fp32 registers")
      ("stabilize", po::value<std::string>()->value_name("none|kahan|neumaier"),
       "compensated (Kahan/Neumaier) Walsh-Hadamard butterflies [none]")
      ("algorithm", po::value<std::string>()->value_name("folklore|alman-rao"), "Walsh-Hadamard algorithm [folklore]")
      ("threads", po::value<std::string>()->value_name("T"), "CPU threads, 0 = all [0]; results do not depend on it");
  return group;
}

SketchSettings read_sketch_settings(const po::variables_map& vm) {
  SketchSettings s;
  s.backend = parse_backend_choice("--backend", value_of(vm, "backend"));
  if (vm.count("pad") && vm.count("buckets")) usage_error("--pad", "cannot be combined with --buckets (choose one)");
  if (vm.count("pad")) s.params.pad = parse_positive_number("--pad", value_of(vm, "pad"));
  s.size_given = vm.count("pad") || vm.count("buckets");
  if (vm.count("buckets")) {
    s.params.buckets = parse_integer("--buckets", value_of(vm, "buckets"), 1, std::int64_t{1} << 32);
    if (!fwht::is_power_of_two(s.params.buckets))
      usage_error("--buckets", "must be a power of two, got " + value_of(vm, "buckets"));
  }
  // 1024: the most a stored sketch file accepts; far beyond any useful median.
  if (vm.count("sketches")) s.params.repetitions = static_cast<int>(parse_integer("--sketches", value_of(vm, "sketches"), 1, 1024));
  if (vm.count("seed")) s.params.seed = parse_unsigned("--seed", value_of(vm, "seed"));
  if (vm.count("precision")) s.params.precision = parse_precision("--precision", value_of(vm, "precision"));
  if (vm.count("stabilize")) s.params.stabilization = parse_stabilization("--stabilize", value_of(vm, "stabilize"));
  if (vm.count("algorithm")) s.params.algorithm = parse_algorithm("--algorithm", value_of(vm, "algorithm"));
  if (vm.count("threads")) s.params.threads = static_cast<int>(parse_integer("--threads", value_of(vm, "threads"), 0, kMaxThreads));
  check_sketch_params(s.params);
  return s;
}

po::options_description format_option_group() {
  po::options_description group("Output format", kHelpWidth, kHelpWidth / 2);
  group.add_options()("format", po::value<std::string>()->value_name("text|json|csv|tsv")->default_value("text"),
                      "text for people, json for programs, csv/tsv: the entry table only (one header row)");
  return group;
}

po::options_description diagnostic_option_group(bool with_progress) {
  po::options_description group("Diagnostics", kHelpWidth, kHelpWidth / 2);
  group.add_options()
      ("quiet,q", "only errors on stderr (results still go to stdout)")
      ("verbose,v", "more detail on stderr: input sizes, the sketch, inner-index paths");
  if (with_progress)
    group.add_options()("progress", po::value<std::string>()->value_name("auto|always|never")->default_value("auto"),
                        "progress on stderr: auto shows a bar when stderr is a terminal");
  return group;
}

Diagnostics read_diagnostics(const po::variables_map& vm) {
  Diagnostics d;
  if (vm.count("format")) {
    const std::string f = value_of(vm, "format");
    if (f == "json") d.format = OutputFormat::json;
    else if (f == "csv") d.format = OutputFormat::csv;
    else if (f == "tsv") d.format = OutputFormat::tsv;
    else if (f != "text") usage_error("--format", "unknown format '" + f + "' (expected text, json, csv or tsv)");
  }
  if (vm.count("quiet") && vm.count("verbose")) usage_error("-q", "cannot be combined with -v");
  if (vm.count("quiet")) d.verbosity = Verbosity::quiet;
  if (vm.count("verbose")) d.verbosity = Verbosity::verbose;
  if (vm.count("progress")) d.progress = parse_progress_mode("--progress", value_of(vm, "progress"));
  return d;
}

po::variables_map parse_command_line(const std::vector<std::string>& args, const po::options_description& options,
                                     const po::positional_options_description& positional) {
  namespace style = po::command_line_style;
  po::variables_map vm;
  po::store(po::command_line_parser(args)
                .options(options)
                .positional(positional)
                .style(style::default_style & ~style::allow_guessing)
                .run(),
            vm);
  po::notify(vm);
  return vm;
}

}  // namespace pagh_mm
