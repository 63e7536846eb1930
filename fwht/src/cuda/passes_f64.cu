// Pass kernels for f64 (compute in double).
#include "cuda/fast_launch.cuh"
#include "cuda/tile_pass.cuh"

namespace fwht::cuda {
FWHT_INSTANTIATE_PASS(NativeTraits<double>)
FWHT_INSTANTIATE_FAST(NativeTraits<double>)
}
