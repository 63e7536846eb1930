// Pass kernels for f16: compute in float (Compute::f32) or rounded to binary16 (Compute::storage).
#include "cuda/fast_launch.cuh"
#include "cuda/tile_pass.cuh"

namespace fwht::cuda {
FWHT_INSTANTIATE_PASS(Sixteen32Traits<HalfFormat>)
FWHT_INSTANTIATE_FAST(Sixteen32Traits<HalfFormat>)
FWHT_INSTANTIATE_PASS(SixteenStorageTraits<HalfFormat>)
FWHT_INSTANTIATE_FAST(SixteenStorageTraits<HalfFormat>)
FWHT_INSTANTIATE_FAST(SixteenPairTraits<HalfFormat>)  // storage precision, two elements per word
}
