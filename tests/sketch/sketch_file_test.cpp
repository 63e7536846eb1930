// The sketch loader against crafted files (crafted_sketch.hpp): every header field at hostile
// values, alone and in pairs, with the checksum recomputed so that only validation can refuse them.
// Each file either loads, with exactly the header's numbers and payload, or throws pagh::Error
// (MemoryLimitExceeded when the fields are valid but the product would not fit the limit); a crash or
// a sanitizer report is a failure. Also: bounded reads of devices and pipes, non-finite payloads,
// the hash tables' overflow checks and compress()'s memory plan.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <thread>

#include "crafted_sketch.hpp"
#include "pagh/error.hpp"
#include "sketch/compress.hpp"
#include "sketch/compressed_product.hpp"
#include "sketch/hashing.hpp"
#include "sketch/memory_limit.hpp"

namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t kLimit = std::uint64_t{64} << 20;  // the loader's limit in these tests

class SketchFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("pagh_sketch_file_" + std::to_string(::getpid()) + "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::vector<unsigned char>& bytes, const std::string& name = "crafted.pagh") const {
    const fs::path path = dir_ / name;
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    return path.string();
  }

  // Loads the crafted file and checks the outcome against the format's rules; returns "loaded",
  // "memory" or "refused" for the caller's counts.
  std::string check(const crafted::Fields& f, const std::string& what) const {
    const std::size_t values = crafted::payload_values(f);
    const auto bytes = crafted::file_bytes(f, values);
    const std::string path = write(bytes);
    const bool size_matches = crafted::valid(f) && static_cast<double>(values) == static_cast<double>(f.repetitions) * f.buckets;
    const bool should_load = size_matches && crafted::loaded_bytes(f) <= static_cast<double>(kLimit);
    try {
      const auto product = pagh::CompressedProduct::load(path, {.max_bytes = kLimit});
      EXPECT_TRUE(should_load) << what << ": loaded a file the format refuses";
      EXPECT_EQ(product.rows(), f.rows) << what;
      EXPECT_EQ(product.cols(), f.cols) << what;
      EXPECT_EQ(product.inner(), f.inner) << what;
      EXPECT_EQ(product.buckets(), f.buckets) << what;
      EXPECT_EQ(product.repetitions(), f.repetitions) << what;
      EXPECT_EQ(product.params().seed, f.seed) << what;
      bool payload_kept = true;
      for (int t = 0; t < product.repetitions(); ++t)
        for (std::int64_t h = 0; h < product.buckets(); ++h)
          payload_kept = payload_kept && product.sketch(t)[static_cast<std::size_t>(h)] ==
                                             static_cast<double>(static_cast<int>((t * f.buckets + h) % 13) - 6) * 0.5;
      EXPECT_TRUE(payload_kept) << what;
      if (product.rows() > 0 && product.cols() > 0) {
        const double e = product.estimate(product.rows() - 1, product.cols() - 1);
        EXPECT_TRUE(std::isfinite(e)) << what;
      }
      return "loaded";
    } catch (const pagh::MemoryLimitExceeded& e) {
      EXPECT_TRUE(size_matches) << what << ": a memory refusal for a file the format refuses: " << e.what();
      EXPECT_GT(e.needed_bytes(), kLimit) << what;
      return "memory";
    } catch (const pagh::Error& e) {
      EXPECT_FALSE(should_load) << what << ": refused a valid file: " << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
      return "refused";
    }
  }

  fs::path dir_;
};

TEST_F(SketchFile, TheUntouchedCraftedFileLoads) { EXPECT_EQ(check({}, "base"), "loaded"); }

TEST_F(SketchFile, EveryFieldAloneAtHostileValues) {
  std::map<std::string, int> outcomes;
  for (const auto& name : crafted::kFieldNames) {
    if (crafted::is_double_field(name)) {
      for (double v : crafted::kDoubleValues) {
        crafted::Fields f;
        f.pad = v;
        ++outcomes[check(f, name + " = " + std::to_string(v))];
      }
      continue;
    }
    for (std::int64_t v : crafted::kIntegerValues) {
      crafted::Fields f;
      crafted::set_integer(f, name, v);
      ++outcomes[check(f, name + " = " + std::to_string(v))];
    }
  }
  // Each outcome occurs: the crafted values reach every branch.
  EXPECT_GT(outcomes["loaded"], 0);
  EXPECT_GT(outcomes["memory"], 0);
  EXPECT_GT(outcomes["refused"], 0);
}

