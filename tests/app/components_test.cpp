// Pieces of pagh-mm checked directly (linked from pagh_mm_core): the output transaction behind
// "no partial output file, ever", and the JSON writer behind --format json.
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "backend.hpp"
#include "cli_error.hpp"
#include "json_writer.hpp"
#include "output_files.hpp"

namespace pagh_mm {
namespace {

namespace fs = std::filesystem;

class OutputTransactionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("pagh_mm_components_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::vector<std::string> files() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
  fs::path dir_;
};

TEST_F(OutputTransactionTest, AFailureAfterOneOutputWasWrittenLeavesNothing) {
  {
    std::ofstream(dir_ / "b.txt") << "old\n";
    OutputTransaction outputs;
    const auto a = outputs.stage((dir_ / "a.txt").string(), "-o");
    const auto b = outputs.stage((dir_ / "b.txt").string(), "--save-sketch");
    EXPECT_EQ(a.parent_path(), dir_);
    EXPECT_NE(a.filename().string().front(), 'a');  // a hidden staging name, not the target
    std::ofstream(a) << "new a\n";                  // the first output is complete...
    EXPECT_EQ(files().size(), 2u);                  // (b.txt and a's staging file)
  }                                                 // ...then the command fails: no commit
  EXPECT_EQ(files(), std::vector<std::string>{"b.txt"});
  std::ifstream in(dir_ / "b.txt");
  std::string text;
  std::getline(in, text);
  EXPECT_EQ(text, "old");  // untouched
}

TEST_F(OutputTransactionTest, CommitMovesEveryOutputIntoPlace) {
  OutputTransaction outputs;
  const auto a = outputs.stage((dir_ / "a.txt").string(), "-o");
  const auto b = outputs.stage((dir_ / "b.txt").string(), "--save-sketch");
  std::ofstream(a) << "A";
  std::ofstream(b) << "B";
  outputs.commit();
  EXPECT_EQ(files(), (std::vector<std::string>{"a.txt", "b.txt"}));
}

TEST_F(OutputTransactionTest, ImpossibleTargetsAreRefusedWhenStaged) {
  OutputTransaction outputs;
  const auto code_of = [&](const std::string& target) {
    try {
      outputs.stage(target, "-o");
    } catch (const CliError& e) {
      return to_int(e.code());
    }
    return 0;
  };
  EXPECT_EQ(code_of((dir_ / "missing" / "x").string()), 73);
  EXPECT_EQ(code_of(dir_.string()), 73);  // a directory
  EXPECT_EQ(code_of(""), 73);
  EXPECT_EQ(code_of((dir_ / "ok").string()), 0);
  EXPECT_EQ(code_of((dir_ / "." / "ok").string()), 64);  // the same file twice
  EXPECT_TRUE(files().empty());
}

TEST_F(OutputTransactionTest, AtomicTextFilesReplaceWhole) {
  write_text_file_atomically(dir_ / "f.csv", "a,b\n1,2\n");
  write_text_file_atomically(dir_ / "f.csv", "c\n");
  EXPECT_EQ(files(), std::vector<std::string>{"f.csv"});
  EXPECT_EQ(fs::file_size(dir_ / "f.csv"), 2u);
  try {
    write_text_file_atomically(dir_ / "missing" / "f.csv", "x");
    ADD_FAILURE() << "no exception";
  } catch (const CliError& e) {
    EXPECT_EQ(to_int(e.code()), 73);
  }
}

TEST(JsonWriterTest, WritesValidJsonThatReadsBackExactly) {
  JsonWriter j;
  j.begin_object();
  j.member("text", "quote \" backslash \\ newline \n tab \t bell \x07 utf-8 \xE2\x80\x96");
  j.member("pi", 3.141592653589793).member("tiny", 5e-324).member("big", std::int64_t{-9007199254740993});
  j.member("u", std::uint64_t{18446744073709551615u}).member("yes", true);
  j.member("inf", INFINITY).member("nan", NAN);
  j.key("empty_array").begin_array().end_array();
  j.key("empty_object").begin_object().end_object();
  j.key("nested").begin_array().begin_object().member("x", 1).end_object().value(2.5).null().end_array();
  j.end_object();
  const auto parsed = nlohmann::json::parse(j.str());
  EXPECT_EQ(parsed["text"], "quote \" backslash \\ newline \n tab \t bell \x07 utf-8 \xE2\x80\x96");
  EXPECT_EQ(parsed["pi"].get<double>(), 3.141592653589793);  // shortest round-trip form
  EXPECT_EQ(parsed["tiny"].get<double>(), 5e-324);
  EXPECT_EQ(parsed["big"].get<std::int64_t>(), -9007199254740993);
  EXPECT_EQ(parsed["u"].get<std::uint64_t>(), 18446744073709551615u);
  EXPECT_TRUE(parsed["inf"].is_null());
  EXPECT_TRUE(parsed["nan"].is_null());
  EXPECT_TRUE(parsed["empty_array"].is_array() && parsed["empty_array"].empty());
  EXPECT_TRUE(parsed["empty_object"].is_object() && parsed["empty_object"].empty());
  EXPECT_EQ(parsed["nested"], nlohmann::json::parse(R"([{"x": 1}, 2.5, null])"));
}

TEST(JsonWriterTest, RefusesAnUnclosedDocument) {
  JsonWriter j;
  j.begin_object();
  EXPECT_THROW(j.str(), std::logic_error);
}

TEST(OneLineTest, MessagesNeverSpanLines) { EXPECT_EQ(one_line("a\nb\r\nc\n"), "a b  c"); }

// --backend auto's weighing (the model's arithmetic, no timing): a GPU run pays its context's
// teardown whatever the product, so the CPU answers small products sooner; large ones go to the GPU.
TEST(BackendWeighingTest, SmallDenseProductsStayOnTheCpuLargeOnesGoToTheGpu) {
  const pagh::SketchParams params;  // the defaults pagh-mm sketches with
  for (const pagh::Method method : {pagh::Method::automatic, pagh::Method::sketch}) {
    // The covariance screen of issue 27 (4000 x 5000 times 5000 x 4000) on 16 threads, and 2 x 2.
    const BackendWeighing covariance = weigh_backends({.m = 4000, .K = 5000, .p = 4000}, params, method, 16);
    EXPECT_TRUE(covariance.prefer_cpu) << covariance.cpu_seconds << " vs " << covariance.gpu_seconds;
    EXPECT_NE(covariance.note.find("backend cpu (auto: estimated"), std::string::npos) << covariance.note;
    EXPECT_TRUE(weigh_backends({.m = 2, .K = 2, .p = 2}, params, method, 16).prefer_cpu);
    // Four times each side: 64x the work; the GPU's fixed costs no longer decide.
    const BackendWeighing large = weigh_backends({.m = 16384, .K = 20000, .p = 16384}, params, method, 16);
    EXPECT_FALSE(large.prefer_cpu) << large.cpu_seconds << " vs " << large.gpu_seconds;
    // The same covariance screen on one CPU thread is the GPU's.
    EXPECT_FALSE(weigh_backends({.m = 4000, .K = 5000, .p = 4000}, params, method, 1).prefer_cpu);
  }
  // The GPU's process costs are what tips the covariance screen: without them the GPU would win.
  const BackendWeighing free_start = weigh_backends({.m = 4000, .K = 5000, .p = 4000}, params, pagh::Method::sketch, 16, {.seconds = 0});
  const BackendWeighing with_start = weigh_backends({.m = 4000, .K = 5000, .p = 4000}, params, pagh::Method::sketch, 16);
  EXPECT_DOUBLE_EQ(with_start.gpu_seconds - free_start.gpu_seconds, GpuProcessCosts{}.seconds);
  EXPECT_EQ(free_start.cpu_seconds, with_start.cpu_seconds);
}

// A preferred CPU is taken without asking CUDA anything; an explicit --backend is never weighed.
TEST(BackendWeighingTest, SelectionFollowsTheWeighingOnlyForAuto) {
  BackendWeighing cpu_sooner;
  cpu_sooner.prefer_cpu = true;
  cpu_sooner.note = "backend cpu (auto: estimated 0.1 s here, 0.3 s on a GPU with its start and exit)";
  const BackendSelection chosen = select_backend(BackendChoice::automatic, 1, &cpu_sooner);
  EXPECT_EQ(chosen.backend->name(), "cpu");
#ifdef PAGH_MM_HAVE_SKETCH_CUDA
  EXPECT_EQ(chosen.auto_note, cpu_sooner.note);
#else
  // Without the CUDA backend there was no GPU to weigh against: the build's own reason is given.
  EXPECT_NE(chosen.auto_note.find("this build has no CUDA sketch backend"), std::string::npos) << chosen.auto_note;
#endif
  const BackendSelection explicit_cpu = select_backend(BackendChoice::cpu, 1, &cpu_sooner);
  EXPECT_EQ(explicit_cpu.auto_note, "");
  BackendWeighing gpu_sooner;  // prefer_cpu false: auto decides as without a weighing
  const BackendSelection unweighed = select_backend(BackendChoice::automatic, 1, &gpu_sooner);
  EXPECT_NE(unweighed.auto_note, cpu_sooner.note);
  EXPECT_EQ(unweighed.auto_note, select_backend(BackendChoice::automatic, 1).auto_note);
}

}  // namespace
}  // namespace pagh_mm
