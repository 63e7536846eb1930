// gzip-compressed input, recognised by its magic bytes: it reads exactly like the text it holds
// (from a file or from memory, in one block or many, one gzip member or several), and every damaged
// stream (truncated, not gzip after the magic, wrong checksum or length, trailing bytes) is an
// error naming the file, with no result.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "matrix_io/read.hpp"

namespace mio = pagh::matrix_io;

namespace {

// gzip framing (windowBits 16 + 15), as the gzip tool writes it.
std::string gzip(const std::string& text, int level = 6) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, level, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, text.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

std::string file_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::filesystem::path scratch_file(const std::string& name) {
  return std::filesystem::temp_directory_path() / ("matrix_io_gzip_" + std::to_string(::getpid()) + "_" + name);
}

// The result of every read of a file, as text (dense values at full precision), or the error.
std::string summary(const std::filesystem::path& path) {
  std::ostringstream out;
  out.precision(17);
  try {
    const mio::Header h = mio::read_header(path);
    out << h.rows << "x" << h.cols << " " << h.stored_entries << "\n";
    const auto sparse = mio::read_sparse<double>(path);
    out << "nnz " << sparse.nonZeros() << "\n" << Eigen::MatrixXd(sparse) << "\n";
    out << mio::read_dense<float>(path) << "\n";
    const auto any = mio::read_matrix<double>(path);
    out << (any.is_dense() ? "dense" : "sparse") << "\n";
  } catch (const mio::MatrixMarketError& e) {
    out << "error " << e.reason() << " (line " << e.line() << ")";
  }
  return out.str();
}

const std::string kText = "%%MatrixMarket matrix coordinate real general\n% a comment\n2 3 2\n1 1 1.5\n2 3 -4\n";

// The reader's error for compressed bytes in memory, or "" when it reads them.
std::string error_for(const std::string& bytes) {
  try {
    mio::parse_sparse<double>(bytes, "A.mtx.gz");
    return "";
  } catch (const mio::MatrixMarketError& e) {
    EXPECT_EQ(e.line(), 0) << e.what();
    EXPECT_EQ(e.file(), "A.mtx.gz");
    return e.reason();
  }
}

}  // namespace

TEST(MatrixIoGzip, EveryFixtureReadsLikeItsText) {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(MATRIX_IO_FIXTURES)) {
    const std::string text = file_text(entry.path());
    const auto compressed = scratch_file(entry.path().filename().string() + ".gz");
    std::ofstream(compressed, std::ios::binary) << gzip(text);
    EXPECT_EQ(summary(compressed), summary(entry.path())) << entry.path();
    // In memory, and detected by the bytes alone: the name says nothing.
    const auto named_plain = scratch_file(entry.path().filename().string());
    std::filesystem::rename(compressed, named_plain);
    EXPECT_EQ(summary(named_plain), summary(entry.path())) << entry.path();
    std::filesystem::remove(named_plain);
    ++files;
  }
  EXPECT_GE(files, 10);
}

TEST(MatrixIoGzip, ConcatenatedMembersReadAsOneText) {
  const std::string first = "%%MatrixMarket matrix coordinate real general\n2 3 2\n1 1 1.5\n2 ";
  const std::string second = "3 -4\n";
  const auto sparse = mio::parse_sparse<double>(gzip(first) + gzip(second), "two.gz");
  EXPECT_EQ(Eigen::MatrixXd(sparse), Eigen::MatrixXd(mio::parse_sparse<double>(first + second, "plain")));
}

