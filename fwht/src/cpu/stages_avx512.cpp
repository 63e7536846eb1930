// Stage kernels compiled for AVX-512 (F, DQ, BW, VL; see CMakeLists.txt): 64-byte registers, 32 of
// them; chosen at run time when the CPU and the OS support AVX-512.
#define FWHT_ISA avx512
#define FWHT_VECTOR_BYTES 64
#include "cpu/stages.hpp"

namespace fwht::cpu::avx512 {
FWHT_INSTANTIATE_NATIVE
}  // namespace fwht::cpu::avx512
