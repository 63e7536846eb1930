// Programmatic dependent launch between the passes of one plan (Hopper, sm_90): a pass after the
// first is launched with cudaLaunchAttributeProgrammaticStreamSerialization, so its blocks can be
// scheduled while the previous pass's last wave still runs; each of its threads waits
// (griddepcontrol.wait) until the previous pass has completed and its writes are visible, before
// touching device memory. Every pass lets its dependents launch as soon as all its blocks are
// resident (griddepcontrol.launch_dependents). What this saves is the launch gap between passes,
// which matters for transforms of a few MiB, where a pass lasts not much longer than that gap.
// Without the attribute (first passes, Tuning::dependent_launch false) the wait returns at once and
// ordinary stream order applies.
#pragma once

#include <cuda_runtime.h>

namespace fwht::cuda {

template <bool First>
__device__ __forceinline__ void pass_prologue() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  if constexpr (!First) asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// A launch configuration with the dependent-launch attribute when `dependent` (the attribute must
// outlive the launch call: it lives here).
struct PassLaunch {
  cudaLaunchConfig_t config{};
  cudaLaunchAttribute attributes[2]{};
  PassLaunch(dim3 grid, dim3 block, std::size_t smem, cudaStream_t stream, bool dependent) {
    config.gridDim = grid, config.blockDim = block, config.dynamicSmemBytes = smem, config.stream = stream;
    config.attrs = attributes;
    if (dependent) {
      attributes[config.numAttrs].id = cudaLaunchAttributeProgrammaticStreamSerialization;
      attributes[config.numAttrs].val.programmaticStreamSerializationAllowed = 1;
      ++config.numAttrs;
    }
  }
  void cluster(unsigned size) {
    attributes[config.numAttrs].id = cudaLaunchAttributeClusterDimension;
    attributes[config.numAttrs].val.clusterDim.x = size;
    attributes[config.numAttrs].val.clusterDim.y = 1;
    attributes[config.numAttrs].val.clusterDim.z = 1;
    ++config.numAttrs;
  }
};

}  // namespace fwht::cuda
