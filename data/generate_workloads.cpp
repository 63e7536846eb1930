// mtx-generate: writes a synthetic A.mtx and B.mtx for the compressed product A*B.
// See data/README.md for the workloads and the exact commands behind the committed examples.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "matrix_io/synthetic.hpp"
#include "matrix_io/write.hpp"

namespace {

namespace mio = pagh::matrix_io;

constexpr const char* usage = R"(usage: mtx-generate WORKLOAD [OPTIONS]

Writes A (m x k) and B (k x p) as Matrix Market files; deterministic for a given --seed.

Workloads and their options (defaults in brackets):
  planted-dense     dense Gaussian A, B with large entries planted in A*B
                    --m [64] --k [96] --p [80] --planted [4] --planted-value [0 = 10x background]
                    --scale [1] --integer (round entries to integers; files use the integer field)
  sparse            sparse random A, B with a sparse product
                    --m --k --p [1000] --a-per-row [4] --b-per-col [4] --integer
  low-rank-sparse   low-rank plus sparse A, B (dense files)
                    --m --k --p [256] --rank [8] --sparse-density [0.01] --sparse-scale [10]
  covariance        A = X^T, B = X for data X (samples x features) with correlated feature pairs
                    --samples [1000] --features [200] --pairs [3] --correlation [0.9]

Common options:
  --seed N       random seed [1]
  --out-a FILE   where to write A [A.mtx]
  --out-b FILE   where to write B [B.mtx]
  --help         show this text

Planted entries (0-based row, col and the planted value) are printed to standard output.
)";

struct Arguments {
  std::string workload;
  std::map<std::string, std::string> values;  // "--name" -> value
  std::vector<std::string> flags;             // "--integer"
};

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr, "mtx-generate: %s\n(run mtx-generate --help for usage)\n", message.c_str());
  std::exit(2);
}

const std::map<std::string, std::vector<std::string>> valued_options = {
    {"planted-dense", {"--m", "--k", "--p", "--planted", "--planted-value", "--scale"}},
    {"sparse", {"--m", "--k", "--p", "--a-per-row", "--b-per-col"}},
    {"low-rank-sparse", {"--m", "--k", "--p", "--rank", "--sparse-density", "--sparse-scale"}},
    {"covariance", {"--samples", "--features", "--pairs", "--correlation"}},
};

bool allowed(const std::string& workload, const std::string& name) {
  if (name == "--seed" || name == "--out-a" || name == "--out-b") return true;
  const auto& names = valued_options.at(workload);
  return std::find(names.begin(), names.end(), name) != names.end();
}

Arguments parse(int argc, char** argv) {
  Arguments args;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(usage, stdout);
      std::exit(0);
    }
    if (args.workload.empty()) {
      if (!valued_options.contains(arg)) usage_error("unknown workload '" + arg + "'");
      args.workload = arg;
    } else if (arg == "--integer") {
      if (args.workload != "planted-dense" && args.workload != "sparse")
        usage_error("--integer applies to planted-dense and sparse only");
      args.flags.push_back(arg);
    } else if (allowed(args.workload, arg)) {
      if (i + 1 >= argc) usage_error(arg + " needs a value");
      args.values[arg] = argv[++i];
    } else {
      usage_error("unknown option '" + arg + "' for workload " + args.workload);
    }
  }
  if (args.workload.empty()) usage_error("no workload given");
  return args;
}

std::int64_t integer(const Arguments& args, const std::string& name, std::int64_t fallback) {
  const auto it = args.values.find(name);
  if (it == args.values.end()) return fallback;
  char* end = nullptr;
  const long long value = std::strtoll(it->second.c_str(), &end, 10);
  if (it->second.empty() || *end != '\0') usage_error(name + " needs an integer, got '" + it->second + "'");
  return value;
}

