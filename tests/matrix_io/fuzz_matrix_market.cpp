// libFuzzer target for the Matrix Market reader (run by run_fuzz.sh; README.md records the results).
// Any input must either read or throw pagh::Error; a crash, a sanitizer report, another exception
// type, or a broken invariant (checked below with abort) is a finding.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string_view>

#include "matrix_io/read.hpp"
#include "matrix_io/write.hpp"

namespace mio = pagh::matrix_io;

namespace {

void require(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "invariant broken: %s\n", what);
    std::abort();
  }
}

bool same_value(double a, double b) { return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof a) == 0; }

// Compressed, rows strictly increasing within each column (sorted, duplicates summed).
template <class Sparse>
void check_canonical(const Sparse& m) {
  require(m.isCompressed(), "sparse result is compressed");
  for (Eigen::Index j = 0; j < m.outerSize(); ++j)
    for (auto k = m.outerIndexPtr()[j] + 1; k < m.outerIndexPtr()[j + 1]; ++k)
      require(m.innerIndexPtr()[k - 1] < m.innerIndexPtr()[k], "rows strictly increase within a column");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  mio::ReadOptions options;
  // Small enough that no accepted input can make the fuzzer exceed its memory limit: the reader must
  // refuse (throw), never allocate, anything larger.
  options.max_result_bytes = std::size_t{16} << 20;
  options.allow_non_finite = size > 0 && (data[size - 1] & 1) != 0;

  Eigen::SparseMatrix<double> sparse;
  bool have_sparse = false;
  try {
    sparse = mio::parse_sparse<double>(text, "fuzz", options);
    have_sparse = true;
    check_canonical(sparse);
  } catch (const mio::MatrixMarketError& e) {
    // Errors name a line of the input (or none).
    const auto lines = static_cast<std::int64_t>(std::count(text.begin(), text.end(), '\n')) + 1;
    require(e.line() >= 0 && e.line() <= lines, "error line lies within the input");
    require(e.file() == "fuzz", "error names the input");
  } catch (const pagh::Error&) {
  }
  // Chunking changes nothing: cut into chunks of 1..16 bytes (chosen by the input), the read gives
  // the one-chunk read's result or error, bit for bit and word for word.
  {
    mio::ReadOptions chunked = options;
    chunked.chunk_bytes = 1 + (size > 1 ? data[size - 2] % 16 : 0);
    const auto describe = [&](const mio::ReadOptions& o) {
      try {
        const auto m = mio::parse_sparse<double>(text, "fuzz", o);
        std::string bytes(reinterpret_cast<const char*>(m.outerIndexPtr()), sizeof(int) * static_cast<std::size_t>(m.cols() + 1));
        bytes.append(reinterpret_cast<const char*>(m.innerIndexPtr()), sizeof(int) * static_cast<std::size_t>(m.nonZeros()));
        bytes.append(reinterpret_cast<const char*>(m.valuePtr()), sizeof(double) * static_cast<std::size_t>(m.nonZeros()));
        return std::to_string(m.rows()) + "x" + std::to_string(m.cols()) + ":" + bytes;
      } catch (const pagh::Error& e) {
        return std::string("error ") + e.what();
      }
    };
    require(describe(chunked) == describe(options), "a chunked read equals the one-chunk read");
  }
  try {
    const Eigen::MatrixXd dense = mio::parse_dense<double>(text, "fuzz", options);
    // Dense and sparse reads add the same values in the same (file) order, so they agree bit for bit
    // (the sparse read may have been refused: dimensions beyond its index type with no entries).
    if (have_sparse) {
      require(dense.rows() == sparse.rows() && dense.cols() == sparse.cols(), "dense and sparse shapes agree");
      const Eigen::MatrixXd from_sparse(sparse);
      for (Eigen::Index j = 0; j < dense.cols(); ++j)
        for (Eigen::Index i = 0; i < dense.rows(); ++i)
          require(same_value(dense(i, j), from_sparse(i, j)) || (dense(i, j) == 0 && from_sparse(i, j) == 0),
                  "dense and sparse values agree");
    }
  } catch (const pagh::Error&) {
  }
  if (have_sparse) {
    // Write -> read gives back exactly the same matrix.
    std::ostringstream out;
    mio::WriteOptions write_options;
    write_options.allow_non_finite = true;
    mio::write_matrix_market(out, sparse, write_options);
    mio::ReadOptions reread_options = options;
    reread_options.allow_non_finite = true;
    const auto again = mio::parse_sparse<double>(out.str(), "fuzz-rewritten", reread_options);
    require(again.rows() == sparse.rows() && again.cols() == sparse.cols() && again.nonZeros() == sparse.nonZeros(),
            "round trip keeps the shape and the stored entries");
    for (Eigen::Index k = 0; k < sparse.nonZeros(); ++k)
      require(again.innerIndexPtr()[k] == sparse.innerIndexPtr()[k] &&
                  same_value(again.valuePtr()[k], sparse.valuePtr()[k]),
              "round trip keeps every value");
  }
  try {
    const auto any = mio::parse_matrix<float, std::int64_t>(text, "fuzz", options);
    if (!any.is_dense()) check_canonical(any.sparse());
  } catch (const pagh::Error&) {
  }
  try {
    mio::parse_header(text, "fuzz");
  } catch (const pagh::Error&) {
  }
  return 0;
}
