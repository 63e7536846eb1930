// Shared helpers of the fwht tests: a per-run random seed (printed on failure, fixed with
// PAGH_TEST_SEED), random inputs per dtype, and element conversions.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "fwht/fwht.hpp"

namespace fwht::test {

inline std::uint64_t run_seed() {
  static const std::uint64_t seed = []() -> std::uint64_t {
    if (const char* s = std::getenv("PAGH_TEST_SEED")) return std::strtoull(s, nullptr, 10);
    return (static_cast<std::uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
  }();
  return seed;
}

// A generator seeded from the run seed and the current test's name; the trace line names the seed.
inline std::mt19937_64 test_rng() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string name = std::string(info->test_suite_name()) + "." + info->name();
  return std::mt19937_64(run_seed() ^ std::hash<std::string>{}(name));
}
#define FWHT_TRACE_SEED() \
  SCOPED_TRACE("random seed " + std::to_string(::fwht::test::run_seed()) + " (rerun with PAGH_TEST_SEED=<seed>)")

template <class T> double to_double(T v) { return static_cast<double>(v); }
template <> inline double to_double<f16>(f16 v) { return static_cast<float>(v); }
template <> inline double to_double<bf16>(bf16 v) { return static_cast<float>(v); }

template <class T> T from_double(double v) {
  if constexpr (std::is_same_v<T, f16> || std::is_same_v<T, bf16>)
    return T(static_cast<float>(v));
  else
    return static_cast<T>(v);
}

// Floating types: N(0,1); integers: uniform in [-100, 100] (no overflow up to n = 2^24 in int32).
template <class T>
std::vector<T> random_vector(std::size_t n, std::mt19937_64& rng) {
  std::vector<T> v(n);
  if constexpr (std::is_integral_v<T>) {
    std::uniform_int_distribution<int> d(-100, 100);
    for (auto& x : v) x = static_cast<T>(d(rng));
  } else {
    std::normal_distribution<double> d(0.0, 1.0);
    for (auto& x : v) x = from_double<T>(d(rng));
  }
  return v;
}

// Index of the first element whose bits differ, or -1.
template <class T>
std::int64_t first_bit_difference(std::span<const T> a, std::span<const T> b) {
  if (a.size() != b.size()) return 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(&a[i], &b[i], sizeof(T)) != 0) return static_cast<std::int64_t>(i);
  return -1;
}

// Every option combination that makes sense for T (integers: with and, if asked, without
// check_overflow, which the CUDA backend does not support).
template <class T>
std::vector<Options> all_options(bool with_checked_integers = true) {
  std::vector<Options> out;
  const bool sixteen = std::is_same_v<T, f16> || std::is_same_v<T, bf16>;
  for (Normalization norm : {Normalization::none, Normalization::orthonormal, Normalization::inverse}) {
    if constexpr (std::is_integral_v<T>) {
      if (norm == Normalization::orthonormal) continue;
      for (Algorithm a : {Algorithm::folklore, Algorithm::alman_rao})
        for (bool checked : {false, true})
          if (!checked || with_checked_integers) out.push_back({.normalization = norm, .algorithm = a, .check_overflow = checked});
    } else {
      for (Compute c : {Compute::f32, Compute::storage}) {
        if (!sixteen && c == Compute::storage) continue;
        for (Stabilization s : {Stabilization::none, Stabilization::kahan, Stabilization::neumaier})
          out.push_back({.normalization = norm, .stabilization = s, .compute = c});
        if (!std::is_same_v<T, double>)  // f64 has no wider type on chip
          for (Stabilization s : {Stabilization::wide_onchip, Stabilization::wide_carry})
            out.push_back({.normalization = norm, .stabilization = s, .compute = c});
        out.push_back({.normalization = norm, .algorithm = Algorithm::alman_rao, .compute = c});
      }
    }
  }
  return out;
}

inline std::string describe(const Options& o) {
  return "stabilization=" + std::string(to_string(o.stabilization)) + " algorithm=" + std::string(to_string(o.algorithm)) +
         " normalization=" + std::string(to_string(o.normalization)) + " compute=" + std::string(to_string(o.compute)) +
         " threads=" + std::to_string(o.threads);
}

}  // namespace fwht::test
