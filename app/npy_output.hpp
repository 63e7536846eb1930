// -o FILE.npy: results as NumPy arrays (matrix_io/npy.hpp), chosen by the name's extension, since an
// output, unlike an input, has no first bytes to tell its format by.
#pragma once

#include <filesystem>
#include <string_view>
#include <vector>

#include "matrix_io/npy.hpp"
#include "matrix_io/write.hpp"

namespace pagh_mm {

// Whether -o names a .npy file (case-insensitive extension).
bool is_npy_path(std::string_view path);

// The entries as a K x 3 float64 array of (row, column, value) with 0-based indices, as NumPy
// indexes (exact for indices below 2^53). Throws MatrixMarketError like the other writers.
void write_entries_npy(const std::filesystem::path& path, const std::vector<pagh::matrix_io::Entry>& entries);

}  // namespace pagh_mm
