// pagh-mm generate WORKLOAD [options]: the synthetic workloads of matrix_io (synthetic.hpp) as
// Matrix Market files, the same generators the study uses. Both files appear together or not at all.
#include <cstdio>
#include <iostream>
#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "cli_error.hpp"
#include "commands.hpp"
#include "common_options.hpp"
#include "matrix_io/synthetic.hpp"
#include "matrix_io/write.hpp"
#include "output_files.hpp"
#include "pagh/error.hpp"
#include "pagh/output_file.hpp"
#include "resource_plan.hpp"
#include "version.hpp"

namespace pagh_mm {
namespace {

namespace mio = pagh::matrix_io;

constexpr const char* kUsage = R"(usage: pagh-mm generate WORKLOAD [options] [--out-a A.mtx] [--out-b B.mtx]

Writes A (m x k) and B (k x p) as Matrix Market files, deterministic for a given --seed.
Workloads (options in brackets apply to it):
  planted-dense    dense Gaussian A, B with large entries planted in A*B
                   [--m --k --p --planted --planted-value --scale --integer]
  sparse           sparse random A, B (a-per-row nonzeros per row of A, b-per-col per column of B)
                   [--m --k --p --a-per-row --b-per-col --integer]
  low-rank-sparse  low-rank plus sparse A, B (dense files)
                   [--m --k --p --rank --sparse-density --sparse-scale]
  covariance       A = X^T, B = X for data X (samples x features) with correlated feature pairs
                   [--samples --features --pairs --correlation]
Planted entries are printed 1-based, as pagh-mm reports entries. Existing output files are
refused (status 73) unless --force is given.

Example:
  pagh-mm generate planted-dense --m 200 --k 300 --p 250 --planted 5 --seed 7 --out-a A.mtx --out-b B.mtx
  pagh-mm --verify A.mtx B.mtx
)";

// Which options each workload takes (besides --seed, --out-a, --out-b).
const std::map<std::string, std::set<std::string>> kWorkloadOptions = {
    {"planted-dense", {"m", "k", "p", "planted", "planted-value", "scale", "integer"}},
    {"sparse", {"m", "k", "p", "a-per-row", "b-per-col", "integer"}},
    {"low-rank-sparse", {"m", "k", "p", "rank", "sparse-density", "sparse-scale"}},
    {"covariance", {"samples", "features", "pairs", "correlation"}},
};
const char* const kWorkloadSpecific[] = {"m", "k", "p", "planted", "planted-value", "scale", "integer", "a-per-row",
                                         "b-per-col", "rank", "sparse-density", "sparse-scale", "samples", "features",
                                         "pairs", "correlation"};

constexpr std::int64_t kMaxDimension = std::int64_t{1} << 31;

// Memory plans of the generators (checked before they allocate): a dense pair A (m x k), B (k x p)
// of doubles; a sparse matrix holds about 40 bytes per entry while it is built (triplet, then
// compressed storage).
constexpr double kSparseEntryBytes = 40;
double dense_pair_bytes(std::int64_t m, std::int64_t k, std::int64_t p) {
  return 8.0 * static_cast<double>(k) * (static_cast<double>(m) + static_cast<double>(p));
}

// Entries that overflowed to infinity (a huge scale) are refused before anything is written,
// naming the options that set their size; Matrix Market has no way to write them.
void require_finite(const mio::DensePair& pair, const std::string& options) {
  if (!pair.a.allFinite() || !pair.b.allFinite())
    usage_error(options, "too large: the generated entries overflow the range of double (about 1.8e308)");
}

class Values {
 public:
  explicit Values(const po::variables_map& vm) : vm_(vm) {}
  std::int64_t dimension(const char* name, std::int64_t fallback) const {
    return vm_.count(name) ? parse_integer(std::string("--") + name, text(name), 1, kMaxDimension) : fallback;
  }
  std::int64_t count(const char* name, std::int64_t fallback) const {
    return vm_.count(name) ? parse_integer(std::string("--") + name, text(name), 0, kMaxDimension) : fallback;
  }
  double real(const char* name, double fallback) const {
    return vm_.count(name) ? parse_number(std::string("--") + name, text(name)) : fallback;
  }

 private:
  std::string text(const char* name) const { return vm_[name].as<std::string>(); }
  const po::variables_map& vm_;
};

}  // namespace

