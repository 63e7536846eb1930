// Names of the option values, both ways.
#include <algorithm>
#include <array>
#include <string>
#include <utility>

#include "fwht/options.hpp"
#include "pagh/error.hpp"

namespace fwht {
namespace {

template <class E, std::size_t N>
using NameTable = std::array<std::pair<E, std::string_view>, N>;

constexpr NameTable<DType, 6> kDTypes{{{DType::f64, "f64"}, {DType::f32, "f32"}, {DType::f16, "f16"},
                                       {DType::bf16, "bf16"}, {DType::i32, "i32"}, {DType::i64, "i64"}}};
constexpr NameTable<Normalization, 3> kNormalizations{
    {{Normalization::none, "none"}, {Normalization::orthonormal, "orthonormal"}, {Normalization::inverse, "inverse"}}};
constexpr NameTable<Stabilization, 5> kStabilizations{{{Stabilization::none, "none"},
                                                       {Stabilization::kahan, "kahan"},
                                                       {Stabilization::neumaier, "neumaier"},
                                                       {Stabilization::wide_onchip, "wide_onchip"},
                                                       {Stabilization::wide_carry, "wide_carry"}}};
constexpr NameTable<Algorithm, 2> kAlgorithms{{{Algorithm::folklore, "folklore"}, {Algorithm::alman_rao, "alman_rao"}}};
constexpr NameTable<Compute, 2> kComputes{{{Compute::storage, "storage"}, {Compute::f32, "f32"}}};
constexpr NameTable<Backend, 2> kBackends{{{Backend::cpu, "cpu"}, {Backend::cuda, "cuda"}}};

template <class E, std::size_t N>
std::string_view name_of(const NameTable<E, N>& table, E value) {
  for (const auto& [v, name] : table)
    if (v == value) return name;
  return "?";
}

template <class E, std::size_t N>
E parse(const NameTable<E, N>& table, std::string_view text, const char* what) {
  std::string accepted;
  for (const auto& [v, name] : table) {
    if (name == text) return v;
    accepted += (accepted.empty() ? "" : "|") + std::string(name);
  }
  throw pagh::Error(std::string("fwht: unknown ") + what, "'" + std::string(text) + "' (expected " + accepted + ")");
}

}  // namespace

std::size_t size_of(DType t) {
  switch (t) {
    case DType::f64:
    case DType::i64: return 8;
    case DType::f32:
    case DType::i32: return 4;
    case DType::f16:
    case DType::bf16: return 2;
  }
  return 0;
}

std::string_view to_string(DType v) { return name_of(kDTypes, v); }
std::string_view to_string(Normalization v) { return name_of(kNormalizations, v); }
std::string_view to_string(Stabilization v) { return name_of(kStabilizations, v); }
std::string_view to_string(Algorithm v) { return name_of(kAlgorithms, v); }
std::string_view to_string(Compute v) { return name_of(kComputes, v); }
std::string_view to_string(Backend v) { return name_of(kBackends, v); }

DType parse_dtype(std::string_view s) { return parse(kDTypes, s, "dtype"); }
Normalization parse_normalization(std::string_view s) { return parse(kNormalizations, s, "normalization"); }
Stabilization parse_stabilization(std::string_view s) { return parse(kStabilizations, s, "stabilization"); }
Algorithm parse_algorithm(std::string_view s) { return parse(kAlgorithms, s, "algorithm"); }
Compute parse_compute(std::string_view s) { return parse(kComputes, s, "compute type"); }
Backend parse_backend(std::string_view s) { return parse(kBackends, s, "backend"); }

// Mirrors the CUDA register-tile schedule (fwht/src/cuda/schedule.hpp) restricted to blocks of at
// most 2^13 elements, the largest whose wide values (2 x 32 KiB of shared memory, 64 registers of
// state per thread) leave two blocks per SM: a first pass of up to 13 stages, strided passes of
// 4..9 stages (2^g rows x >= 16 columns in 2^13 elements).
std::vector<int> stage_groups(int log2n) {
  constexpr int kFirst = 13, kLater = 9, kMinLater = 4;
  if (log2n <= kFirst) return {log2n};
  const int rest = log2n - kFirst;
  std::vector<int> later;
  if (rest <= kLater) {
    later.push_back(std::max(kMinLater, rest));
  } else {
    int left = rest;
    const int count = (rest + kLater - 1) / kLater;
    for (int k = count; k > 0; --k) {
      const int g = (left + k - 1) / k;
      later.push_back(g);
      left -= g;
    }
  }
  int first = log2n;
  for (int g : later) first -= g;
  std::vector<int> out{first};
  out.insert(out.end(), later.begin(), later.end());
  return out;
}

}  // namespace fwht
