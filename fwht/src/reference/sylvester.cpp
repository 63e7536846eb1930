// Dense O(n^2) product with the Sylvester-Hadamard matrix: (Hx)_f = sum_i (-1)^popcount(f & i) x_i.
// It shares no code with the fast algorithms, which is what makes it a useful oracle.
#include <bit>
#include <limits>
#include <string>

#include "fwht/reference.hpp"
#include "pagh/error.hpp"

namespace fwht::reference {
namespace {

constexpr const char* kWhere = "fwht::reference::sylvester";

template <class T>
void check_sizes(std::span<const T> in, std::span<T> out) {
  const auto n = static_cast<std::int64_t>(in.size());
  if (!is_power_of_two(n)) throw pagh::Error(kWhere, "n = " + std::to_string(n) + " is not a power of two");
  if (n > kSylvesterMaxN) throw pagh::Error(kWhere, "n = " + std::to_string(n) + " exceeds 4096 (O(n^2) oracle)");
  if (out.size() != in.size()) throw pagh::Error(kWhere, "output size differs from input size");
}

bool negative(std::size_t f, std::size_t i) { return (std::popcount(f & i) & 1) != 0; }

}  // namespace

void sylvester(std::span<const double> in, std::span<double> out) {
  check_sizes(in, out);
  for (std::size_t f = 0; f < in.size(); ++f) {
    long double sum = 0.0L;
    for (std::size_t i = 0; i < in.size(); ++i) sum += negative(f, i) ? -static_cast<long double>(in[i]) : in[i];
    out[f] = static_cast<double>(sum);
  }
}

void sylvester(std::span<const std::int64_t> in, std::span<std::int64_t> out) {
  check_sizes(in, out);
  for (std::size_t f = 0; f < in.size(); ++f) {
    __int128 sum = 0;
    for (std::size_t i = 0; i < in.size(); ++i) sum += negative(f, i) ? -static_cast<__int128>(in[i]) : in[i];
    if (sum < std::numeric_limits<std::int64_t>::min() || sum > std::numeric_limits<std::int64_t>::max())
      throw pagh::Error(kWhere, "result " + std::to_string(f) + " does not fit in int64");
    out[f] = static_cast<std::int64_t>(sum);
  }
}

}  // namespace fwht::reference
