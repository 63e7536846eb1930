#include "npy_output.hpp"

#include <Eigen/Core>

#include <algorithm>
#include <cctype>
#include <string>

#include "matrix_io/npy.hpp"

namespace pagh_mm {

bool is_npy_path(std::string_view path) {
  if (path.size() < 4) return false;
  std::string extension(path.substr(path.size() - 4));
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return extension == ".npy";
}

void write_entries_npy(const std::filesystem::path& path, const std::vector<pagh::matrix_io::Entry>& entries) {
  Eigen::MatrixXd table(static_cast<Eigen::Index>(entries.size()), 3);
  for (std::size_t k = 0; k < entries.size(); ++k) {
    const auto i = static_cast<Eigen::Index>(k);
    table(i, 0) = static_cast<double>(entries[k].row);
    table(i, 1) = static_cast<double>(entries[k].col);
    table(i, 2) = entries[k].value;
  }
  pagh::matrix_io::write_npy(path, table);
}

}  // namespace pagh_mm
