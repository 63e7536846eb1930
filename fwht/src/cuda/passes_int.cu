// Pass kernels for i32 and i64 (wrapping unsigned arithmetic).
#include "cuda/fast_launch.cuh"
#include "cuda/tile_pass.cuh"

namespace fwht::cuda {
FWHT_INSTANTIATE_PASS(IntegerTraits<std::int32_t>)
FWHT_INSTANTIATE_FAST(IntegerTraits<std::int32_t>)
FWHT_INSTANTIATE_PASS(IntegerTraits<std::int64_t>)
FWHT_INSTANTIATE_FAST(IntegerTraits<std::int64_t>)
}