int run_generate(const std::vector<std::string>& args) {
  po::options_description visible("Options", kHelpWidth, kHelpWidth / 2);
  const auto value = [](const char* name) { return po::value<std::string>()->value_name(name); };
  visible.add_options()
      ("m", value("M"), "rows of A [64 planted-dense, 1000 sparse, 256 low-rank-sparse]")
      ("k", value("K"), "columns of A = rows of B [96, 1000, 256]")
      ("p", value("P"), "columns of B [80, 1000, 256]")
      ("planted", value("N"), "planted entries [4]")
      ("planted-value", value("V"), "size of a planted entry [0 = 10x the background std. dev.]")
      ("scale", value("S"), "std. dev. of the entries of A and B [1]")
      ("integer", "integer entries (integer Matrix Market field)")
      ("a-per-row", value("N"), "nonzeros per row of A [4]")
      ("b-per-col", value("N"), "nonzeros per column of B [4]")
      ("rank", value("R"), "rank of the low-rank part [8]")
      ("sparse-density", value("F"), "probability of a sparse entry [0.01]")
      ("sparse-scale", value("S"), "std. dev. of the sparse entries [10]")
      ("samples", value("N"), "rows of X [1000]")
      ("features", value("N"), "columns of X [200]")
      ("pairs", value("N"), "correlated feature pairs [3]")
      ("correlation", value("R"), "their correlation [0.9]")
      ("seed", value("S"), "random seed [1]")
      ("out-a", value("FILE")->default_value("A.mtx"), "where to write A")
      ("out-b", value("FILE")->default_value("B.mtx"), "where to write B")
      ("force", "replace --out-a and --out-b if they exist (without it, existing files are refused: 73)")
      ("quiet,q", "print nothing on success")
      ("help,h", "show this help");
  po::options_description all;
  all.add(visible).add_options()("workload", po::value<std::vector<std::string>>(), "WORKLOAD");
  po::positional_options_description positional;
  positional.add("workload", -1);
  const auto vm = parse_command_line(args, all, positional);
  if (vm.count("help")) {
    std::cout << kUsage << '\n' << visible;
    return 0;
  }
  const auto words = vm.count("workload") ? vm["workload"].as<std::vector<std::string>>() : std::vector<std::string>{};
  if (words.size() != 1)
    usage_error("generate", words.empty() ? "expected a workload (planted-dense, sparse, low-rank-sparse or covariance)"
                                          : "expected one workload, got " + std::to_string(words.size()));
  const std::string workload = words[0];
  const auto allowed = kWorkloadOptions.find(workload);
  if (allowed == kWorkloadOptions.end())
    usage_error("generate", "unknown workload '" + workload + "' (expected planted-dense, sparse, low-rank-sparse or covariance)");
  for (const char* name : kWorkloadSpecific)
    if (vm.count(name) && !allowed->second.contains(name))
      usage_error(std::string("--") + name, "does not apply to workload " + workload);

  const Values v(vm);
  const std::uint64_t seed = vm.count("seed") ? parse_unsigned("--seed", vm["seed"].as<std::string>()) : 1;
  const bool integer = vm.count("integer") > 0;
  OutputTransaction outputs;
  const std::string out_a = vm["out-a"].as<std::string>(), out_b = vm["out-b"].as<std::string>();
  const auto staged_a = outputs.stage(out_a, "--out-a");
  const auto staged_b = outputs.stage(out_b, "--out-b");
  // Never overwrite by surprise (the defaults are A.mtx and B.mtx in the working directory): an
  // existing regular file needs --force; a device or FIFO is meant to be written into.
  if (!vm.count("force"))
    for (const auto& [path, option] : {std::pair{out_a, "--out-a"}, std::pair{out_b, "--out-b"}})
      if (pagh::resolve_output(path, "pagh-mm").exists)
        throw CliError(ExitCode::cannot_create, std::string(option) + " " + path,
                       "cannot create output: the file exists (--force replaces it)");

  mio::WriteOptions w;
  std::string command = "pagh-mm generate";
  for (const auto& a : args) command += " " + a;
  w.comments = {"command: " + command};
  if (integer) w.field = mio::Field::integer;

  std::vector<mio::PlantedEntry> planted;
  try {
    if (workload == "sparse") {
      mio::SparseProductOptions o;
      o.m = v.dimension("m", o.m), o.k = v.dimension("k", o.k), o.p = v.dimension("p", o.p), o.seed = seed;
      o.a_per_row = v.count("a-per-row", o.a_per_row), o.b_per_col = v.count("b-per-col", o.b_per_col);
      o.integer_entries = integer;
      if (o.a_per_row > o.k || o.b_per_col > o.k) usage_error("--a-per-row", "--a-per-row and --b-per-col must be at most --k");
      require_memory(kSparseEntryBytes * static_cast<double>(o.m * o.a_per_row + o.p * o.b_per_col), "generate sparse");
      const mio::SparsePair pair = mio::sparse_product(o);
      mio::write_matrix_market(staged_a, pair.a, w);
      mio::write_matrix_market(staged_b, pair.b, w);
    } else {
      mio::DensePair pair;
      if (workload == "planted-dense") {
        mio::PlantedDenseOptions o;
        o.m = v.dimension("m", o.m), o.k = v.dimension("k", o.k), o.p = v.dimension("p", o.p), o.seed = seed;
        o.planted = v.count("planted", o.planted), o.planted_value = v.real("planted-value", o.planted_value);
        o.scale = v.real("scale", o.scale), o.integer_entries = integer;
        if (o.planted > o.k || o.planted > o.m * o.p)
          usage_error("--planted", "must be at most --k and at most m*p (each planted entry owns an inner index)");
        require_memory(dense_pair_bytes(o.m, o.k, o.p), "generate planted-dense");
        pair = mio::planted_dense(o);
        require_finite(pair, "--scale or --planted-value");
      } else if (workload == "low-rank-sparse") {
        mio::LowRankPlusSparseOptions o;
        o.m = v.dimension("m", o.m), o.k = v.dimension("k", o.k), o.p = v.dimension("p", o.p), o.seed = seed;
        o.rank = v.dimension("rank", o.rank);
        if (o.rank > std::min({o.m, o.k, o.p}))
          usage_error("--rank", "must be at most min(m, k, p) = " + std::to_string(std::min({o.m, o.k, o.p})) +
                                    " (a product of m x r and r x k factors has rank at most min(m, k, r))");
        o.sparse_density = v.real("sparse-density", o.sparse_density);
        o.sparse_scale = v.real("sparse-scale", o.sparse_scale);
        if (o.sparse_density < 0 || o.sparse_density > 1) usage_error("--sparse-density", "must be between 0 and 1");
        // The factors U (rows x rank) and V (rank x cols) of one matrix exist beside the dense pair.
        require_memory(dense_pair_bytes(o.m, o.k, o.p) + 8.0 * static_cast<double>(o.rank) * static_cast<double>(std::max(o.m, o.p) + o.k),
                       "generate low-rank-sparse");
        pair = mio::low_rank_plus_sparse(o);
        require_finite(pair, "--sparse-scale");
      } else {
        mio::SampleCovarianceOptions o;
        o.samples = v.dimension("samples", o.samples), o.features = v.dimension("features", o.features), o.seed = seed;
        o.pairs = v.count("pairs", o.pairs), o.correlation = v.real("correlation", o.correlation);
        if (2 * o.pairs > o.features) usage_error("--pairs", "needs 2 * pairs <= features (the pairs are disjoint)");
        if (o.correlation < -1 || o.correlation > 1) usage_error("--correlation", "must be between -1 and 1");
        // X (samples x features) and the pair A = X^T, B = X.
        require_memory(24.0 * static_cast<double>(o.samples) * static_cast<double>(o.features), "generate covariance");
        pair = mio::sample_covariance(o);
      }
      mio::write_matrix_market(staged_a, pair.a, w);
      mio::write_matrix_market(staged_b, pair.b, w);
      planted = std::move(pair.planted);
    }
  } catch (const mio::MatrixMarketError& e) {
    // The writer names the path it wrote, a hidden staging name for a regular file: name the option.
    const bool is_a = e.file() == staged_a.string();
    throw CliError(classify_write_failure(e.reason()), is_a ? "--out-a " + out_a : "--out-b " + out_b, e.reason());
  } catch (const pagh::Error& e) {
    usage_error("generate " + workload, e.what());  // an option value the generator refuses
  }
  outputs.commit();
  if (!vm.count("quiet")) {
    for (const auto& e : planted)
      std::printf("planted (%lld, %lld) %.17g\n", static_cast<long long>(e.row + 1), static_cast<long long>(e.col + 1), e.value);
    std::printf("wrote %s and %s\n", out_a.c_str(), out_b.c_str());
  }
  return 0;
}

}  // namespace pagh_mm
