// matrix_io's writer against every kind of target of the output rule (pagh/output_file.hpp): a
// regular file and a new path (atomic replace), a symbolic link (its target replaced, the link
// kept), a FIFO and a character device (written directly, never renamed over), a device that
// fails (the error thrown, nothing left behind), a directory and a missing directory (refused).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../special_files.hpp"
#include "matrix_io/read.hpp"
#include "matrix_io/write.hpp"

namespace {

namespace fs = std::filesystem;
namespace mio = pagh::matrix_io;

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class WriteTargets : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("matrix_io_targets_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    matrix_ = Eigen::MatrixXd(2, 3);
    matrix_ << 1, 2, 3, 4, 5, 6;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Every name in the directory, hidden ones included (a leftover temporary shows here).
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
  std::string expected_text() const {
    std::ostringstream text;
    mio::write_matrix_market(text, matrix_);
    return text.str();
  }

  fs::path dir_;
  Eigen::MatrixXd matrix_;
};

TEST_F(WriteTargets, RegularFileIsReplacedAndKeepsItsPermissions) {
  const fs::path file = dir_ / "m.mtx";
  { std::ofstream(file) << "old contents\n"; }
  ::chmod(file.c_str(), 0600);
  mio::write_matrix_market(file, matrix_);
  EXPECT_EQ(slurp(file), expected_text());
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(names(), std::vector<std::string>{"m.mtx"});
}

TEST_F(WriteTargets, SymbolicLinkKeepsTheLinkAndReplacesItsTarget) {
  fs::create_directories(dir_ / "real");
  const fs::path target = dir_ / "real" / "m.mtx", link = dir_ / "link.mtx";
  { std::ofstream(target) << "old contents\n"; }
  fs::create_symlink("real/m.mtx", link);  // relative, resolved against the link's directory
  mio::write_matrix_market(link, matrix_);
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(fs::read_symlink(link), fs::path("real/m.mtx"));
  EXPECT_EQ(slurp(target), expected_text());
  EXPECT_EQ(names(), (std::vector<std::string>{"link.mtx", "real"}));
  std::vector<std::string> real;
  for (const auto& e : fs::directory_iterator(dir_ / "real")) real.push_back(e.path().filename().string());
  EXPECT_EQ(real, std::vector<std::string>{"m.mtx"});  // no temporary left beside the target

  // A dangling link: its target is created, the link stays.
  const fs::path dangling = dir_ / "dangling.mtx";
  fs::create_symlink("real/new.mtx", dangling);
  mio::write_matrix_market(dangling, matrix_);
  EXPECT_TRUE(fs::is_symlink(dangling));
  EXPECT_EQ(slurp(dir_ / "real" / "new.mtx"), expected_text());
}

TEST_F(WriteTargets, FifoIsWrittenDirectly) {
  const fs::path fifo = dir_ / "pipe.mtx";
  pagh_test::FifoReader reader(fifo);
  ASSERT_EQ(reader.error(), "");
  mio::write_matrix_market(fifo, matrix_);
  EXPECT_EQ(reader.bytes(), expected_text());
  EXPECT_TRUE(pagh_test::is_fifo(fifo));
  EXPECT_EQ(names(), std::vector<std::string>{"pipe.mtx"});
}

TEST_F(WriteTargets, CharacterDeviceIsWrittenDirectly) {
  const fs::path twin = dir_ / "null";
  const std::string why = pagh_test::make_null_twin(twin);
  if (!why.empty()) GTEST_SKIP() << why;
  mio::write_matrix_market(twin, matrix_);
  EXPECT_TRUE(pagh_test::is_character_device(twin));
  EXPECT_EQ(names(), std::vector<std::string>{"null"});
  // Through a symbolic link too: the device stays a device.
  fs::create_symlink("null", dir_ / "to-null");
  mio::write_matrix_market(dir_ / "to-null", matrix_);
  EXPECT_TRUE(pagh_test::is_character_device(twin));
  EXPECT_TRUE(fs::is_symlink(dir_ / "to-null"));
}

TEST_F(WriteTargets, FailingDeviceThrowsAndLeavesNothing) {
  const fs::path twin = dir_ / "full";
  const std::string why = pagh_test::make_full_twin(twin);
  if (!why.empty()) GTEST_SKIP() << why;
  try {
    mio::write_matrix_market(twin, matrix_);
    FAIL() << "writing into a full device succeeded";
  } catch (const mio::MatrixMarketError& e) {
    EXPECT_EQ(e.file(), twin.string());
    EXPECT_EQ(e.line(), 0);
    EXPECT_NE(e.reason().find("cannot write"), std::string::npos) << e.reason();
    EXPECT_NE(e.reason().find("No space left on device"), std::string::npos) << e.reason();
  }
  EXPECT_TRUE(pagh_test::is_character_device(twin));
  EXPECT_EQ(names(), std::vector<std::string>{"full"});
}

TEST_F(WriteTargets, DirectoryAndMissingDirectoryAreRefused) {
  fs::create_directories(dir_ / "d");
  for (const fs::path& path : {dir_ / "d", dir_ / "missing" / "m.mtx"}) {
    try {
      mio::write_matrix_market(path, matrix_);
      FAIL() << path << " was accepted";
    } catch (const mio::MatrixMarketError& e) {
      EXPECT_EQ(e.reason().rfind("cannot create", 0), 0u) << e.reason();
    }
  }
  EXPECT_TRUE(fs::is_directory(dir_ / "d"));
  EXPECT_TRUE(fs::is_empty(dir_ / "d"));
  EXPECT_EQ(names(), std::vector<std::string>{"d"});
}

}  // namespace
