// Host construction of the cluster kernel's scatter lists (cluster_lists.hpp).
#include "compress/paths/cluster_lists.hpp"

#include <array>

namespace pagh::cuda {
namespace {
constexpr std::uint32_t kSlotMask = (1u << 12) - 1;
std::uint32_t swizzle(std::uint32_t e) { return e ^ (((e >> 6) & 7u) << 2); }  // as fused_common.cuh
}  // namespace

bool build_cluster_lists(const std::uint32_t* buckets, const std::int8_t* signs, std::int64_t n, int repetitions,
                         int log_cluster, ClusterLists& out) {
  const int clusters = 1 << log_cluster;
  out.index.clear(), out.code.clear(), out.start.assign(1, 0);
  std::vector<std::int64_t> members;
  for (int t = 0; t < repetitions; ++t) {
    const std::uint32_t* h = buckets + t * n;
    const std::int8_t* s = signs + t * n;
    for (int r = 0; r < clusters; ++r) {
      members.clear();
      for (std::int64_t i = 0; i < n; ++i)
        if (static_cast<int>((h[i] >> 12) & static_cast<std::uint32_t>(clusters - 1)) == r) members.push_back(i);
      for (std::size_t base = 0; base < members.size(); base += 32) {
        std::array<std::uint32_t, 32> slots{};
        for (std::size_t lane = 0; lane < 32; ++lane) {
          if (base + lane >= members.size()) {
            out.index.push_back(~0u), out.code.push_back(0u);
            continue;
          }
          const auto i = members[base + lane];
          const std::uint32_t slot = h[i] & kSlotMask;
          std::uint32_t rank = 0;
          for (std::size_t earlier = 0; earlier < lane; ++earlier) rank += slots[earlier] == slot;
          if (rank > 15) return false;
          slots[lane] = slot;
          out.index.push_back(static_cast<std::uint32_t>(i));
          out.code.push_back(swizzle(slot) | (h[i] & ~kSlotMask & 0x07ffffffu) | (rank << 27) | (s[i] < 0 ? 0x80000000u : 0u));
        }
      }
      out.start.push_back(static_cast<std::int64_t>(out.index.size()));
    }
  }
  return true;
}

}  // namespace pagh::cuda
