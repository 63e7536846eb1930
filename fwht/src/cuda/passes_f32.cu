// Pass kernels for f32 (compute in float).
#include "cuda/fast_launch.cuh"
#include "cuda/tile_pass.cuh"

namespace fwht::cuda {
FWHT_INSTANTIATE_PASS(NativeTraits<float>)
FWHT_INSTANTIATE_FAST(NativeTraits<float>)

cudaError_t probe_kernel_image() {
  cudaFuncAttributes attributes{};
  return cudaFuncGetAttributes(&attributes, tile_pass<NativeTraits<float>, Stabilization::none, Algorithm::folklore, true, true>);
}
}
