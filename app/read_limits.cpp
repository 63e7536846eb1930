#include "read_limits.hpp"

#include <algorithm>
#include <cstdint>
#include <string_view>

#include "resource_plan.hpp"

namespace pagh_mm {

pagh::matrix_io::ReadOptions input_read_options() {
  pagh::matrix_io::ReadOptions options;
  options.max_result_bytes = static_cast<std::size_t>(std::min<std::uint64_t>(available_memory().bytes, SIZE_MAX));
  return options;
}

std::string without_reader_api_names(std::string message) {
  // "... needs N bytes, more than ReadOptions::max_result_bytes = M": M is the memory available.
  constexpr std::string_view limit = "more than ReadOptions::max_result_bytes = ";
  if (const auto at = message.find(limit); at != std::string::npos) {
    const auto digits_end = message.find_first_not_of("0123456789", at + limit.size());
    const std::string bytes = message.substr(at + limit.size(), digits_end - at - limit.size());
    message.replace(at, (digits_end == std::string::npos ? message.size() : digits_end) - at,
                    "more than the " + gigabytes(std::stod(bytes.empty() ? "0" : bytes)) + " of memory available");
  }
  // pagh-mm reads with 32-bit sparse indices; a user cannot choose 64-bit ones.
  constexpr std::string_view index_hint = "; read with StorageIndex = std::int64_t";
  if (const auto at = message.find(index_hint); at != std::string::npos) message.erase(at, index_hint.size());
  return message;
}

}  // namespace pagh_mm
