// pagh-mm generate (the synthetic workloads as files) and pagh-mm study (CSV, markdown, plots).
#include <fstream>

#include "cli_test_support.hpp"
#include "matrix_io/read.hpp"

namespace pagh_mm_test {
namespace {

namespace mio = pagh::matrix_io;
using nlohmann::json;

TEST_F(Cli, GeneratedPlantedEntriesAreFoundByTheSketch) {
  const Result g = run({"generate", "planted-dense", "--m", "40", "--k", "60", "--p", "50", "--planted", "3", "--seed",
                        "4", "--out-a", "A.mtx", "--out-b", "B.mtx"});
  ASSERT_EQ(g.status, 0) << g.err;
  EXPECT_EQ(mio::read_header(work("A.mtx")).rows, 40);
  EXPECT_EQ(mio::read_header(work("B.mtx")).cols, 50);
  // "planted (i, j) v" lines, 1-based; the sketch's top 3 are exactly these.
  std::set<std::pair<std::int64_t, std::int64_t>> planted;
  for (const auto& line : lines_of(g.out)) {
    long long i = 0, j = 0;
    if (std::sscanf(line.c_str(), "planted (%lld, %lld)", &i, &j) == 2) planted.insert({i, j});
  }
  ASSERT_EQ(planted.size(), 3u) << g.out;
  EXPECT_NE(g.out.find("wrote A.mtx and B.mtx"), std::string::npos);
  const json j = run_json({"--top", "3", "A.mtx", "B.mtx"});
  std::set<std::pair<std::int64_t, std::int64_t>> found;
  for (const auto& e : j["entries"]) found.insert({e["row"].get<std::int64_t>(), e["col"].get<std::int64_t>()});
  EXPECT_EQ(found, planted);
}

TEST_F(Cli, GenerateWritesEveryWorkload) {
  const std::vector<std::vector<std::string>> cases = {
      {"sparse", "--m", "30", "--k", "20", "--p", "25", "--integer"},
      {"low-rank-sparse", "--m", "12", "--k", "10", "--p", "8", "--rank", "2"},
      {"covariance", "--samples", "30", "--features", "10", "--pairs", "2"}};
  for (auto args : cases) {
    args.insert(args.begin(), "generate");
    for (const char* o : {"--out-a", "a.mtx", "--out-b", "b.mtx", "--force", "-q"}) args.push_back(o);
    const Result r = run(args);
    ASSERT_EQ(r.status, 0) << args[1] << ": " << r.err;
    EXPECT_EQ(r.out, "");  // -q
    const auto ha = mio::read_header(work("a.mtx")), hb = mio::read_header(work("b.mtx"));
    EXPECT_EQ(ha.cols, hb.rows) << args[1];
  }
  EXPECT_EQ(mio::read_header(work("a.mtx")).rows, 10);  // covariance: A = X^T is features x samples
  EXPECT_EQ(mio::read_header(work("a.mtx")).cols, 30);
  // Default names in the working directory.
  ASSERT_EQ(run({"generate", "sparse", "--m", "5", "--k", "5", "--p", "5", "-q"}).status, 0);
  EXPECT_TRUE(fs::exists(work("A.mtx")) && fs::exists(work("B.mtx")));
}

TEST_F(Cli, GenerateRefusesBadRequestsAndWritesNothing) {
  const Result foreign = run({"generate", "sparse", "--rank", "3"});
  EXPECT_EQ(foreign.status, 64);
  expect_one_line_error(foreign, {"--rank: does not apply to workload sparse", "(see pagh-mm generate --help)"});
  const Result unknown = run({"generate", "dense"});
  EXPECT_EQ(unknown.status, 64);
  expect_one_line_error(unknown, {"unknown workload 'dense'"});
  const Result too_many = run({"generate", "planted-dense", "--k", "3", "--planted", "5"});
  EXPECT_EQ(too_many.status, 64);
  expect_one_line_error(too_many, {"--planted"});
  const Result no_dir = run({"generate", "sparse", "--out-a", "A.mtx", "--out-b", "nowhere/B.mtx"});
  EXPECT_EQ(no_dir.status, 73);
  expect_one_line_error(no_dir, {"--out-b nowhere/B.mtx", "does not exist"});
  EXPECT_TRUE(work_files().empty());  // not even A.mtx
}

bool python_has_matplotlib() {
  return std::system("/usr/bin/python3 -c 'import matplotlib' >/dev/null 2>&1") == 0;
}

TEST_F(Cli, StudyWritesCsvSummaryAndPlots) {
  const Result r = run({"study", "--preset", "smoke", "--workloads", "planted-dense,sparse", "--out", "study", "-q"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  // smoke: pads {2, 8} x d {1, 3} + 4 precisions x (3 stabilizations + alman-rao) = 20 runs per
  // workload and seed; 2 workloads, 1 seed.
  const auto csv = lines_of(slurp(work("study/results.csv")));
  ASSERT_EQ(csv.size(), 1u + 40u);
  EXPECT_EQ(csv[0].rfind("workload,m,k,p,seed,sweep,pad,buckets,sketches,precision,stabilization,algorithm,"
                         "relative_frobenius_error,",
                         0),
            0u);
  std::size_t fp64_reference_rows = 0;
  for (std::size_t i = 1; i < csv.size(); ++i) {
    EXPECT_EQ(std::count(csv[i].begin(), csv[i].end(), ','), std::count(csv[0].begin(), csv[0].end(), ',')) << csv[i];
    // The fp64 run is the precision sweep's reference: its deviation is exactly 0.
    if (csv[i].find(",precision,8,") != std::string::npos && csv[i].find(",fp64,none,folklore,") != std::string::npos) {
      ++fp64_reference_rows;
      EXPECT_NE(csv[i].find(",0,"), std::string::npos) << csv[i];
    }
  }
  EXPECT_EQ(fp64_reference_rows, 2u);
  const std::string md = slurp(work("study/summary.md"));
  for (const char* s : {"# pagh-mm accuracy study: preset `smoke`", "## Workloads", "planted-dense", "sparse",
                        "## Estimator error versus padding", "## Arithmetic: precision and stabilization", "## Plots"})
    EXPECT_NE(md.find(s), std::string::npos) << s;
  EXPECT_NE(r.out.find("study smoke: 40 runs"), std::string::npos) << r.out;
  if (python_has_matplotlib()) {
    for (const char* png : {"error_vs_pad.png", "recall_vs_pad.png", "precision.png"}) {
      const std::string bytes = slurp(work("study") / png);
      ASSERT_GT(bytes.size(), 8u) << png;
      EXPECT_EQ(bytes.substr(1, 3), "PNG") << png;
      EXPECT_NE(md.find(std::string("](") + png + ")"), std::string::npos) << png;
    }
  } else {
    EXPECT_NE(md.find("Plots were skipped"), std::string::npos);
  }
  // Nothing but the results (no temporary script, log or partial file).
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(work("study"))) names.push_back(e.path().filename().string());
  for (const auto& n : names) EXPECT_NE(n[0], '.') << n;
}

TEST_F(Cli, StudyWithoutPlotsSaysSoAndRefusesBadOptions) {
  const Result r = run({"study", "--preset", "smoke", "--workloads", "covariance", "--plot", "never", "--out", "s", "-q"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("plots skipped: --plot never"), std::string::npos) << r.out;
  EXPECT_NE(slurp(work("s/summary.md")).find("Plots were skipped: --plot never"), std::string::npos);
  EXPECT_FALSE(fs::exists(work("s/error_vs_pad.png")));
  const Result preset = run({"study", "--preset", "huge"});
  EXPECT_EQ(preset.status, 64);
  expect_one_line_error(preset, {"--preset: unknown preset 'huge'", "(see pagh-mm study --help)"});
  const Result workload = run({"study", "--workloads", "planted-dense,nope"});
  EXPECT_EQ(workload.status, 64);
  expect_one_line_error(workload, {"--workloads: unknown workload 'nope'"});
  std::ofstream(work("file")) << "x";
  const Result out = run({"study", "--preset", "smoke", "--out", "file/sub"});
  EXPECT_EQ(out.status, 73);
  expect_one_line_error(out, {"--out file/sub", "cannot create directory"});
}

}  // namespace
}  // namespace pagh_mm_test
