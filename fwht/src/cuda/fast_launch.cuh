// Launchers of the register-tile kernels (fast_pass.cuh; cluster_pass.cuh has its own): the one table from (stabilization,
// block_log, first, last) to a kernel instantiation, with an explicit error for anything outside
// it, and the explicit instantiation macro used by passes_*.cu.
#pragma once

#include <string>
#include <type_traits>

#include "cuda/cluster_pass.cuh"
#include "cuda/fast_pass.cuh"
#include "cuda/fused_pass.cuh"

namespace fwht::cuda {

template <class Tr, int Eps, Stabilization St>
void (*pick_fast(bool first, bool last))(FastArgs) {
  if constexpr (kErrorTerms<St>) {
    return first && last ? fast_pass<Tr, Eps, true, true, St> : nullptr;
  } else {
    if (first) return last ? fast_pass<Tr, Eps, true, true, St> : fast_pass<Tr, Eps, true, false, St>;
    return last ? fast_pass<Tr, Eps, false, true, St> : fast_pass<Tr, Eps, false, false, St>;
  }
}

// The kernel of (st, block_log, first, last), or nullptr: stabilized modes for floating 4-byte
// compute types and blocks of 2^12 or 2^13 only.
template <class Tr>
void (*fast_kernel(Stabilization st, int block_log, bool first, bool last))(FastArgs) {
  if constexpr (sizeof(typename Tr::C) == 4) {
    if (st == Stabilization::none) {
      switch (block_log) {
        case 12: return pick_fast<Tr, 4, Stabilization::none>(first, last);
        case 13: return pick_fast<Tr, 5, Stabilization::none>(first, last);
        case 14: return pick_fast<Tr, 6, Stabilization::none>(first, last);
        default: return nullptr;
      }
    }
    if constexpr (!Tr::kInteger && !Tr::kPairs) {  // paired 16-bit words: plain only
      const auto by_block = [&]<Stabilization St>() -> void (*)(FastArgs) {
        if (block_log == 12) return pick_fast<Tr, 4, St>(first, last);
        if (block_log == 13) return pick_fast<Tr, 5, St>(first, last);
        return nullptr;
      };
      switch (st) {
        case Stabilization::kahan: return by_block.template operator()<Stabilization::kahan>();
        case Stabilization::neumaier: return by_block.template operator()<Stabilization::neumaier>();
        case Stabilization::wide_onchip: return by_block.template operator()<Stabilization::wide_onchip>();
        case Stabilization::wide_carry: return by_block.template operator()<Stabilization::wide_carry>();
        default: return nullptr;
      }
    }
  }
  return nullptr;
}

template <class Tr>
void launch_fast(const FastArgs& args, Stabilization st, int block_log, bool first, bool last, std::int64_t blocks,
                 cudaStream_t stream, bool configure_only) {
  constexpr const char* kWhere = "fwht::Plan::execute (cuda)";
  void (*kernel)(FastArgs) = fast_kernel<Tr>(st, block_log, first, last);
  if (kernel == nullptr)
    throw pagh::Error(kWhere, "no fast pass kernel for stabilization " + std::string(to_string(st)) + ", block_log " +
                                  std::to_string(block_log) + (first ? " first" : "") + (last ? " last" : ""));
  const std::size_t smem = fast_shared_bytes(block_log, st, std::is_same_v<typename Tr::C, float>, fast_padded(block_log, first && last));
  if (configure_only) {
    PAGH_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)),
                    "fwht::Plan (cuda)");
    return;
  }
  if (blocks > 0x7fffffff) throw pagh::Error(kWhere, "pass needs more than 2^31-1 blocks");
  PassLaunch launch(dim3(static_cast<unsigned>(blocks)), dim3(kFastThreads), smem, stream, args.dependent);
  PAGH_CUDA_CHECK(cudaLaunchKernelEx(&launch.config, kernel, args), kWhere);
}

template <class Tr>
void launch_fused(const FusedArgs& args, Stabilization st, int block_log, bool last, std::int64_t blocks,
                  cudaStream_t stream, bool configure_only, int* blocks_per_sm) {
  constexpr const char* kWhere = "fwht::Plan::execute (cuda)";
  void (*kernel)(FusedArgs) = nullptr;
  if constexpr (sizeof(typename Tr::C) == 4) {
    if (st == Stabilization::none) {
      if (block_log == 12) kernel = last ? fused_pass<Tr, 4, true, Stabilization::none> : fused_pass<Tr, 4, false, Stabilization::none>;
      if (block_log == 13) kernel = last ? fused_pass<Tr, 5, true, Stabilization::none> : fused_pass<Tr, 5, false, Stabilization::none>;
    }
    if constexpr (!Tr::kInteger && !Tr::kPairs) {
      constexpr Stabilization kW = Stabilization::wide_onchip;  // wide_carry is never fused (make_fused)
      if (st == kW && block_log == 12) kernel = last ? fused_pass<Tr, 4, true, kW> : fused_pass<Tr, 4, false, kW>;
      if (st == kW && block_log == 13) kernel = last ? fused_pass<Tr, 5, true, kW> : fused_pass<Tr, 5, false, kW>;
    }
  }
  if (kernel == nullptr) throw pagh::Error(kWhere, "no fused pass kernel for block_log " + std::to_string(block_log));
  const std::size_t smem = fast_shared_bytes(block_log, st, std::is_same_v<typename Tr::C, float>, fast_padded(block_log, false));
  if (configure_only) {
    PAGH_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)),
                    "fwht::Plan (cuda)");
    if (blocks_per_sm)
      PAGH_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, kernel, kFastThreads, smem),
                      "fwht::Plan (cuda)");
    return;
  }
  kernel<<<static_cast<unsigned>(blocks), kFastThreads, smem, stream>>>(args);
  PAGH_CUDA_CHECK(cudaGetLastError(), kWhere);
}

}  // namespace fwht::cuda

#define FWHT_INSTANTIATE_FAST(...)                                                                                   \
  template void launch_fast<__VA_ARGS__>(const FastArgs&, Stabilization, int, bool, bool, std::int64_t, cudaStream_t, \
                                         bool);                                                                       \
  template void launch_fused<__VA_ARGS__>(const FusedArgs&, Stabilization, int, bool, std::int64_t, cudaStream_t, bool, \
                                          int*);                                                                    \
  template void launch_cluster<__VA_ARGS__>(const FastArgs&, int, bool, bool, std::int64_t, cudaStream_t, bool);
