// The rough edges a first run meets (issue 25): --format csv/tsv read back by Python's csv module,
// generate refusing to overwrite, input files with a byte-order mark, gzip or NaN, -k beyond m*p,
// fwht-demo --help, and the words for a machine without an NVIDIA driver.
#include <cstdlib>

#include <zlib.h>

#include "../special_files.hpp"
#include "cli_test_support.hpp"
#include "matrix_io/read.hpp"
#include "pagh/output_file.hpp"
#include "sketch/compress.hpp"

namespace pagh_mm_test {
namespace {

using nlohmann::json;

const char* const kPython = "/usr/bin/python3";

// Parses a delimited file with Python's csv module (the reader pandas users rely on) and returns
// {"fields": [...], "rows": [{field: text}]}.
json parse_with_python_csv(const fs::path& file, const std::string& delimiter, const fs::path& json_out) {
  const std::string script =
      "import csv, json, sys\n"
      "with open(sys.argv[1], newline='') as f:\n"
      "    reader = csv.DictReader(f, delimiter=sys.argv[2])\n"
      "    rows = list(reader)\n"
      "json.dump({'fields': reader.fieldnames, 'rows': rows}, open(sys.argv[3], 'w'))\n";
  const fs::path script_file = json_out.parent_path() / "parse.py";
  std::ofstream(script_file) << script;
  const std::string command = std::string(kPython) + " " + script_file.string() + " " + file.string() + " '" +
                              delimiter + "' " + json_out.string();
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  return json::parse(slurp(json_out));
}

TEST_F(Cli, CsvAndTsvReadBackWithPythonsCsvModule) {
  if (::access(kPython, X_OK) != 0) GTEST_SKIP() << kPython << " not found (Debian: python3)";
  // Multiply with --verify: every column of the text table, against the JSON of the same run.
  const std::vector<std::string> args = {"--method", "sketch", "-k", "6", "--verify", A(), B()};
  std::vector<std::string> csv_args = args;
  csv_args.insert(csv_args.begin(), {"--format", "csv"});
  const Result csv = run(csv_args);
  ASSERT_EQ(csv.status, 0) << csv.err;
  std::ofstream(dir_ / "out.csv") << csv.out;
  const json parsed = parse_with_python_csv(dir_ / "out.csv", ",", dir_ / "out.json");
  const json reference = run_json(args);
  const json& entries = reference["entries"];
  ASSERT_FALSE(entries.empty());
  // The z-score column appears exactly when the other formats have it.
  const bool with_z = entries[0].contains("z");
  json fields = json::array({"rank", "row", "col", "estimate", "spread"});
  if (with_z) fields.push_back("z");
  for (const char* f : {"exact", "error"}) fields.push_back(f);
  EXPECT_EQ(parsed["fields"], fields);
  ASSERT_EQ(parsed["rows"].size(), entries.size());
  ASSERT_EQ(entries.size(), 6u);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const json& row = parsed["rows"][i];
    EXPECT_EQ(std::stoll(row["rank"].get<std::string>()), static_cast<long long>(i + 1));
    EXPECT_EQ(std::stoll(row["row"].get<std::string>()), entries[i]["row"].get<long long>());
    EXPECT_EQ(std::stoll(row["col"].get<std::string>()), entries[i]["col"].get<long long>());
    // Shortest exact forms on both sides: the same doubles, not merely close ones.
    EXPECT_EQ(std::stod(row["estimate"].get<std::string>()), entries[i]["estimate"].get<double>());
    EXPECT_EQ(std::stod(row["spread"].get<std::string>()), entries[i]["spread"].get<double>());
    if (with_z) EXPECT_EQ(std::stod(row["z"].get<std::string>()), entries[i]["z"].get<double>());
    EXPECT_EQ(std::stod(row["exact"].get<std::string>()), entries[i]["exact"].get<double>());
    EXPECT_EQ(std::stod(row["error"].get<std::string>()),
              entries[i]["estimate"].get<double>() - entries[i]["exact"].get<double>());
  }