double real(const Arguments& args, const std::string& name, double fallback) {
  const auto it = args.values.find(name);
  if (it == args.values.end()) return fallback;
  char* end = nullptr;
  const double value = std::strtod(it->second.c_str(), &end);
  if (it->second.empty() || *end != '\0') usage_error(name + " needs a number, got '" + it->second + "'");
  return value;
}

std::string text(const Arguments& args, const std::string& name, const std::string& fallback) {
  const auto it = args.values.find(name);
  return it == args.values.end() ? fallback : it->second;
}

bool flag(const Arguments& args, const std::string& name) {
  return std::find(args.flags.begin(), args.flags.end(), name) != args.flags.end();
}

void print_planted(const std::vector<mio::PlantedEntry>& planted) {
  for (const auto& e : planted)
    std::printf("planted (%lld, %lld) %.17g\n", static_cast<long long>(e.row), static_cast<long long>(e.col), e.value);
}

}  // namespace

int main(int argc, char** argv) {
  const Arguments args = parse(argc, argv);
  try {
    const std::uint64_t seed = static_cast<std::uint64_t>(integer(args, "--seed", 1));
    mio::WriteOptions options;
    std::string command = "mtx-generate";
    for (int i = 1; i < argc; ++i) command += std::string(" ") + argv[i];
    options.comments = {"command: " + command};
    const std::string out_a = text(args, "--out-a", "A.mtx"), out_b = text(args, "--out-b", "B.mtx");
    if (args.workload == "sparse") {
      mio::SparseProductOptions o;
      o.m = integer(args, "--m", o.m), o.k = integer(args, "--k", o.k), o.p = integer(args, "--p", o.p);
      o.seed = seed;
      o.a_per_row = integer(args, "--a-per-row", o.a_per_row);
      o.b_per_col = integer(args, "--b-per-col", o.b_per_col);
      o.integer_entries = flag(args, "--integer");
      if (o.integer_entries) options.field = mio::Field::integer;
      const mio::SparsePair pair = mio::sparse_product(o);
      mio::write_matrix_market(out_a, pair.a, options);
      mio::write_matrix_market(out_b, pair.b, options);
    } else {
      mio::DensePair pair;
      if (args.workload == "planted-dense") {
        mio::PlantedDenseOptions o;
        o.m = integer(args, "--m", o.m), o.k = integer(args, "--k", o.k), o.p = integer(args, "--p", o.p);
        o.seed = seed;
        o.planted = integer(args, "--planted", o.planted);
        o.planted_value = real(args, "--planted-value", o.planted_value);
        o.scale = real(args, "--scale", o.scale);
        o.integer_entries = flag(args, "--integer");
        if (o.integer_entries) options.field = mio::Field::integer;
        pair = mio::planted_dense(o);
      } else if (args.workload == "low-rank-sparse") {
        mio::LowRankPlusSparseOptions o;
        o.m = integer(args, "--m", o.m), o.k = integer(args, "--k", o.k), o.p = integer(args, "--p", o.p);
        o.seed = seed;
        o.rank = integer(args, "--rank", o.rank);
        o.sparse_density = real(args, "--sparse-density", o.sparse_density);
        o.sparse_scale = real(args, "--sparse-scale", o.sparse_scale);
        pair = mio::low_rank_plus_sparse(o);
      } else {
        mio::SampleCovarianceOptions o;
        o.samples = integer(args, "--samples", o.samples);
        o.features = integer(args, "--features", o.features);
        o.seed = seed;
        o.pairs = integer(args, "--pairs", o.pairs);
        o.correlation = real(args, "--correlation", o.correlation);
        pair = mio::sample_covariance(o);
      }
      mio::write_matrix_market(out_a, pair.a, options);
      mio::write_matrix_market(out_b, pair.b, options);
      print_planted(pair.planted);
    }
    std::printf("wrote %s and %s\n", out_a.c_str(), out_b.c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mtx-generate: %s\n", e.what());
    return 1;
  }
}
