// pagh-mm [options] A.mtx B.mtx: results, every sketch option, output formats and files.
#include <cmath>
#include <set>

#include "cli_test_support.hpp"
#include "cuda_info.hpp"
#include "matrix_io/read.hpp"
#include "sketch/compress.hpp"

namespace pagh_mm_test {
namespace {

namespace mio = pagh::matrix_io;
using nlohmann::json;

std::set<std::pair<std::int64_t, std::int64_t>> positions(const json& entries) {
  std::set<std::pair<std::int64_t, std::int64_t>> out;
  for (const auto& e : entries) out.insert({e["row"].get<std::int64_t>(), e["col"].get<std::int64_t>()});
  return out;
}

std::set<std::pair<std::int64_t, std::int64_t>> planted_positions() {
  std::set<std::pair<std::int64_t, std::int64_t>> out;
  for (const auto& p : kPlanted) out.insert({p.row, p.col});
  return out;
}

TEST_F(Cli, DefaultRunPrintsTopTenWithErrorBarsAndNamesTheBackend) {
  const Result r = run({"--method", "sketch", A(), B()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("top 10 entries by |estimate|"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("low..high is the 95% interval"), std::string::npos);
  // The table: a header, then ranks 1..10; the four planted entries are the top four.
  const auto lines = lines_of(r.out);
  const auto header = std::find_if(lines.begin(), lines.end(), [](const std::string& l) { return l.find(" rank") == 0; });
  ASSERT_NE(header, lines.end()) << r.out;
  std::set<std::pair<std::int64_t, std::int64_t>> top4;
  for (int rank = 1; rank <= 10; ++rank) {
    ASSERT_LT(header + rank, lines.end());
    std::istringstream row(*(header + rank));
    std::int64_t k, i, j;
    ASSERT_TRUE(row >> k >> i >> j) << *(header + rank);
    EXPECT_EQ(k, rank);
    if (rank <= 4) top4.insert({i, j});
  }
  EXPECT_EQ(top4, planted_positions());
  // A product this small is answered sooner on the CPU than a GPU context starts and ends
  // (weigh_backends), so auto keeps it there on any machine.
  EXPECT_NE(r.err.find("pagh-mm: backend cpu (auto:"), std::string::npos) << r.err;
}

TEST_F(Cli, TopLimitsTheEntriesToK) {
  const json j = run_json({"--method", "sketch", "--top", "4", A(), B()});
  ASSERT_EQ(j["entries"].size(), 4u);
  EXPECT_EQ(positions(j["entries"]), planted_positions());
  EXPECT_EQ(j["selection"]["kind"], "top");
  EXPECT_EQ(j["selection"]["k"], 4);
  // Largest |estimate| first.
  for (std::size_t i = 1; i < j["entries"].size(); ++i)
    EXPECT_GE(std::fabs(j["entries"][i - 1]["estimate"].get<double>()), std::fabs(j["entries"][i]["estimate"].get<double>()));
}

TEST_F(Cli, ThresholdReportsEveryEntryAboveItLargestFirst) {
  const json all = run_json({"--method", "sketch", "--top", "5120", A(), B()});  // every entry of the 64 x 80 estimate
  ASSERT_EQ(all["entries"].size(), 5120u);
  std::size_t expected = 0;
  for (const auto& e : all["entries"]) expected += std::fabs(e["estimate"].get<double>()) >= 500;
  const json j = run_json({"--method", "sketch", "--threshold", "500", A(), B()});
  EXPECT_EQ(j["selection"]["kind"], "threshold");
  EXPECT_EQ(j["selection"]["threshold"], 500);
  ASSERT_EQ(j["entries"].size(), expected);
  ASSERT_GE(expected, 4u);
  for (std::size_t i = 0; i < expected; ++i) {
    EXPECT_GE(std::fabs(j["entries"][i]["estimate"].get<double>()), 500);
    // The same order as the full ranking; the intervals differ, selected differently (--threshold).
    json entry = j["entries"][i], ranked = all["entries"][i];
    entry.erase("interval"), ranked.erase("interval");
    EXPECT_EQ(entry, ranked);
  }
  const json capped = run_json({"--method", "sketch", "--threshold", "500", "--top", "2", A(), B()});
  EXPECT_EQ(capped["entries"].size(), 2u);
  const Result none = run({"--method", "sketch", "--threshold", "1e9", A(), B()});
  EXPECT_EQ(none.status, 0);
  EXPECT_NE(none.out.find("no entry has |estimate| >= 1e+09"), std::string::npos) << none.out;
}

TEST_F(Cli, JsonHasSchemaParametersSeedBackendTimingsAndNoMetricsWithoutVerify) {
  const json j = run_json({"--method", "sketch", "--pad", "8", A(), B()});
  EXPECT_EQ(j["schema"], "pagh-mm/multiply");
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["index_base"], 1);
  EXPECT_EQ(j["product"], json({{"rows", 64}, {"cols", 80}, {"inner", 96}}));
  EXPECT_EQ(j["inputs"]["a"]["path"], A());
  EXPECT_EQ(j["inputs"]["a"]["representation"], "dense");
  EXPECT_EQ(j["parameters"]["pad"], 8);
  EXPECT_EQ(j["parameters"]["buckets"], 1024);  // next power of two >= 8 * max(64, 80)
  EXPECT_EQ(j["parameters"]["sketches"], 3);
  EXPECT_EQ(j["parameters"]["precision"], "fp32");
  EXPECT_EQ(j["seed"], 1);
  EXPECT_EQ(j["backend"]["requested"], "auto");
  // Dense files of declared shape this small stay on the CPU under auto on any machine (weigh_backends).
  EXPECT_EQ(j["backend"]["name"], "cpu");
  EXPECT_FALSE(j["backend"]["device"].get<std::string>().empty());
  EXPECT_TRUE(j["metrics"].is_null());
  for (const char* stage : {"read_a", "read_b", "earlier_sketches", "hashing", "sketching", "inverse", "compress", "select", "total"}) {
    ASSERT_TRUE(j["timings_ms"][stage].is_number()) << stage;
    EXPECT_GE(j["timings_ms"][stage].get<double>(), 0) << stage;
  }
  EXPECT_GE(j["timings_ms"]["total"].get<double>(), j["timings_ms"]["compress"].get<double>());
  EXPECT_EQ(j["inner_paths"]["transformed"].get<int>() + j["inner_paths"]["direct"].get<int>() +
                j["inner_paths"]["empty"].get<int>(),
            96);
  // The error bars by definition: sigma = ||C||_F-estimate / sqrt(b), the estimate being the library's.
  const double frobenius = j["estimates"]["frobenius"].get<double>();
  EXPECT_NEAR(j["estimates"]["sigma"].get<double>(), frobenius / std::sqrt(1024.0), 1e-12 * frobenius);
}

// The options reach the library: the CLI's estimates equal pagh::compress's with the same parameters.
TEST_F(Cli, SketchOptionsReachTheSketch) {
  const json j = run_json({"--method", "sketch", "--pad", "4", "--sketches", "5", "--seed", "9", "--precision", "fp64", "--stabilize",
                           "neumaier", "--threads", "1", "--top", "20", A(), B()});
  EXPECT_EQ(j["parameters"]["buckets"], 512);  // next power of two >= 4 * 80
  EXPECT_EQ(j["parameters"]["sketches"], 5);
  EXPECT_EQ(j["parameters"]["seed"], 9);
  EXPECT_EQ(j["parameters"]["precision"], "fp64");
  EXPECT_EQ(j["parameters"]["stabilization"], "neumaier");
  EXPECT_EQ(j["parameters"]["threads"], 1);
  const Eigen::MatrixXd a = mio::read_dense<double>(A()), b = mio::read_dense<double>(B());
  pagh::SketchParams params;
  params.pad = 4, params.repetitions = 5, params.seed = 9, params.precision = fwht::DType::f64;
  params.stabilization = fwht::Stabilization::neumaier;
  const auto expected = pagh::compress(a, b, params).top_k(20);
  ASSERT_EQ(j["entries"].size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(j["entries"][i]["row"], expected[i].row + 1);
    EXPECT_EQ(j["entries"][i]["col"], expected[i].col + 1);
    EXPECT_EQ(j["entries"][i]["estimate"].get<double>(), expected[i].value);
    EXPECT_EQ(j["entries"][i]["spread"].get<double>(), expected[i].spread);
  }
}

TEST_F(Cli, BucketsAlgorithmAndPrecisionsRun) {
  EXPECT_EQ(run_json({"--method", "sketch", "--buckets", "256", A(), B()})["parameters"]["buckets"], 256);
  EXPECT_EQ(run_json({"--method", "sketch", "--algorithm", "alman-rao", A(), B()})["parameters"]["algorithm"], "alman-rao");
  EXPECT_EQ(run_json({"--method", "sketch", "--stabilize", "kahan", A(), B()})["parameters"]["stabilization"], "kahan");
  for (const char* precision : {"fp64", "fp32", "fp16", "bf16"}) {
    const json j = run_json({"--method", "sketch", "--precision", precision, "--top", "4", A(), B()});
    EXPECT_EQ(j["parameters"]["precision"], precision);
    EXPECT_EQ(positions(j["entries"]), planted_positions()) << precision;
  }
}

TEST_F(Cli, ResultsDependOnTheSeedButNotOnTheThreadCount) {
  const json one = run_json({"--method", "sketch", "--threads", "1", "--seed", "5", "--top", "50", A(), B()});
  const json two = run_json({"--method", "sketch", "--threads", "2", "--seed", "5", "--top", "50", A(), B()});
  EXPECT_EQ(one["entries"], two["entries"]);
  const json other = run_json({"--method", "sketch", "--threads", "1", "--seed", "6", "--top", "50", A(), B()});
  EXPECT_NE(one["entries"], other["entries"]);
}

TEST_F(Cli, VerifyReportsMetricsAndTheExactValues) {
  const json j = run_json({"--verify", "--top", "4", "--backend", "cpu", A(), B()});
  ASSERT_TRUE(j["metrics"].is_object());
  const Eigen::MatrixXd a = mio::read_dense<double>(A()), b = mio::read_dense<double>(B());
  const Eigen::MatrixXd c = a * b;
  const auto& m = j["metrics"];
  EXPECT_NEAR(m["frobenius_exact"].get<double>(), c.norm(), 1e-9 * c.norm());
  EXPECT_EQ(m["top_k"], 4);
  EXPECT_EQ(m["top_k_recall"], 1.0);  // the planted entries are the exact top 4 and are found
  EXPECT_EQ(m["top_k_precision"], 1.0);
  // The metrics recomputed from their definitions, on the same sketch (default parameters: pad 8,
  // 3 sketches, seed 1, fp32; the CPU backend's bits do not depend on the thread count).
  const auto product = pagh::compress(a, b, pagh::SketchParams{});
  const Eigen::MatrixXd estimate = product.decompress();
  const double max_abs = (estimate - c).cwiseAbs().maxCoeff();
  const double tol = 1e-12;
  EXPECT_NEAR(m["relative_frobenius_error"].get<double>(), (estimate - c).norm() / c.norm(), tol);
  EXPECT_NEAR(m["max_abs_error"].get<double>(), max_abs, tol * max_abs);
  EXPECT_NEAR(m["max_error_in_sigmas"].get<double>(), max_abs / (c.norm() / std::sqrt(1024.0)), tol * max_abs);
  EXPECT_NEAR(m["frobenius_estimate"].get<double>(), product.frobenius_estimate(), tol * c.norm());
  EXPECT_GT(m["max_abs_error"].get<double>(), 0) << "an fp32 sketch of a dense product is not exact";
  for (const auto& e : j["entries"]) {
    const auto i = e["row"].get<int>() - 1, k = e["col"].get<int>() - 1;
    EXPECT_EQ(e["exact"].get<double>(), c(i, k));
    EXPECT_LE(std::fabs(e["estimate"].get<double>() - c(i, k)), m["max_abs_error"].get<double>());
  }
  EXPECT_GE(j["timings_ms"]["exact"].get<double>(), 0);

  const Result text = run({"--verify", A(), B()});
  ASSERT_EQ(text.status, 0);
  for (const char* s : {"verification against the exact product", "relative Frobenius error", "max |error|",
                        "top-10 recall / precision", " exact ", " error"})
    EXPECT_NE(text.out.find(s), std::string::npos) << s;
}

TEST_F(Cli, OutputWritesTheReportedEntriesAsCoordinateMatrixMarket) {
  const std::string file = work("top.mtx").string();
  const json j = run_json({"--method", "sketch", "--top", "7", "-o", file, A(), B()});
  EXPECT_EQ(j["outputs"]["matrix"], file);
  EXPECT_EQ(j["outputs"]["matrix_format"], "coordinate");
  EXPECT_EQ(mio::read_header(file).format, mio::Format::coordinate);
  const auto s = mio::read_sparse<double>(file);
  ASSERT_EQ(s.rows(), 64);
  ASSERT_EQ(s.cols(), 80);
  ASSERT_EQ(s.nonZeros(), 7);
  for (const auto& e : j["entries"])
    EXPECT_EQ(s.coeff(e["row"].get<int>() - 1, e["col"].get<int>() - 1), e["estimate"].get<double>());
  EXPECT_NE(slurp(file).find("not exact values"), std::string::npos);
  EXPECT_EQ(work_files(), std::vector<std::string>{"top.mtx"});  // no temporary left behind
}

TEST_F(Cli, FullWritesTheWholeEstimateAsAnArray) {
  const std::string file = work("C.mtx").string();
  const json j = run_json({"--full", "-o", file, "--top", "5120", A(), B()});
  EXPECT_EQ(j["outputs"]["matrix_format"], "array");
  EXPECT_EQ(mio::read_header(file).format, mio::Format::array);
  const Eigen::MatrixXd c = mio::read_dense<double>(file);
  ASSERT_EQ(c.rows(), 64);
  ASSERT_EQ(c.cols(), 80);
  for (const auto& e : j["entries"])
    ASSERT_EQ(c(e["row"].get<int>() - 1, e["col"].get<int>() - 1), e["estimate"].get<double>());
}

// With a usable GPU, --backend cuda answers top-k, threshold and --full on the device (only the
// answer is copied back); for integer inputs (data/A.mtx, B.mtx) its sketches are bit-identical to
// the CPU's, so every reported entry and the whole estimate must be equal. d = 3 and d = 65 (more
// repetitions than the device kernels hold: the same answers from the host copy).
TEST_F(Cli, CudaBackendAnswersExactlyLikeTheCpu) {
  if (pagh_mm::query_cuda().devices.empty()) GTEST_SKIP() << "no usable CUDA device";
  for (const std::string d : {"3", "65"}) {
    for (const std::vector<std::string>& selection : {std::vector<std::string>{"--top", "40"},
                                                      std::vector<std::string>{"--threshold", "150"}}) {
      SCOPED_TRACE("d = " + d + " " + selection[0]);
      // The sketches compared (auto may compute this small product exactly, on either side).
      std::vector<std::string> args = {"--method", "sketch", "--sketches", d, "--seed", "11", A(), B()};
      args.insert(args.end(), selection.begin(), selection.end());
      std::vector<std::string> cpu = args, cuda = args;
      cpu.insert(cpu.end(), {"--backend", "cpu"});
      cuda.insert(cuda.end(), {"--backend", "cuda"});
      const json on_cpu = run_json(cpu), on_gpu = run_json(cuda);
      EXPECT_EQ(on_gpu["backend"]["name"], "cuda");
      ASSERT_FALSE(on_cpu["entries"].empty());
      EXPECT_EQ(on_gpu["entries"], on_cpu["entries"]);
    }
    const std::string cpu_file = work("cpu" + d + ".mtx").string(), gpu_file = work("gpu" + d + ".mtx").string();
    ASSERT_EQ(run({"--full", "-o", cpu_file, "--sketches", d, "--backend", "cpu", A(), B()}).status, 0);
    ASSERT_EQ(run({"--full", "-o", gpu_file, "--sketches", d, "--backend", "cuda", A(), B()}).status, 0);
    EXPECT_EQ(mio::read_dense<double>(gpu_file), mio::read_dense<double>(cpu_file));
  }
}

TEST_F(Cli, SparseAndMixedInputsAreMultipliedAndVerified) {
  // A sparse (generate sparse: 50 x 40) times B dense (generate planted-dense: 40 x 20).
  ASSERT_EQ(run({"generate", "sparse", "--m", "50", "--k", "40", "--p", "30", "--integer", "--out-a", "SA.mtx", "--out-b",
                 "SB.mtx", "-q"}).status, 0);
  ASSERT_EQ(run({"generate", "planted-dense", "--m", "30", "--k", "40", "--p", "20", "--out-a", "DA.mtx", "--out-b",
                 "DB.mtx", "-q"}).status, 0);
  const Eigen::SparseMatrix<double> sa = mio::read_sparse<double>(work("SA.mtx")), sb = mio::read_sparse<double>(work("SB.mtx"));
  const Eigen::MatrixXd db = mio::read_dense<double>(work("DB.mtx"));
  const json sparse = run_json({"--verify", "--top", "3", "SA.mtx", "SB.mtx"});
  EXPECT_EQ(sparse["inputs"]["a"]["representation"], "sparse");
  const Eigen::MatrixXd c1 = Eigen::MatrixXd(sa) * Eigen::MatrixXd(sb);
  EXPECT_NEAR(sparse["metrics"]["frobenius_exact"].get<double>(), c1.norm(), 1e-9 * c1.norm());
  const json mixed = run_json({"--verify", "--top", "3", "SA.mtx", "DB.mtx"});
  EXPECT_EQ(mixed["inputs"]["b"]["representation"], "dense");
  const Eigen::MatrixXd c2 = Eigen::MatrixXd(sa) * db;
  EXPECT_NEAR(mixed["metrics"]["frobenius_exact"].get<double>(), c2.norm(), 1e-9 * c2.norm());
  for (const auto& e : mixed["entries"])
    EXPECT_NEAR(e["exact"].get<double>(), c2(e["row"].get<int>() - 1, e["col"].get<int>() - 1), 1e-9 * c2.norm());
}

TEST_F(Cli, SymmetricAndPatternFixturesAreExpandedBeforeMultiplying) {
  // matrix_io expands symmetric storage; the exact product the CLI verifies against must match
  // the one computed here from the same reader.
  const std::string sym = (kFixtures / "coordinate_integer_symmetric.mtx").string();
  const json j = run_json({"--method", "sketch", "--verify", "--top", "16", "--precision", "fp64", sym, sym});
  const Eigen::MatrixXd s = Eigen::MatrixXd(mio::read_sparse<double>(sym));
  const Eigen::MatrixXd c = s * s;
  EXPECT_EQ(j["product"]["rows"], 4);
  EXPECT_NEAR(j["metrics"]["frobenius_exact"].get<double>(), c.norm(), 1e-12 * c.norm());
  ASSERT_EQ(j["entries"].size(), 16u);
  for (const auto& e : j["entries"]) EXPECT_EQ(e["exact"].get<double>(), c(e["row"].get<int>() - 1, e["col"].get<int>() - 1));
  // A pattern matrix (3 x 6) times a 4 x 4 one: a dimension error, reported with both shapes.
  const Result r = run({(kFixtures / "coordinate_pattern_general.mtx").string(), sym});
  EXPECT_EQ(r.status, 65);
  expect_one_line_error(r, {"A is 3 x 6 but B is 4 x 4"});
}

TEST_F(Cli, ProgressShowsStagesOnlyWhenAsked) {
  // stderr is a file here, not a terminal: auto shows nothing, always logs one line per stage.
  const Result always = run({"--progress", "always", "--verify", A(), B()});
  ASSERT_EQ(always.status, 0);
  for (const char* stage : {"[1/5] reading", "[2/5] reading", "[3/5] sketching", "[4/5] selecting entries",
                            "[5/5] verifying against the exact product"})
    EXPECT_NE(always.err.find(stage), std::string::npos) << stage << " not in:\n" << always.err;
  EXPECT_EQ(always.err.find('\r'), std::string::npos);  // no bar redrawing into a log
  for (const char* mode : {"auto", "never"}) {
    const Result r = run({"--progress", mode, A(), B()});
    EXPECT_EQ(r.err.find("[1/4]"), std::string::npos) << mode;
  }
}

TEST_F(Cli, QuietAndVerboseControlStderrOnly) {
  const Result normal = run({"--method", "sketch", "--pad", "8", A(), B()});
  const Result quiet = run({"--method", "sketch", "--pad", "8", "-q", A(), B()});
  const Result verbose = run({"--method", "sketch", "--pad", "8", "-v", A(), B()});
  ASSERT_EQ(quiet.status, 0);
  EXPECT_EQ(quiet.err, "");
  const auto report = [](const std::string& out) { return out.substr(0, out.find("time (ms)")); };  // timings vary
  EXPECT_EQ(report(quiet.out), report(normal.out));
  EXPECT_NE(quiet.out.find("top 10 entries"), std::string::npos);
  EXPECT_NE(verbose.err.find("64 x 96, dense, 6144 stored entries"), std::string::npos) << verbose.err;
  EXPECT_NE(verbose.err.find("inner indices transformed"), std::string::npos) << verbose.err;
  EXPECT_EQ(lines_of(normal.err).size(), 1u) << normal.err;  // just the backend note
}

TEST_F(Cli, HelpDocumentsEveryOptionAndVersionNamesTheBuild) {
  const Result help = run({"--help"});
  ASSERT_EQ(help.status, 0);
  for (const char* option : {"--backend", "--pad", "--buckets", "--sketches", "--seed", "--precision", "--stabilize",
                             "--algorithm", "--threads", "--top", "--threshold", "--output", "--full", "--save-sketch",
                             "--verify", "--format", "--quiet", "--verbose", "--progress", "--help", "--version",
                             "pagh-mm query", "pagh-mm top", "pagh-mm generate", "pagh-mm study", "Exit status"})
    EXPECT_NE(help.out.find(option), std::string::npos) << option;
  for (const char* sub : {"query", "top", "generate", "study"}) {
    const Result r = run({sub, "--help"});
    EXPECT_EQ(r.status, 0) << sub;
    EXPECT_NE(r.out.find(std::string("usage: pagh-mm ") + sub), std::string::npos) << sub;
  }
  const Result version = run({"--version"});
  ASSERT_EQ(version.status, 0);
  const auto lines = lines_of(version.out);
  ASSERT_GE(lines.size(), 4u) << version.out;
  EXPECT_EQ(lines[0].rfind("pagh-mm 0.", 0), 0u) << lines[0];
  EXPECT_NE(lines[0].find("(git "), std::string::npos);
  EXPECT_EQ(lines[1].rfind("CUDA runtime: ", 0), 0u);
  EXPECT_EQ(lines[2].rfind("CUDA driver: ", 0), 0u);
  EXPECT_EQ(lines[3].rfind("GPU: ", 0), 0u);
}

}  // namespace
}  // namespace pagh_mm_test
