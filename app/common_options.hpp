// Options shared by several commands, and the value parsers behind every option: each parser names
// the option in its message ("--pad: must be a positive number, got '-1'") and throws CliError (64).
#pragma once

#include <boost/program_options.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "backend.hpp"
#include "progress.hpp"
#include "sketch/params.hpp"

namespace pagh_mm {

namespace po = boost::program_options;

// The most entries -k/--top may ask for, the same as the most a --threshold may select: each is held
// in memory and printed (2^26 entries are about 2 GB of text).
inline constexpr std::int64_t kMaxReportedEntries = std::int64_t{1} << 26;

// Width of --help text (Boost's default, 80, wraps every description into a narrow column).
inline constexpr unsigned kHelpWidth = 110;

enum class OutputFormat { text, json, csv, tsv };
enum class Verbosity { quiet, normal, verbose };

// --format, -q/-v, --progress (the last only for commands that run long).
struct Diagnostics {
  OutputFormat format = OutputFormat::text;
  Verbosity verbosity = Verbosity::normal;
  ProgressMode progress = ProgressMode::automatic;
  bool quiet() const { return verbosity == Verbosity::quiet; }
  bool verbose() const { return verbosity == Verbosity::verbose; }
};

// --backend, --pad/--buckets, --sketches, --seed, --precision, --stabilize, --algorithm, --threads.
struct SketchSettings {
  BackendChoice backend = BackendChoice::automatic;
  pagh::SketchParams params;
  bool size_given = false;  // --pad or --buckets fixed the sketch length
};

po::options_description sketch_option_group();
SketchSettings read_sketch_settings(const po::variables_map& vm);

po::options_description format_option_group();                      // --format
po::options_description diagnostic_option_group(bool with_progress);  // -q, -v, --progress
Diagnostics read_diagnostics(const po::variables_map& vm);

// Parses args against the options (positional ones as given). Long options must be spelled in full:
// guessing from prefixes is off, so a typo is an error rather than another option.
po::variables_map parse_command_line(const std::vector<std::string>& args, const po::options_description& options,
                                     const po::positional_options_description& positional);

// Value parsers; `option` is the name shown in messages ("--pad").
double parse_number(const std::string& option, const std::string& text);
double parse_positive_number(const std::string& option, const std::string& text);
double parse_non_negative_number(const std::string& option, const std::string& text);
std::int64_t parse_integer(const std::string& option, const std::string& text, std::int64_t min, std::int64_t max);
std::uint64_t parse_unsigned(const std::string& option, const std::string& text);

// Names as the command line spells them: fp64/fp32/fp16/bf16, none/kahan/neumaier, folklore/alman-rao.
std::string precision_name(fwht::DType precision);
std::string algorithm_name(fwht::Algorithm algorithm);
std::string stabilization_name(fwht::Stabilization stabilization);
fwht::DType parse_precision(const std::string& option, const std::string& text);
fwht::Stabilization parse_stabilization(const std::string& option, const std::string& text);
fwht::Algorithm parse_algorithm(const std::string& option, const std::string& text);

// Throws CliError (64) for combinations the library would refuse later (alman-rao has no
// stabilized variant), naming both options.
void check_sketch_params(const pagh::SketchParams& params);

}  // namespace pagh_mm