  // top as tsv and query as csv, from a saved sketch.
  ASSERT_EQ(run({"--save-sketch", "C.pagh", "-q", A(), B()}).status, 0);
  const Result tsv = run({"top", "C.pagh", "-k", "4", "--format", "tsv"});
  ASSERT_EQ(tsv.status, 0) << tsv.err;
  std::ofstream(dir_ / "top.tsv") << tsv.out;
  const json top = parse_with_python_csv(dir_ / "top.tsv", "\t", dir_ / "top.json");
  json top_fields = json::array({"rank", "row", "col", "estimate", "spread"});
  if (with_z) top_fields.push_back("z");
  EXPECT_EQ(top["fields"], top_fields);
  EXPECT_EQ(top["rows"].size(), 4u);
  const Result query = run({"query", "C.pagh", "51", "46", "12", "8", "--format", "csv"});
  ASSERT_EQ(query.status, 0) << query.err;
  std::ofstream(dir_ / "query.csv") << query.out;
  const json answers = parse_with_python_csv(dir_ / "query.csv", ",", dir_ / "query.json");
  json query_fields = json::array({"row", "col", "estimate", "spread"});
  if (with_z) query_fields.push_back("z");
  EXPECT_EQ(answers["fields"], query_fields);
  ASSERT_EQ(answers["rows"].size(), 2u);
  EXPECT_EQ(answers["rows"][0]["row"], "51");
  EXPECT_EQ(answers["rows"][1]["col"], "8");
  const json query_json = run_json({"query", "C.pagh", "51", "46", "12", "8"});
  EXPECT_EQ(std::stod(answers["rows"][0]["estimate"].get<std::string>()), query_json["entries"][0]["estimate"].get<double>());

