#include "multiply_options.hpp"

#include <iostream>

#include "cli_error.hpp"
#include "version.hpp"

namespace pagh_mm {
namespace {

constexpr const char* kUsage = R"(usage: pagh-mm [options] A.mtx B.mtx          the largest entries of C = A*B, with error bars
       pagh-mm query SKETCH i j [i j ...]      estimates of entries, from a saved sketch
       pagh-mm top SKETCH [-k K]               the largest entries, from a saved sketch
       pagh-mm generate WORKLOAD [options]     synthetic A.mtx and B.mtx with known large entries
       pagh-mm study [options]                 accuracy study versus the exact product
       pagh-mm COMMAND --help                  the options of a subcommand

Computes Pagh's compressed product of two Matrix Market files (dense or sparse, real or integer;
plain or gzip-compressed) or NumPy .npy arrays (float32/float64), and reports the entries of C = A*B
of largest magnitude, each with an error bar, without forming C. Indices are 1-based, as in Matrix
Market files.)";

constexpr const char* kExamples = R"(
Examples:
  pagh-mm data/A.mtx data/B.mtx                          top 10 entries, with error bars
  pagh-mm --top 4 --sketches 5 --seed 7 data/A.mtx data/B.mtx
  pagh-mm --threshold 500 -o big.mtx data/A.mtx data/B.mtx   entries with |estimate| >= 500 to a file
  pagh-mm --full -o C.mtx data/A.mtx data/B.mtx          the whole estimate as a dense array
  pagh-mm --transpose-a X.npy X.npy                      screen X^T X from X (samples x features)
  pagh-mm --verify --format json data/A.mtx data/B.mtx   compare with the exact product, as JSON
  pagh-mm --save-sketch C.pagh data/A.mtx data/B.mtx && pagh-mm top C.pagh -k 4

Exit status: 0 success, 64 usage error, 65 bad input data (including cols(A) != rows(B)),
66 cannot open an input, 69 CUDA backend requested but unavailable, 70 internal error,
71 not enough memory (or threads) for the request,
73 cannot create an output, 74 I/O error. Output files appear complete or not at all.
)";

}  // namespace

