// Pass kernels for f64 (compute in double).
#include "cuda/tile_pass.cuh"

namespace fwht::cuda {
FWHT_INSTANTIATE_PASS(NativeTraits<double>)
}
