// pagh-mm generate (the synthetic workloads as files) and pagh-mm study (CSV, markdown, plots;
// the real-data preset).
#include <fstream>
#include <map>

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


// --preset real builds its workloads from packages the CI machine need not have (python3-sklearn,
// r-cran-matrix are large): each test below runs what this machine has and skips, saying which
// package is missing, what it cannot run.
bool python_imports(const std::string& module) {
  return std::system(("/usr/bin/python3 -c 'import " + module + "' >/dev/null 2>&1").c_str()) == 0;
}

bool r_matrix_has(const std::string& file) {
  for (const char* dir : {"/usr/lib/R/library/Matrix/external", "/usr/lib/R/site-library/Matrix/external",
                          "/usr/local/lib/R/site-library/Matrix/external"})
    if (fs::exists(fs::path(dir) / file)) return true;
  return false;
}

TEST_F(Cli, StudyRealPresetRunsWhatIsInstalledAndWritesItsRows) {
  if (!python_imports("scipy")) GTEST_SKIP() << "python3-scipy is not installed: no real-data workload can be built";
  const bool sklearn = python_imports("sklearn"), pores = r_matrix_has("pores_1.mtx");
  const Result r = run({"study", "--preset", "real", "--workloads", "digits-gram,pores_1-square", "--seeds", "1", "--out", "real",
                        "--progress", "never"});
  if (!sklearn && !pores) {
    EXPECT_EQ(r.status, 69);
    expect_one_line_error(r, {"study --preset real: no workload could be built"});
    EXPECT_FALSE(fs::exists(work("real/results.csv")));
    GTEST_SKIP() << "neither python3-sklearn nor r-cran-matrix is installed: checked the refusal only";
  }
  ASSERT_EQ(r.status, 0) << r.err;
  // A missing package's workload is skipped with a note naming the package; nothing else on stderr.
  for (const auto& line : lines_of(r.err)) EXPECT_NE(line.find("pagh-mm: study: skipped "), std::string::npos) << line;
  if (sklearn) EXPECT_EQ(r.err.find("digits-gram"), std::string::npos) << r.err;
  if (pores) EXPECT_EQ(r.err.find("pores_1-square"), std::string::npos) << r.err;
  if (!sklearn) EXPECT_NE(r.err.find("python3-sklearn"), std::string::npos) << r.err;
  if (!pores) EXPECT_NE(r.err.find("r-cran-matrix"), std::string::npos) << r.err;

  // Pads 8 and 64 with the diagonal kept, one seed: two rows per workload that ran, with the data's
  // own shapes; and one at pad 8 with the diagonal subtracted for a square product whose diagonal
  // holds >= 1 % of the energy (X^T X of the digits: its diagonal is most of it).
  const auto csv = lines_of(slurp(work("real/results.csv")));
  EXPECT_EQ(csv[0].rfind("workload,m,k,p,seed,pad,buckets,sketches,diagonal,recall_at_10,recall_at_50,coverage_top_10,", 0), 0u)
      << csv[0];
  const std::map<std::string, std::string> shapes = {{"digits-gram", "64,1797,64"}, {"pores_1-square", "30,30,30"}};
  std::map<std::string, int> rows, subtracted;
  for (std::size_t i = 1; i < csv.size(); ++i) {
    EXPECT_EQ(std::count(csv[i].begin(), csv[i].end(), ','), std::count(csv[0].begin(), csv[0].end(), ',')) << csv[i];
    const std::string name = csv[i].substr(0, csv[i].find(','));
    ASSERT_TRUE(shapes.count(name)) << csv[i];
    EXPECT_EQ(csv[i].find(name + "," + shapes.at(name) + ",1,"), 0u) << csv[i];
    EXPECT_TRUE(csv[i].find(",sketch,") != std::string::npos || csv[i].find(",exact,") != std::string::npos) << csv[i];
    ++(csv[i].find(",3,subtracted,") != std::string::npos ? subtracted : rows)[name];
  }
  if (sklearn) EXPECT_EQ(rows["digits-gram"], 2);
  if (sklearn) EXPECT_EQ(subtracted["digits-gram"], 1);
  if (pores) EXPECT_EQ(rows["pores_1-square"], 2);
  EXPECT_LE(subtracted["pores_1-square"], 1);
  EXPECT_TRUE(fs::exists(work(sklearn ? "real/data/digits-gram.a.mtx" : "real/data/pores_1-square.a.mtx")));

  const std::string md = slurp(work("real/summary.md"));
  for (const char* s : {"# pagh-mm accuracy study: preset `real`", "## Workloads", "## Results", "## Targets at the default size (pad 8, d 3)"})
    EXPECT_NE(md.find(s), std::string::npos) << s;
  if (!sklearn) EXPECT_NE(md.find("| digits-gram | skipped: "), std::string::npos) << md;
  EXPECT_NE(r.out.find("study real: " + std::to_string(csv.size() - 1) + " runs"), std::string::npos) << r.out;
  // Nothing left behind but the results and the data (no temporary script, log or manifest).
  for (const char* dir : {"real", "real/data"})
    for (const auto& e : fs::directory_iterator(work(dir))) EXPECT_NE(e.path().filename().string()[0], '.') << e.path();
}