std::optional<MultiplyOptions> parse_multiply_options(const std::vector<std::string>& args) {
  po::options_description output("Output", kHelpWidth, kHelpWidth / 2);
  output.add_options()
      ("top,k", po::value<std::string>()->value_name("K"), "report the K entries of largest |estimate| [10]")
      ("threshold", po::value<std::string>()->value_name("T"),
       "report every entry with |estimate| >= T instead (at most K with --top)")
      ("output,o", po::value<std::string>()->value_name("FILE"),
       "write the reported entries as a Matrix Market coordinate file (- = standard output, instead of the report); "
       "FILE.npy: a K x 3 NumPy array of (row, column, estimate), 0-based indices")
      ("full", "with -o: write the whole estimated product as a dense Matrix Market array, or a .npy array for "
               "FILE.npy (when it fits in 8 GiB)")
      ("save-sketch", po::value<std::string>()->value_name("FILE"),
       "save the sketch, for pagh-mm query/top later without A and B (- = standard output)");
  po::options_description input("Input", kHelpWidth, kHelpWidth / 2);
  input.add_options()("transpose-a", "use the transpose of the first file as A (X.npy X.npy: the product X^T X)")
      ("correlation", "multiply standardized operands: C(i,j) is the Pearson correlation of row i of A with column j of B "
                      "over the inner index (with --transpose-a X X: the correlation matrix of X's columns)");
  po::options_description checking("Checking", kHelpWidth, kHelpWidth / 2);
  checking.add_options()
      ("method", po::value<std::string>()->value_name("auto|sketch|exact")->default_value("auto"),
       "exact: compute the product exactly and report its exact entries; sketch: always sketch; auto: exact when the cost "
       "model (sketch/method.hpp) says it is cheaper and fits in memory (--verify, --full and --save-sketch need a sketch)")
      ("resolve", po::value<std::string>()->value_name("TAU"),
       "choose the sketch length so that entries with |value| >= TAU are found significant with probability 0.95 "
       "(from a first sketch's noise; instead of --pad/--buckets)")
      ("no-diagonal", "square products: report off-diagonal entries only (the diagonal, computed exactly, is always taken "
                      "out of the sketch when it carries noticeable energy, as in Gram and covariance products)")
      ("refine", "evaluate the sketch's leading candidates exactly from A and B and report their exact values, with a "
                 "bound on the entries missed (the default with --method auto)")
      ("no-refine", "report the sketch's estimates with their intervals (the default with --method sketch)")
      ("verify", "also compute the exact product and report the error metrics")
      ("exhaustive", "select entries by evaluating all m*p estimates (the oracle; by default they are recovered from the "
                     "heavy buckets of the sketch, with the same answer)");
  po::options_description general("General", kHelpWidth, kHelpWidth / 2);
  general.add_options()("help,h", "show this help")("version", "show version, git commit, CUDA runtime/driver and GPU");
  po::options_description hidden;
  hidden.add_options()("inputs", po::value<std::vector<std::string>>(), "A.mtx B.mtx");

  po::options_description visible(kHelpWidth, kHelpWidth / 2);
  visible.add(sketch_option_group()).add(input).add(output).add(checking).add(format_option_group())
      .add(diagnostic_option_group(true)).add(general);
  po::options_description all;
  all.add(visible).add(hidden);
  po::positional_options_description positional;
  positional.add("inputs", -1);

  const po::variables_map vm = parse_command_line(args, all, positional);
  if (vm.count("help")) {
    std::cout << kUsage << '\n' << visible << kExamples;
    return std::nullopt;
  }
  if (vm.count("version")) {
    print_version();
    return std::nullopt;
  }

  MultiplyOptions o;
  // Option values first: "--pad A.mtx B.mtx" is better reported as a bad --pad than as one input.
  o.sketch = read_sketch_settings(vm);
  o.diagnostics = read_diagnostics(vm);
  if (vm.count("top")) {
    o.top = static_cast<std::size_t>(parse_integer("--top", vm["top"].as<std::string>(), 1, kMaxReportedEntries));
    o.top_given = true;
  }
  if (vm.count("threshold")) o.threshold = parse_non_negative_number("--threshold", vm["threshold"].as<std::string>());
  if (vm.count("output")) o.output_path = vm["output"].as<std::string>();
  if (vm.count("save-sketch")) o.sketch_path = vm["save-sketch"].as<std::string>();
  o.full = vm.count("full") > 0;
  o.transpose_a = vm.count("transpose-a") > 0;
  o.correlation = vm.count("correlation") > 0;
  o.verify = vm.count("verify") > 0;
  o.exhaustive = vm.count("exhaustive") > 0;
  o.no_diagonal = vm.count("no-diagonal") > 0;
  if (vm.count("refine") && vm.count("no-refine")) usage_error("--refine", "cannot be combined with --no-refine");
  if (vm.count("refine")) o.refine = true;
  if (vm.count("no-refine")) o.refine = false;
  if (vm.count("resolve")) {
    o.resolve = parse_non_negative_number("--resolve", vm["resolve"].as<std::string>());
    if (!(*o.resolve > 0)) usage_error("--resolve", "must be a positive number");
    if (o.sketch.size_given) usage_error("--resolve", "cannot be combined with --pad or --buckets (it chooses the length)");
  }
  const std::string method = vm["method"].as<std::string>();
  if (method == "auto") o.method = pagh::Method::automatic;
  else if (method == "sketch") o.method = pagh::Method::sketch;
  else if (method == "exact") o.method = pagh::Method::exact;
  else usage_error("--method", "expected auto, sketch or exact, got '" + method + "'");
  if (o.method == pagh::Method::exact && (o.verify || o.full || !o.sketch_path.empty()))
    usage_error("--method exact", std::string("cannot be combined with ") + (o.verify ? "--verify" : o.full ? "--full" : "--save-sketch") +
                                      ", which needs a sketch");
  const auto inputs = vm.count("inputs") ? vm["inputs"].as<std::vector<std::string>>() : std::vector<std::string>{};
  if (inputs.size() != 2)
    usage_error("", "expected two input files A.mtx B.mtx, got " + std::to_string(inputs.size()) +
                        (inputs.size() > 2 ? " (an option's value given without its option?)" : ""));
  o.a_path = inputs[0], o.b_path = inputs[1];
  if (o.full && o.output_path.empty()) usage_error("--full", "needs -o FILE (the whole product is not printed)");
  if (o.full && o.threshold) usage_error("--full", "cannot be combined with --threshold (--full writes every entry)");
  return o;
}

}  // namespace pagh_mm
