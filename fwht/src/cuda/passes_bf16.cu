// Pass kernels for bf16: compute in float (Compute::f32) or rounded to bfloat16 (Compute::storage).
#include "cuda/fast_launch.cuh"
#include "cuda/tile_pass.cuh"

namespace fwht::cuda {
FWHT_INSTANTIATE_PASS(Sixteen32Traits<BFloatFormat>)
FWHT_INSTANTIATE_FAST(Sixteen32Traits<BFloatFormat>)
FWHT_INSTANTIATE_PASS(SixteenStorageTraits<BFloatFormat>)
FWHT_INSTANTIATE_FAST(SixteenStorageTraits<BFloatFormat>)
FWHT_INSTANTIATE_FAST(SixteenPairTraits<BFloatFormat>)  // storage precision, two elements per word
}
