// mtx-dump FILE: prints what the reader parsed, for scipy_conformance.py to compare with
// scipy.io.mmread. Output: "header FORMAT FIELD SYMMETRY ROWS COLS", "stored N" (entries of the
// assembled sparse matrix), then the dense matrix row by row in round-trip precision.
// On a read error: "error LINE REASON" and exit status 1.
#include <cstdio>

#include "matrix_io/read.hpp"

int main(int argc, char** argv) {
  namespace mio = pagh::matrix_io;
  if (argc != 2) {
    std::fprintf(stderr, "usage: mtx-dump FILE\n");
    return 2;
  }
  try {
    const mio::Header header = mio::read_header(argv[1]);
    const auto sparse = mio::read_sparse<double>(argv[1]);
    const Eigen::MatrixXd dense = mio::read_dense<double>(argv[1]);
    std::printf("header %s %s %s %lld %lld\nstored %lld\n", mio::to_string(header.format).data(),
                mio::to_string(header.field).data(), mio::to_string(header.symmetry).data(),
                static_cast<long long>(header.rows), static_cast<long long>(header.cols),
                static_cast<long long>(sparse.nonZeros()));
    for (Eigen::Index i = 0; i < dense.rows(); ++i) {
      for (Eigen::Index j = 0; j < dense.cols(); ++j) std::printf(j ? " %.17g" : "%.17g", dense(i, j));
      std::printf("\n");
    }
    return 0;
  } catch (const mio::MatrixMarketError& e) {
    std::printf("error %lld %s\n", static_cast<long long>(e.line()), e.reason().c_str());
    return 1;
  }
}
