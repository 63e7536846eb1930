// Stage kernels compiled with -mavx2 -mfma (see CMakeLists.txt); chosen at run time when the CPU has
// AVX2 and FMA (every AVX2 core of Intel and AMD has both).
#define FWHT_ISA avx2
#define FWHT_VECTOR_BYTES 32
#define FWHT_FMA 1
#include "cpu/stages.hpp"

namespace fwht::cpu::avx2 {
FWHT_INSTANTIATE_NATIVE
}  // namespace fwht::cpu::avx2
