#include "tuning_from_env.hpp"

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

#include "pagh/error.hpp"

namespace pagh::bench {
namespace {

constexpr const char* kWhere = "benchmark environment";

std::optional<long long> number(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr) return std::nullopt;
  char* end = nullptr;
  const long long v = std::strtoll(text, &end, 10);
  if (end == text || *end != '\0') throw Error(kWhere, std::string(name) + "=" + text + " is not an integer");
  return v;
}
std::optional<int> integer(const char* name) {
  const auto v = number(name);
  if (!v) return std::nullopt;
  return static_cast<int>(*v);
}
std::optional<bool> flag(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr) return std::nullopt;
  const std::string s = text;
  if (s != "0" && s != "1") throw Error(kWhere, std::string(name) + "=" + s + " must be 0 or 1");
  return s == "1";
}

// The variables and the fields they set, in the order of fwht/tuning.hpp.
using FwhtFlag = std::optional<bool> fwht::Tuning::*;
using FwhtInteger = std::optional<int> fwht::Tuning::*;
constexpr std::pair<const char*, FwhtFlag> kFwhtFlags[] = {
    {"PAGH_FWHT_CUDA_FAST", &fwht::Tuning::register_tile},       {"PAGH_FWHT_CUDA_PAIRS", &fwht::Tuning::paired_words},
    {"PAGH_FWHT_CUDA_SLOW_MEMORY", &fwht::Tuning::slow_memory},  {"PAGH_FWHT_CUDA_FUSE", &fwht::Tuning::fuse},
    {"PAGH_FWHT_CUDA_FUSE_HINTS", &fwht::Tuning::fuse_hints},    {"PAGH_FWHT_CUDA_PDL", &fwht::Tuning::dependent_launch},
};
constexpr std::pair<const char*, FwhtInteger> kFwhtIntegers[] = {
    {"PAGH_FWHT_CUDA_FAST_SINGLE", &fwht::Tuning::single_block_log},
    {"PAGH_FWHT_CUDA_FAST_FIRST", &fwht::Tuning::first_pass_stages},
    {"PAGH_FWHT_CUDA_CLUSTER", &fwht::Tuning::max_cluster_log},
    {"PAGH_FWHT_CUDA_CLUSTER_FIRST", &fwht::Tuning::cluster_first},
    {"PAGH_FWHT_CUDA_CLUSTER_W", &fwht::Tuning::cluster_column_log},
    {"PAGH_FWHT_CUDA_FUSE_MB", &fwht::Tuning::fuse_strip_mib},
    {"PAGH_FWHT_CUDA_FUSE_LAG", &fwht::Tuning::fuse_lag},
    {"PAGH_FWHT_CUDA_FAST_STAGE", &fwht::Tuning::stage_mode},
};

}  // namespace

fwht::Tuning fwht_tuning_from_env() {
  fwht::Tuning t;
  for (const auto& [name, field] : kFwhtFlags) t.*field = flag(name);
  for (const auto& [name, field] : kFwhtIntegers) t.*field = integer(name);
  if (const char* tile = std::getenv("PAGH_FWHT_CUDA_TILE")) {
    int b = 0, w = 0;
    char tail = 0;
    if (std::sscanf(tile, "%d,%d%c", &b, &w, &tail) != 2)
      throw Error(kWhere, std::string("PAGH_FWHT_CUDA_TILE=") + tile + " must be B,W (two integers)");
    t.tile_block_log = b, t.tile_column_log = w;
  }
  return t;
}

pagh::cuda::PathTuning path_tuning_from_env() {
  pagh::cuda::PathTuning t;
  t.wide = flag("PAGH_SKETCH_WIDE");
  t.cluster_log = integer("PAGH_SKETCH_CLUSTER");
  t.wide_staged_lines = flag("PAGH_SKETCH_WIDE_GATHER");
  t.wide_piece = number("PAGH_SKETCH_WIDE_PIECE");
  t.tensor_cores = flag("PAGH_SKETCH_TENSOR");
  return t;
}

}  // namespace pagh::bench
