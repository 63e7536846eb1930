// main() of fwht_cpu_test: ctest runs the suite three times, with PAGH_FWHT_ISA unset, =avx2 and
// =generic (tests/fwht/CMakeLists.txt), and this caps the library's choice accordingly through its
// typed setting (fwht/cpu_isa.hpp); the library itself reads no environment.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string_view>

#include "fwht/cpu_isa.hpp"

int main(int argc, char** argv) {
  if (const char* isa = std::getenv("PAGH_FWHT_ISA")) {
    const std::string_view name(isa);
    if (name == "generic") fwht::limit_cpu_isa(fwht::CpuIsa::generic);
    else if (name == "avx2") fwht::limit_cpu_isa(fwht::CpuIsa::avx2);
  }
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
