// pagh-mm's answers about significance and recovery: z-scores and the noise summary (text, JSON),
// --exhaustive giving the default's answer, `top` on a saved sketch answering like the main
// command, the warning when nothing can be told from noise, and --verify against the exact sparse
// product when the dense one does not fit.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <random>
#include <set>
#include <string>

#include "cli_test_support.hpp"
#include "matrix_io/read.hpp"
#include "sketch/exact_answers.hpp"

namespace pagh_mm_test {
namespace {

using nlohmann::json;

TEST_F(Cli, EveryEntryCarriesItsZScoreAndTheReportItsNoiseCeiling) {
  const json j = run_json({"--method", "sketch", "--pad", "8", "-k", "10", A(), B()});
  const double sigma = j["significance"]["tail_sigma"].get<double>();
  ASSERT_GT(sigma, 0);
  EXPECT_LE(sigma, j["estimates"]["sigma"].get<double>());
  double weakest = INFINITY;
  for (const auto& e : j["entries"]) {
    EXPECT_DOUBLE_EQ(e["z"].get<double>(), std::fabs(e["estimate"].get<double>()) / sigma);
    weakest = std::min(weakest, e["z"].get<double>());
  }
  const auto& s = j["significance"];
  EXPECT_EQ(s["candidates"].get<double>(), 64.0 * 80.0);
  EXPECT_DOUBLE_EQ(s["weakest_z"].get<double>(), weakest);
  // The ceiling of 5120 pure-noise medians of 3 Gaussians: 5120 * 2 * P(2 of 3 beyond z) = 1,
  // 3 q^2 (1 - q) + q^3 = 1 / 10240, q = P(N(0,1) >= z): q ~ 0.0058, z ~ 2.53; the model's
  // measured tail only adds to the Gaussian one (sketch/noise_model.hpp).
  EXPECT_GE(s["noise_ceiling_sigmas"].get<double>(), 2.52);
  // data/A.mtx x data/B.mtx has four planted entries: all significant, and nothing else.
  EXPECT_EQ(s["significant_entries"], 4);
  EXPECT_EQ(s["interval_coverage"], 0.95);
  EXPECT_EQ(s["false_positive_rate"], 0.05);
  EXPECT_GT(s["expected_noise_entries"].get<double>(), 0);
  EXPECT_LE(s["expected_noise_entries"].get<double>(), 10);
  EXPECT_NE(s["recovery"].get<std::string>().find("heavy buckets"), std::string::npos) << s["recovery"];
  const Result text = run({"--method", "sketch", "--pad", "8", "-k", "10", A(), B()});
  EXPECT_NE(text.out.find("noise     4 of 10 entries are significant"), std::string::npos) << text.out;
}

TEST_F(Cli, ExhaustiveSelectionGivesTheSameAnswer) {
  for (const std::vector<std::string>& selection : {std::vector<std::string>{"-k", "25"}, std::vector<std::string>{"--threshold", "300"}}) {
    std::vector<std::string> args = selection;
    args.insert(args.end(), {"--method", "sketch", A(), B()});
    const json fast = run_json(args);
    args.push_back("--exhaustive");
    const json scan = run_json(args);
    ASSERT_FALSE(fast["entries"].empty());
    EXPECT_EQ(fast["entries"], scan["entries"]);
    EXPECT_NE(scan["significance"]["recovery"].get<std::string>().find("exhaustive"), std::string::npos);
  }
}

TEST_F(Cli, TopOnASavedSketchAnswersLikeTheMainCommand) {
  const std::string sketch = work("C.pagh").string();
  const json main = run_json({"--method", "sketch", "-k", "30", "--save-sketch", sketch, A(), B()});
  const json top = run_json({"top", sketch, "-k", "30"});
  EXPECT_EQ(main["entries"], top["entries"]);
  EXPECT_EQ(main["significance"]["noise_ceiling_sigmas"], top["significance"]["noise_ceiling_sigmas"]);
  const json scan = run_json({"top", sketch, "-k", "30", "--exhaustive"});
  EXPECT_EQ(scan["entries"], top["entries"]);
}

// Writes an m x k dense Gaussian matrix (no structure: every entry of a product of two is noise).
void write_gaussian(const fs::path& path, int rows, int cols, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::ofstream out(path);
  out << "%%MatrixMarket matrix array real general\n" << rows << ' ' << cols << '\n';
  for (int n = 0; n < rows * cols; ++n) out << normal(rng) << '\n';
}

TEST_F(Cli, SaysSoWhenNoReportedEntryStandsOutFromNoise) {
  write_gaussian(work("X.mtx"), 120, 40, 1);
  write_gaussian(work("Y.mtx"), 40, 150, 2);
  const Result r = run({"--method", "sketch", "-k", "5", "--pad", "1", work("X.mtx").string(), work("Y.mtx").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("no reported entry can be told from noise"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--buckets"), std::string::npos) << r.err;
  const Result quiet = run({"--method", "sketch", "-q", "-k", "5", "--pad", "1", work("X.mtx").string(), work("Y.mtx").string()});
  EXPECT_EQ(quiet.err, "");
  // The planted example's top entries do stand out: no warning.
  EXPECT_EQ(run({"--method", "sketch", "-k", "4", A(), B()}).err.find("no reported entry"), std::string::npos);
}

// 60000 x 60000 with one nonzero per row of A and column of B: the dense exact product would take
// 57 GB, the sparse one a few hundred KB.
TEST_F(Cli, VerifyUsesTheExactSparseProductWhenTheDenseOneDoesNotFit) {
  const fs::path a = work("A.mtx"), b = work("B.mtx");
  const Result g = run({"generate", "sparse", "--m", "60000", "--k", "60000", "--p", "60000", "--a-per-row", "1", "--b-per-col", "1",
                        "--integer", "--out-a", a.string(), "--out-b", b.string()});
  ASSERT_EQ(g.status, 0) << g.err;
  // --no-refine: the sketch's own answer is what is verified here (its candidates' exact values would
  // add the heavy-bucket recovery of 1024 candidates among thousands of ties).
  const json j = run_json({"--verify", "--no-refine", "-k", "5", "--precision", "fp64", a.string(), b.string()});
  const auto& m = j["metrics"];
  ASSERT_TRUE(m.is_object()) << j.dump();
  EXPECT_EQ(m["scope"], "nonzeros of C and the reported top-k");
  EXPECT_TRUE(m["relative_frobenius_error"].is_null());
  EXPECT_NE(m["exact_method"].get<std::string>().find("sparse"), std::string::npos);
  EXPECT_GT(m["frobenius_exact"].get<double>(), 0);
  for (const auto& e : j["entries"]) ASSERT_TRUE(e.contains("exact")) << e.dump();
}

}  // namespace
}  // namespace pagh_mm_test

namespace pagh_mm_test {
namespace {

namespace mio = pagh::matrix_io;

// --method: auto computes small products exactly (the cost model says so for data/A x data/B), and
// the exact answer is the exact product's top-k; exact cannot be combined with what needs a sketch.
TEST_F(Cli, AutoMethodComputesSmallProductsExactly) {
  const json j = run_json({"-k", "6", A(), B()});
  EXPECT_EQ(j["method"]["requested"], "auto");
  EXPECT_EQ(j["method"]["ran"], "exact");
  EXPECT_LT(j["method"]["exact_estimate_ms"].get<double>(), j["method"]["sketch_estimate_ms"].get<double>());
  EXPECT_TRUE(j["parameters"].is_null());
  EXPECT_TRUE(j["significance"].is_null());
  const Eigen::MatrixXd c = mio::read_dense<double>(A()) * mio::read_dense<double>(B());
  const auto expected = pagh::top_k_of(c, 6);
  ASSERT_EQ(j["entries"].size(), 6u);
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(j["entries"][i]["row"], expected[i].row + 1);
    EXPECT_EQ(j["entries"][i]["col"], expected[i].col + 1);
    EXPECT_EQ(j["entries"][i]["estimate"].get<double>(), expected[i].value);
    EXPECT_EQ(j["entries"][i]["exact"].get<double>(), expected[i].value);
    EXPECT_TRUE(j["entries"][i]["significant"].get<bool>());
  }
  const json threshold = run_json({"--method", "exact", "--threshold", "500", A(), B()});
  EXPECT_EQ(threshold["entries"].size(), 4u);  // the four planted entries
  const Result r = run({"-k", "3", A(), B()});
  EXPECT_NE(r.err.find("pagh-mm: method exact: the exact product"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("of the exact product"), std::string::npos) << r.out;
  // What needs a sketch gets one under auto, and is refused with exact.
  EXPECT_EQ(run_json({"--verify", "-k", "4", A(), B()})["method"]["ran"], "sketch");
  const Result refused = run({"--method", "exact", "--verify", A(), B()});
  EXPECT_EQ(refused.status, 64);
  EXPECT_NE(refused.err.find("--method exact"), std::string::npos) << refused.err;
  EXPECT_EQ(run({"--method", "fast", A(), B()}).status, 64);
}

TEST_F(Cli, VerifyReportsIntervalCoverageAndFalseDiscoveries) {
  const json j = run_json({"--verify", "-k", "4", A(), B()});
  const auto& m = j["metrics"];
  EXPECT_EQ(m["top_k_recall"], 1.0);
  EXPECT_EQ(m["significant"], 4);
  EXPECT_EQ(m["false_significant"], 0);
  EXPECT_EQ(m["interval_coverage"], 1.0);  // four of four planted entries inside their intervals
}

}  // namespace
}  // namespace pagh_mm_test

namespace pagh_mm_test {
namespace {

// A co-occurrence product X^T X of a 0/1 matrix X (rows: items, columns: features): its diagonal
// (the feature counts) carries most of the energy; two feature pairs are planted to co-occur.
void write_cooccurrence(const fs::path& xt, const fs::path& x) {
  std::mt19937_64 rng(3);
  std::bernoulli_distribution coin(0.03);
  const int items = 600, features = 200;
  std::vector<std::pair<int, int>> ones;
  for (int i = 0; i < items; ++i)
    for (int f = 0; f < features; ++f)
      if (coin(rng) || (i % 3 == 0 && (f == 17 || f == 42)) || (i % 4 == 0 && (f == 5 || f == 150))) ones.emplace_back(i, f);
  std::ofstream a(xt), b(x);
  a << "%%MatrixMarket matrix coordinate real general\n" << features << ' ' << items << ' ' << ones.size() << '\n';
  b << "%%MatrixMarket matrix coordinate real general\n" << items << ' ' << features << ' ' << ones.size() << '\n';
  for (const auto& [i, f] : ones) a << f + 1 << ' ' << i + 1 << " 1\n", b << i + 1 << ' ' << f + 1 << " 1\n";
}

TEST_F(Cli, TheDiagonalOfAGramProductIsSubtractedExactly) {
  write_cooccurrence(work("Xt.mtx"), work("X.mtx"));
  const std::string xt = work("Xt.mtx").string(), x = work("X.mtx").string();
  const json with = run_json({"--method", "sketch", "-k", "6", xt, x});
  EXPECT_TRUE(with["diagonal"]["subtracted"].get<bool>());
  EXPECT_GT(with["diagonal"]["energy_share"].get<double>(), 0.3);
  const Eigen::MatrixXd X = mio::read_dense<double>(x);
  const Eigen::MatrixXd C = X.transpose() * X;
  bool any_diagonal = false;
  for (const auto& e : with["entries"]) {
    const int i = e["row"].get<int>() - 1, j = e["col"].get<int>() - 1;
    if (i != j) continue;
    any_diagonal = true;
    EXPECT_TRUE(e["known"].get<bool>());
    EXPECT_EQ(e["estimate"].get<double>(), C(i, j));  // exact
    EXPECT_EQ(e["interval_half_width"].get<double>(), 0.0);
  }
  EXPECT_TRUE(any_diagonal);  // the largest entries of a co-occurrence product are its diagonal
  // --no-diagonal: the planted pairs (17, 42) and (5, 150) and their mirrors lead, nothing on the diagonal.
  const json off = run_json({"--method", "sketch", "-k", "4", "--no-diagonal", "--verify", xt, x});
  EXPECT_EQ(off["metrics"]["top_k_recall"], 1.0);  // against C minus its diagonal
  std::set<std::pair<int, int>> got;
  for (const auto& e : off["entries"]) got.insert({e["row"].get<int>(), e["col"].get<int>()});
  EXPECT_EQ(got, (std::set<std::pair<int, int>>{{18, 43}, {43, 18}, {6, 151}, {151, 6}}));
  for (const auto& e : off["entries"]) EXPECT_TRUE(e["significant"].get<bool>()) << e;
  // Without the subtraction (a saved sketch keeps C itself) the noise is larger.
  const json kept = run_json({"--method", "sketch", "-k", "4", "--save-sketch", work("C.pagh").string(), xt, x});
  EXPECT_FALSE(kept["diagonal"]["subtracted"].get<bool>());
  EXPECT_GT(kept["significance"]["tail_sigma"].get<double>(), off["significance"]["tail_sigma"].get<double>());
}

}  // namespace
}  // namespace pagh_mm_test

namespace pagh_mm_test {
namespace {

// The sketch length from the question. -k K without --pad/--buckets: when the K-th entry of the
// first sketch is not significant, pagh-mm sketches again at the length that resolves it (and says
// so); --resolve TAU asks for the length that finds entries >= TAU. The planted entries of
// data/A x data/B are >= 803 and the rest <= 366.
TEST_F(Cli, TheSketchLengthFollowsTheQuestion) {
  const json fixed = run_json({"--method", "sketch", "--pad", "8", "-k", "10", A(), B()});
  EXPECT_EQ(fixed["parameters"]["buckets"], 1024);
  EXPECT_LT(fixed["significance"]["significant_entries"].get<int>(), 10);
  const Result chosen = run({"--method", "sketch", "-k", "10", "--format", "json", A(), B()});
  ASSERT_EQ(chosen.status, 0) << chosen.err;
  const json j = json::parse(chosen.out);
  EXPECT_GT(j["parameters"]["buckets"].get<int>(), 1024);
  EXPECT_NE(chosen.err.find("pagh-mm: sketch length: -k 10: b = "), std::string::npos) << chosen.err;
  EXPECT_GT(j["significance"]["significant_entries"].get<int>(), fixed["significance"]["significant_entries"].get<int>());
  // The sketch given up is timed apart, and the final one's stages do not include it.
  EXPECT_EQ(fixed["timings_ms"]["earlier_sketches"], 0);
  EXPECT_GT(j["timings_ms"]["earlier_sketches"].get<double>(), 0);
  EXPECT_GE(j["timings_ms"]["total"].get<double>(),
            j["timings_ms"]["earlier_sketches"].get<double>() + j["timings_ms"]["compress"].get<double>() + j["timings_ms"]["select"].get<double>());
  // --resolve 800: the planted entries, all four significant at the length chosen.
  const Result resolved = run({"--method", "sketch", "--resolve", "800", "-k", "4", "--format", "json", A(), B()});
  ASSERT_EQ(resolved.status, 0) << resolved.err;
  EXPECT_NE(resolved.err.find("pagh-mm: sketch length: --resolve: b = "), std::string::npos) << resolved.err;
  EXPECT_EQ(json::parse(resolved.out)["significance"]["significant_entries"], 4);
  // --resolve 150: longer, and then the entries of ~280 are significant too.
  const json small = run_json({"--method", "sketch", "--resolve", "150", "-k", "6", A(), B()});
  EXPECT_GT(small["parameters"]["buckets"].get<int>(), 4096);
  EXPECT_EQ(small["significance"]["significant_entries"], 6);
  EXPECT_EQ(run({"--resolve", "100", "--pad", "4", A(), B()}).status, 64);
  EXPECT_EQ(run({"--resolve", "0", A(), B()}).status, 64);
}

}  // namespace
}  // namespace pagh_mm_test