  const Result bad = run({"--format", "xml", A(), B()});
  EXPECT_EQ(bad.status, 64);
  expect_one_line_error(bad, {"--format", "expected text, json, csv or tsv"});
}

TEST_F(Cli, GenerateRefusesExistingFilesUnlessForced) {
  std::ofstream(work("A.mtx")) << "mine\n";
  const Result refused = run({"generate", "planted-dense"});
  EXPECT_EQ(refused.status, 73);
  expect_one_line_error(refused, {"--out-a A.mtx", "exists", "--force"});
  EXPECT_EQ(slurp(work("A.mtx")), "mine\n");
  EXPECT_EQ(work_files(), std::vector<std::string>{"A.mtx"});  // B.mtx not written either
  const Result forced = run({"generate", "planted-dense", "--force", "-q"});
  ASSERT_EQ(forced.status, 0) << forced.err;
  EXPECT_EQ(pagh::matrix_io::read_header(work("A.mtx")).rows, 64);
  EXPECT_EQ(pagh::matrix_io::read_header(work("B.mtx")).cols, 80);
  const Result help = run({"generate", "--help"});
  EXPECT_NE(help.out.find("--force"), std::string::npos);
  EXPECT_NE(help.out.find("unless --force"), std::string::npos);
}

TEST_F(Cli, InputsWithByteOrderMarkGzipOrNaN) {
  // A byte-order mark is accepted: the same answer as without it.
  std::ofstream(work("bom.mtx"), std::ios::binary) << "\xEF\xBB\xBF" << slurp(A());
  const json with_bom = run_json({"-k", "3", "bom.mtx", B()});
  const json plain = run_json({"-k", "3", A(), B()});
  EXPECT_EQ(with_bom["entries"], plain["entries"]);
  // gzip: read as the text it holds; a damaged stream is named, status 65, nothing on stdout.
  {
    const std::string text = slurp(A());
    gzFile out = gzopen(work("A.mtx.gz").c_str(), "wb");
    ASSERT_NE(out, nullptr);
    ASSERT_EQ(gzwrite(out, text.data(), static_cast<unsigned>(text.size())), static_cast<int>(text.size()));
    ASSERT_EQ(gzclose(out), Z_OK);
  }
  EXPECT_EQ(run_json({"-k", "3", "A.mtx.gz", B()})["entries"], plain["entries"]);
  std::ofstream(work("cut.mtx.gz"), std::ios::binary) << slurp(work("A.mtx.gz")).substr(0, 40);
  const Result gz = run({"cut.mtx.gz", B()});
  EXPECT_EQ(gz.status, 65);
  expect_one_line_error(gz, {"cut.mtx.gz: truncated gzip data"});
  EXPECT_EQ(gz.out, "");
  // NaN: the hint names what pagh-mm needs, not a library option a user cannot set.
  std::ofstream(work("nan.mtx")) << "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 nan\n";
  const Result nan = run({"nan.mtx", "nan.mtx"});
  EXPECT_EQ(nan.status, 65);
  expect_one_line_error(nan, {"nan.mtx:3:", "not finite", "pagh-mm needs finite values"});
  EXPECT_EQ(nan.err.find("ReadOptions"), std::string::npos) << nan.err;
}

TEST_F(Cli, VerboseSaysWhenKExceedsTheEntries) {
  const Result verbose = run({"--method", "sketch", "-k", "100000", "-v", A(), B()});
  ASSERT_EQ(verbose.status, 0) << verbose.err;
  EXPECT_NE(verbose.err.find("-k 100000 exceeds the number of entries of C (64 x 80)"), std::string::npos) << verbose.err;
  const Result quiet = run({"--method", "sketch", "-k", "100000", A(), B()});
  EXPECT_EQ(quiet.err.find("exceeds"), std::string::npos) << quiet.err;
  ASSERT_EQ(run({"--method", "sketch", "--save-sketch", "C.pagh", "-q", A(), B()}).status, 0);
  const Result top = run({"top", "C.pagh", "-k", "6000", "-v"});
  ASSERT_EQ(top.status, 0) << top.err;
  EXPECT_NE(top.err.find("-k 6000 exceeds the number of entries of C (64 x 80)"), std::string::npos) << top.err;
  const Result small = run({"top", "C.pagh", "-k", "5120", "-v"});  // exactly m*p: not "exceeds"
  EXPECT_EQ(small.err.find("exceeds"), std::string::npos) << small.err;
}

TEST(FwhtDemo, HelpPrintsUsage) {
  const std::string help_out = (fs::temp_directory_path() / ("fwht_demo_help_" + std::to_string(::getpid()))).string();
  const int status = std::system((std::string(PAGH_FWHT_DEMO_BINARY) + " --help > " + help_out + " 2>&1").c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(slurp(help_out).rfind("usage: fwht-demo VECTOR.txt", 0), 0u) << slurp(help_out);
  const int none = std::system((std::string(PAGH_FWHT_DEMO_BINARY) + " > " + help_out + " 2>&1").c_str());
  EXPECT_EQ(WEXITSTATUS(none), 64);
  EXPECT_NE(slurp(help_out).find("usage: fwht-demo"), std::string::npos);
  fs::remove(help_out);
}

TEST(CudaWords, NoDriverReadsAsNoDriverNotAsAnOldOne) {
  const pagh_mm::CudaInfo cuda = pagh_mm::query_cuda();
  if (!cuda.devices.empty()) GTEST_SKIP() << "a GPU is usable here: " << cuda.devices.front();
  if (cuda.driver_version != "no driver") GTEST_SKIP() << "a driver is installed here (" << cuda.driver_version << ")";
  if (!cuda.runtime_linked) GTEST_SKIP() << "pagh-mm was built without the CUDA runtime";
  EXPECT_EQ(cuda.device_problem, "no NVIDIA driver or GPU found");
  EXPECT_NE(cuda.device_error, cuda.device_problem);  // the runtime's detail is kept for -v
}

// The sketch writer (CompressedProduct::save) by the same rule as matrix_io's.
TEST(SketchFileTargets, SaveFollowsTheOutputRule) {
  const fs::path dir = fs::temp_directory_path() / ("pagh_sketch_targets_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "real");
  Eigen::MatrixXd a = Eigen::MatrixXd::Identity(8, 8), b = Eigen::MatrixXd::Identity(8, 8);
  b(2, 5) = 7;
  const pagh::CompressedProduct product = pagh::compress(a, b, {.repetitions = 3, .seed = 5});
  product.save((dir / "plain.pagh").string());
  const std::string bytes = slurp(dir / "plain.pagh");
  ASSERT_TRUE(bytes.starts_with("PAGHSKCH"));
  // Symbolic link: the target is replaced, the link stays.
  std::ofstream(dir / "real" / "s.pagh") << "old";
  fs::create_symlink("real/s.pagh", dir / "link.pagh");
  product.save((dir / "link.pagh").string());
  EXPECT_TRUE(fs::is_symlink(dir / "link.pagh"));
  EXPECT_EQ(slurp(dir / "real" / "s.pagh"), bytes);
  EXPECT_EQ(pagh::CompressedProduct::load((dir / "link.pagh").string()).estimate(2, 5),
            product.estimate(2, 5));
  // Directory and missing directory: refused as "cannot create".
  for (const fs::path& p : {dir / "real", dir / "missing" / "x.pagh"}) {
    try {
      product.save(p.string());
      ADD_FAILURE() << p << " accepted";
    } catch (const pagh::OutputError& e) {
      EXPECT_TRUE(e.cannot_create()) << e.what();
    }
  }
  // A failing device: a write error, and the device is still a device.
  if (pagh_test::make_full_twin(dir / "full").empty()) {
    try {
      product.save((dir / "full").string());
      ADD_FAILURE() << "saving into a full device succeeded";
    } catch (const pagh::OutputError& e) {
      EXPECT_FALSE(e.cannot_create());
      EXPECT_NE(e.reason().find("No space left on device"), std::string::npos) << e.reason();
    }
    EXPECT_TRUE(pagh_test::is_character_device(dir / "full"));
  }
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  for (const auto& n : names) EXPECT_NE(n[0], '.') << "left behind: " << n;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace pagh_mm_test
