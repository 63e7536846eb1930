// Stage kernels compiled with -mavx2 (see CMakeLists.txt); chosen at run time when the CPU has AVX2.
#define FWHT_ISA avx2
#define FWHT_VECTOR_BYTES 32
#include "cpu/stages.hpp"

namespace fwht::cpu::avx2 {
FWHT_INSTANTIATE_NATIVE
}  // namespace fwht::cpu::avx2
