// Saved sketches: --save-sketch, then pagh-mm query and pagh-mm top answer without A and B, with
// the same numbers as the run that saved them.
#include <fstream>

#include "cli_test_support.hpp"
#include "matrix_io/read.hpp"

namespace pagh_mm_test {
namespace {

namespace mio = pagh::matrix_io;
using nlohmann::json;

class SavedSketch : public Cli {
 protected:
  void SetUp() override {
    Cli::SetUp();
    sketch_ = work("C.pagh").string();
    // --method sketch: the main command's estimates (by default it reports exact values of them).
    saved_ = run_json({"--method", "sketch", "--save-sketch", sketch_, "--top", "30", "--seed", "11", "--sketches", "5", A(), B()});
    ASSERT_EQ(saved_["outputs"]["sketch"], sketch_);
    ASSERT_TRUE(fs::exists(sketch_));
  }
  std::string sketch_;
  json saved_;
};

TEST_F(SavedSketch, QueryAnswersWithTheSameEstimatesAndErrorBars) {
  std::vector<std::string> args = {"query", sketch_};
  for (std::size_t i = 0; i < 6; ++i) {
    args.push_back(std::to_string(saved_["entries"][i]["row"].get<int>()));
    args.push_back(std::to_string(saved_["entries"][i]["col"].get<int>()));
  }
  const json q = run_json(args);
  EXPECT_EQ(q["schema"], "pagh-mm/query");
  EXPECT_EQ(q["parameters"]["seed"], 11);
  EXPECT_EQ(q["parameters"]["sketches"], 5);
  EXPECT_EQ(q["estimates"], saved_["estimates"]);
  ASSERT_EQ(q["entries"].size(), 6u);
  for (std::size_t i = 0; i < 6; ++i) {
    // Queried entries were chosen before looking: their interval is estimate +- half-width, not the
    // selected one's.
    json entry = q["entries"][i], selected = saved_["entries"][i];
    const double estimate = entry["estimate"].get<double>(), half = entry["interval_half_width"].get<double>();
    EXPECT_EQ(entry["interval"], json::array({estimate - half, estimate + half}));
    entry.erase("interval"), selected.erase("interval");
    EXPECT_EQ(entry, selected);
  }

  const Result text = run({"query", sketch_, "51", "46"});
  ASSERT_EQ(text.status, 0);
  EXPECT_NE(text.out.find("C is 64 x 80"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("     51      46"), std::string::npos) << text.out;
}

TEST_F(SavedSketch, TopAnswersWithTheSameRankingAndWritesAFile) {
  const json t = run_json({"top", sketch_, "-k", "30"});
  EXPECT_EQ(t["schema"], "pagh-mm/top");
  EXPECT_EQ(t["entries"], saved_["entries"]);
  const json above = run_json({"top", sketch_, "--threshold", "600"});
  EXPECT_EQ(above["selection"]["kind"], "threshold");
  for (const auto& e : above["entries"]) EXPECT_GE(std::fabs(e["estimate"].get<double>()), 600);
  ASSERT_GE(above["entries"].size(), 1u);
  json first = above["entries"][0], ranked_first = saved_["entries"][0];
  first.erase("interval"), ranked_first.erase("interval");  // selected differently (--threshold)
  EXPECT_EQ(first, ranked_first);

  const json written = run_json({"top", sketch_, "-k", "4", "-o", "top4.mtx"});
  EXPECT_EQ(written["outputs"]["matrix"], "top4.mtx");
  const auto s = mio::read_sparse<double>(work("top4.mtx"));
  EXPECT_EQ(s.rows(), 64);
  EXPECT_EQ(s.nonZeros(), 4);
  for (std::size_t i = 0; i < 4; ++i) {
    const auto& e = saved_["entries"][i];
    EXPECT_EQ(s.coeff(e["row"].get<int>() - 1, e["col"].get<int>() - 1), e["estimate"].get<double>());
  }
  const Result text = run({"top", sketch_, "-k", "3"});
  EXPECT_NE(text.out.find("top 3 entries by |estimate|"), std::string::npos) << text.out;
}

TEST_F(SavedSketch, QueryRejectsBadIndicesAsUsageErrors) {
  const Result odd = run({"query", sketch_, "1"});
  EXPECT_EQ(odd.status, 64);
  expect_one_line_error(odd, {"query: expected pairs of indices i j", "(see pagh-mm query --help)"});
  const Result zero = run({"query", sketch_, "0", "1"});
  EXPECT_EQ(zero.status, 64);
  expect_one_line_error(zero, {"indices are 1-based, got 0"});
  const Result outside = run({"query", sketch_, "65", "1"});
  EXPECT_EQ(outside.status, 64);
  expect_one_line_error(outside, {"entry (65, 1) is outside the 64 x 80 product"});
  const Result word = run({"query", sketch_, "x", "1"});
  EXPECT_EQ(word.status, 64);
  expect_one_line_error(word, {"expected an integer, got 'x'"});
  const Result top = run({"top", sketch_, "-k", "0"});
  EXPECT_EQ(top.status, 64);
  expect_one_line_error(top, {"-k: must be between 1", "(see pagh-mm top --help)"});
}

TEST_F(SavedSketch, DamagedOrMissingSketchesAreRefused) {
  const Result missing = run({"top", "nothing.pagh"});
  EXPECT_EQ(missing.status, 66);
  expect_one_line_error(missing, {"nothing.pagh: cannot open sketch"});
  // Truncated, then one flipped byte: bad data, never garbage answers.
  const std::string bytes = slurp(sketch_);
  std::ofstream(work("short.pagh"), std::ios::binary) << bytes.substr(0, bytes.size() - 9);
  const Result truncated = run({"query", "short.pagh", "1", "1"});
  EXPECT_EQ(truncated.status, 65);
  expect_one_line_error(truncated, {"short.pagh: not a usable sketch"});
  std::string flipped = bytes;
  flipped[200] = static_cast<char>(flipped[200] ^ 1);
  std::ofstream(work("flipped.pagh"), std::ios::binary) << flipped;
  const Result corrupt = run({"top", "flipped.pagh"});
  EXPECT_EQ(corrupt.status, 65);
  expect_one_line_error(corrupt, {"flipped.pagh: not a usable sketch: checksum mismatch"});
  const Result matrix = run({"query", A(), "1", "1"});
  EXPECT_EQ(matrix.status, 65);
  expect_one_line_error(matrix, {"not a pagh sketch file"});
}

}  // namespace
}  // namespace pagh_mm_test