// More decompressed text than one block (GzipBlocks::block_bytes, 32 MiB), so that entries, line
// numbers and errors cross block boundaries; compressed fast.
TEST(MatrixIoGzip, LargeInputSpansBlocks) {
  std::mt19937_64 rng(3);
  const int entries = 1800000;
  std::string text = "%%MatrixMarket matrix coordinate real general\n1000 1000 " + std::to_string(entries) + "\n";
  for (int k = 0; k < entries; ++k)
    text += std::to_string(1 + rng() % 1000) + " " + std::to_string(1 + rng() % 1000) + " 0.12345678" +
            std::to_string(rng() % 1000) + "\n";
  ASSERT_GT(text.size(), std::size_t{36} << 20);
  const std::string compressed = gzip(text, 1);
  mio::ReadOptions options;
  options.threads = 2;
  EXPECT_EQ(Eigen::MatrixXd(mio::parse_sparse<double>(compressed, "big.gz", options)),
            Eigen::MatrixXd(mio::parse_sparse<double>(text, "big", options)));
  // A bad value in the second block: the same line as in the text.
  std::string bad = text;
  const std::size_t at = bad.rfind("\n", bad.size() - 2);
  bad.replace(at + 1, bad.size() - at - 1, "1 1 x\n");
  const auto line_of = [&](const std::string& bytes) {
    try {
      mio::parse_sparse<double>(bytes, "big", options);
    } catch (const mio::MatrixMarketError& e) {
      return e.line();
    }
    return std::int64_t{-1};
  };
  EXPECT_EQ(line_of(bad), entries + 2);
  EXPECT_EQ(line_of(gzip(bad, 1)), entries + 2);
}

TEST(MatrixIoGzip, TruncatedStreamsAreErrors) {
  const std::string compressed = gzip(kText);
  for (std::size_t keep = 2; keep < compressed.size(); ++keep) {
    const std::string reason = error_for(compressed.substr(0, keep));
    EXPECT_TRUE(reason.starts_with("truncated gzip data") || reason.starts_with("corrupt gzip data"))
        << "kept " << keep << " of " << compressed.size() << " bytes: '" << reason << "'";
  }
  EXPECT_EQ(error_for(compressed.substr(0, compressed.size() - 1)), "truncated gzip data: the compressed stream ends early");
}

TEST(MatrixIoGzip, DamagedStreamsAreErrors) {
  const std::string compressed = gzip(kText);
  // The magic number, then no gzip header (method byte not 8).
  EXPECT_TRUE(error_for(std::string("\x1f\x8b\x07\x00garbage that is not deflate", 31)).starts_with("corrupt gzip data"));
  // The trailer: CRC-32 of the text (bytes -8..-5), then its length (bytes -4..-1).
  std::string crc = compressed;
  crc[crc.size() - 6] ^= 0x01;
  EXPECT_EQ(error_for(crc), "corrupt gzip data: incorrect data check (the decompressed text does not match the checksum)");
  std::string length = compressed;
  length[length.size() - 2] ^= 0x01;
  EXPECT_EQ(error_for(length), "corrupt gzip data: incorrect length check (the decompressed text does not match the checksum)");
  // Any flipped bit in the compressed data is caught (by zlib's decoder or by the checksum).
  for (std::size_t i = 10; i + 9 < compressed.size(); ++i) {  // not the last byte: its padding bits are unused
    std::string flipped = compressed;
    flipped[i] ^= 0x10;
    EXPECT_TRUE(error_for(flipped).starts_with("corrupt gzip data") || error_for(flipped).starts_with("truncated gzip data"))
        << "byte " << i << ": '" << error_for(flipped) << "'";
  }
  EXPECT_TRUE(error_for(compressed + "trailing").starts_with("corrupt gzip data: 8 bytes that are not a gzip stream"));
}

TEST(MatrixIoGzip, DamagedFileIsAnErrorNamingTheFile) {
  const auto path = scratch_file("damaged.mtx.gz");
  const std::string compressed = gzip(kText);
  std::ofstream(path, std::ios::binary) << compressed.substr(0, compressed.size() / 2);
  try {
    mio::read_matrix<double>(path);
    FAIL() << "a truncated gzip file was read";
  } catch (const mio::MatrixMarketError& e) {
    EXPECT_EQ(std::string(e.what()), path.string() + ": truncated gzip data: the compressed stream ends early");
  }
  std::filesystem::remove(path);
}

// Compressed twice: the decompressed text is itself gzip, which is named as such.
TEST(MatrixIoGzip, DoublyCompressedInputIsNamed) {
  const std::string reason = [] {
    try {
      mio::parse_sparse<double>(gzip(gzip(kText)), "A.mtx.gz.gz");
    } catch (const mio::MatrixMarketError& e) {
      EXPECT_EQ(e.line(), 1);
      return e.reason();
    }
    return std::string("read");
  }();
  EXPECT_TRUE(reason.starts_with("gzip-compressed twice")) << reason;
}