TEST_F(SketchFile, EveryPairOfFieldsAtHostileValues) {
  // Field `name` at its value number i (integers and doubles have their own lists).
  const auto count = [](const std::string& name) {
    return crafted::is_double_field(name) ? crafted::kPairDoubleValues.size() : crafted::kPairIntegerValues.size();
  };
  const auto set = [](crafted::Fields& f, const std::string& name, std::size_t i) {
    if (crafted::is_double_field(name)) f.pad = crafted::kPairDoubleValues[i];
    else crafted::set_integer(f, name, crafted::kPairIntegerValues[i]);
  };
  std::map<std::string, int> outcomes;
  const auto& names = crafted::kFieldNames;
  for (std::size_t x = 0; x < names.size(); ++x)
    for (std::size_t y = x + 1; y < names.size(); ++y)
      for (std::size_t i = 0; i < count(names[x]); ++i)
        for (std::size_t j = 0; j < count(names[y]); ++j) {
          crafted::Fields f;
          set(f, names[x], i);
          set(f, names[y], j);
          ++outcomes[check(f, names[x] + " #" + std::to_string(i) + ", " + names[y] + " #" + std::to_string(j))];
        }
  EXPECT_GT(outcomes["loaded"], 0);
  EXPECT_GT(outcomes["memory"], 0);
  EXPECT_GT(outcomes["refused"], 0);
}

// The huge claims of the issue: 2^62 rows (d = 1, 2, 4, 8), 2^40 entries with b = 1, and d = 1024
// with 2^20 x 2^20 (10.7 GB of tables from an 8 KB file).
TEST_F(SketchFile, HugeClaimsAreRefusedBeforeAllocating) {
  for (int d : {1, 2, 4, 8}) {
    crafted::Fields f;
    f.rows = std::int64_t{1} << 62, f.repetitions = d, f.buckets = 16;
    EXPECT_EQ(check(f, "rows 2^62, d " + std::to_string(d)), "refused");
    f.rows = std::int64_t{1} << 47, f.cols = std::int64_t{1} << 47;
    EXPECT_EQ(check(f, "2^47 x 2^47, d " + std::to_string(d)), "memory");
  }
  crafted::Fields wide;
  wide.rows = wide.cols = std::int64_t{1} << 20, wide.repetitions = 1024, wide.buckets = 1;
  EXPECT_EQ(check(wide, "d 1024, 2^20 x 2^20"), "memory");
}

TEST_F(SketchFile, SizeMustMatchTheHeaderExactly) {
  const crafted::Fields f;
  for (std::size_t values : {std::size_t{47}, std::size_t{49}, std::size_t{0}}) {
    const std::string path = write(crafted::file_bytes(f, values));
    EXPECT_THROW(pagh::CompressedProduct::load(path), pagh::Error) << values;
  }
  auto bytes = crafted::file_bytes(f, 48);
  bytes.push_back(0);
  EXPECT_THROW(pagh::CompressedProduct::load(write(bytes)), pagh::Error);
  bytes.resize(60);  // inside the header
  EXPECT_THROW(pagh::CompressedProduct::load(write(bytes)), pagh::Error);
}

TEST_F(SketchFile, NonFinitePayloadIsRefused) {
  for (double bad : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    std::vector<double> payload(48, 1.0);
    payload[20] = bad;  // in sketch 2 (b = 16)
    const std::string path = write(crafted::file_bytes({}, 48, payload));
    try {
      (void)pagh::CompressedProduct::load(path);
      ADD_FAILURE() << "loaded a non-finite sketch";
    } catch (const pagh::Error& e) {
      EXPECT_NE(std::string(e.what()).find("sketch 2 holds a non-finite value"), std::string::npos) << e.what();
    }
  }
}