// A python3 whose packages are hidden from the data helper, to see the missing-package paths on a
// machine that has them: without site-packages (no numpy, no scipy), or with `module` unimportable.
std::string python_without(const fs::path& wrapper, const std::string& module) {
  std::ofstream(wrapper) << (module.empty() ? "#!/bin/sh\nexec /usr/bin/python3 -S \"$@\"\n"
                                            : "#!/bin/sh\nexec /usr/bin/python3 -c \"import sys; sys.modules['" + module +
                                                  "'] = None; sys.argv = sys.argv[1:]; exec(open(sys.argv[0]).read())\" \"$@\"\n");
  fs::permissions(wrapper, fs::perms::owner_all);
  return wrapper.string();
}

TEST_F(Cli, StudyRealPresetSkipsWhatIsMissing) {
  if (!python_imports("scipy")) GTEST_SKIP() << "python3-scipy is not installed";
  const Result none = run({"study", "--preset", "real", "--python", python_without(work("no-site"), ""), "--out", "n"});
  EXPECT_EQ(none.status, 69);
  expect_one_line_error(none, {"study --preset real: python3-numpy and python3-scipy are needed", "python3-scipy"});
  EXPECT_FALSE(fs::exists(work("n/results.csv")));
  if (!r_matrix_has("pores_1.mtx")) GTEST_SKIP() << "r-cran-matrix is not installed: the partial run is not checked";
  const Result partial = run({"study", "--preset", "real", "--python", python_without(work("no-sklearn"), "sklearn"), "--workloads",
                              "digits-gram,pores_1-square", "--seeds", "1", "--out", "p", "--progress", "never"});
  ASSERT_EQ(partial.status, 0) << partial.err;
  EXPECT_EQ(partial.err, "pagh-mm: study: skipped digits-gram: scikit-learn is not installed (Debian: python3-sklearn)\n");
  EXPECT_NE(partial.out.find(" runs of 1 workloads (1 skipped)"), std::string::npos) << partial.out;
  const auto csv = lines_of(slurp(work("p/results.csv")));
  ASSERT_GE(csv.size(), 3u);
  for (std::size_t i = 1; i < csv.size(); ++i) EXPECT_EQ(csv[i].rfind("pores_1-square,30,30,30,1,", 0), 0u) << csv[i];
  EXPECT_NE(slurp(work("p/summary.md")).find("| digits-gram | skipped: scikit-learn is not installed"), std::string::npos);
  // Only skipped workloads: nothing ran, so the study fails, naming why.
  const Result nothing = run({"study", "--preset", "real", "--python", work("no-sklearn").string(), "--workloads", "digits-gram",
                              "--out", "q", "--progress", "never"});
  EXPECT_EQ(nothing.status, 69);
  expect_one_line_error(nothing, {"study --preset real: no workload could be built (scikit-learn is not installed"});
  EXPECT_FALSE(fs::exists(work("q/results.csv")));
}

TEST_F(Cli, StudyRealPresetRefusesWhatItCannotRun) {
  const Result python = run({"study", "--preset", "real", "--python", "/nonexistent/python3", "--out", "r"});
  EXPECT_EQ(python.status, 69);
  expect_one_line_error(python, {"--python /nonexistent/python3: cannot be run"});
  EXPECT_FALSE(fs::exists(work("r/results.csv")));
  const Result cuda = run({"study", "--preset", "real", "--backend", "cuda", "--out", "r"});
  EXPECT_EQ(cuda.status, 64);
  expect_one_line_error(cuda, {"--backend: the real preset runs on the CPU"});
  if (!fs::exists("/usr/bin/python3")) GTEST_SKIP() << "no /usr/bin/python3: the data helper's name check is not run";
  const Result name = run({"study", "--preset", "real", "--workloads", "digits-gram,nope", "--out", "r"});
  EXPECT_EQ(name.status, 64);
  expect_one_line_error(name, {"--workloads: unknown workload 'nope' (expected digits-gram, "});
}

}  // namespace
}  // namespace pagh_mm_test
