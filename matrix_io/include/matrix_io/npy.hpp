// NumPy .npy files (https://numpy.org/devdocs/reference/generated/numpy.lib.format.html): 2-D
// float32/float64 arrays, C or Fortran order, little-endian, format versions 1.0, 2.0 and 3.0.
//
//   Eigen::MatrixXd X = pagh::matrix_io::read_npy<double>("X.npy");          // samples x features
//   Eigen::MatrixXd Xt = pagh::matrix_io::read_npy<double>("X.npy", {}, true);  // its transpose
//   pagh::matrix_io::write_npy("C.npy", C);                                    // np.load reads it
//
// The file is mapped into memory, not read into a buffer, and converted once into the Eigen matrix
// (column-major): a Fortran-order array, or a C-order array read transposed, is a straight copy; the
// other two cases are a blocked transpose. Failures throw MatrixMarketError (line 0; the type is
// matrix_io's one error type, whatever the format): unreadable file, not .npy, unsupported dtype
// (only '<f4', '<f8'), not 2-D, truncated or longer than the header says, NaN/inf without
// ReadOptions::allow_non_finite, a result beyond ReadOptions::max_result_bytes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string_view>

#include <Eigen/Core>

#include "matrix_io/read.hpp"

namespace pagh::matrix_io {

struct NpyHeader {
  int item_bytes = 8;          // 4: float32 ('<f4'), 8: float64 ('<f8')
  bool fortran_order = false;  // column-major data (else row-major, NumPy's default)
  std::int64_t rows = 0;
  std::int64_t cols = 0;
};

// Whether bytes start with the .npy magic string ("\x93NUMPY").
bool is_npy(std::string_view bytes);
// Whether the file is a regular file that starts with it (false when it cannot be read, and for
// pipes and devices, whose first bytes would be consumed by looking).
bool is_npy_file(const std::filesystem::path& path);

NpyHeader read_npy_header(const std::filesystem::path& path);

// The array as a rows x cols matrix, or cols x rows when transpose. Uses allow_non_finite,
// max_result_bytes and threads of options.
template <SupportedScalar Scalar>
DenseMatrix<Scalar> read_npy(const std::filesystem::path& path, const ReadOptions& options = {}, bool transpose = false);

// Writes a Fortran-order '<f8' / '<f4' array by the project's output rule (atomically for a
// regular file; see write.hpp). Throws MatrixMarketError on failure.
void write_npy(const std::filesystem::path& path, Eigen::Ref<const Eigen::MatrixXd> matrix);
void write_npy(const std::filesystem::path& path, Eigen::Ref<const Eigen::MatrixXf> matrix);

}  // namespace pagh::matrix_io