// A device that never ends is refused after its first bytes (the magic), and a pipe after exactly
// the header's claim plus one byte: nothing is read "until the end".
TEST_F(SketchFile, DevicesAndPipesAreReadWithinBounds) {
  try {
    (void)pagh::CompressedProduct::load("/dev/zero");
    ADD_FAILURE() << "/dev/zero loaded";
  } catch (const pagh::Error& e) {
    EXPECT_NE(std::string(e.what()).find("not a pagh sketch file"), std::string::npos) << e.what();
  }
  const fs::path fifo = dir_ / "pipe.pagh";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // The writer offers far more than the file's size; the reader stops, so the writer sees EPIPE.
  ::signal(SIGPIPE, SIG_IGN);
  std::thread writer([&] {
    const auto bytes = crafted::file_bytes({}, 48);
    std::FILE* out = std::fopen(fifo.c_str(), "wb");
    if (!out) return;
    std::fwrite(bytes.data(), 1, bytes.size(), out);
    const std::vector<unsigned char> more(1 << 16, 0);
    for (int i = 0; i < 1024 && std::fwrite(more.data(), 1, more.size(), out) == more.size(); ++i) {
    }
    std::fclose(out);
  });
  try {
    (void)pagh::CompressedProduct::load(fifo.string());
    ADD_FAILURE() << "an oversized pipe loaded";
  } catch (const pagh::Error& e) {
    EXPECT_NE(std::string(e.what()).find("more data follows the checksum"), std::string::npos) << e.what();
  }
  writer.join();
}

TEST_F(SketchFile, ASavedProductRoundTripsUnderAMemoryLimit) {
  Eigen::MatrixXd A = Eigen::MatrixXd::Random(9, 5), B = Eigen::MatrixXd::Random(5, 11);
  const auto product = pagh::compress(A, B, {.buckets = 64, .repetitions = 3});
  const std::string path = (dir_ / "saved.pagh").string();
  product.save(path);
  const auto loaded = pagh::CompressedProduct::load(path, {.max_bytes = 4096});
  for (std::int64_t i = 0; i < 9; ++i)
    for (std::int64_t j = 0; j < 11; ++j) EXPECT_EQ(loaded.estimate(i, j), product.estimate(i, j));
  EXPECT_THROW(pagh::CompressedProduct::load(path, {.max_bytes = 1024}), pagh::MemoryLimitExceeded);
}

TEST(HashTables, SizesThatOverflowAreRefused) {
  const std::int64_t huge = std::int64_t{1} << 62;
  EXPECT_THROW(pagh::draw_hash_tables(1, 4, huge, huge, 16), pagh::Error);
  EXPECT_THROW(pagh::draw_hash_tables(1, 8, huge, 0, 16), pagh::Error);
  EXPECT_THROW(pagh::draw_hash_tables(1, 1, std::numeric_limits<std::int64_t>::max(), 1, 16), pagh::Error);
  EXPECT_NO_THROW(pagh::draw_hash_tables(1, 2, 3, 4, 16));
}

// compress() plans its memory from the shapes before allocating: a limit below the plan throws
// MemoryLimitExceeded (and says how much it needed), a limit above it changes nothing.
TEST(CompressMemoryPlan, RefusesAPlanAboveTheLimitAndNothingElse) {
  Eigen::MatrixXd A = Eigen::MatrixXd::Random(64, 96), B = Eigen::MatrixXd::Random(96, 80);
  pagh::SketchParams params{.buckets = std::int64_t{1} << 24, .repetitions = 8};
  params.max_memory_bytes = std::uint64_t{1} << 30;
  try {
    (void)pagh::compress(A, B, params);
    ADD_FAILURE() << "a 2^24 x 8 sketch fit in 1 GiB";
  } catch (const pagh::MemoryLimitExceeded& e) {
    EXPECT_GT(e.needed_bytes(), std::uint64_t{1} << 30);
    EXPECT_EQ(e.limit_bytes(), std::uint64_t{1} << 30);
  }
  pagh::SketchParams small{.buckets = 1024, .repetitions = 3};
  const auto unlimited = pagh::compress(A, B, small);
  small.max_memory_bytes = std::uint64_t{1} << 30;
  const auto limited = pagh::compress(A, B, small);
  EXPECT_EQ(unlimited.frobenius_estimate(), limited.frobenius_estimate());
  small.max_memory_bytes = 1000;  // less than the sketch itself
  EXPECT_THROW(pagh::compress(A, B, small), pagh::MemoryLimitExceeded);
  const Eigen::SparseMatrix<double> As = A.sparseView(), Bs = B.sparseView();
  EXPECT_THROW(pagh::compress(As, Bs, small), pagh::MemoryLimitExceeded);
}

}  // namespace
