// The instruction sets of the CPU kernels. The widest one this build has and the CPU runs is chosen
// when a plan is made; limit_cpu_isa() caps the choice for the whole process (plans made after the
// call), so that the narrower kernels can be run and tested on a wider machine. Results are
// identical on every instruction set (bit for bit).
#pragma once

namespace fwht {

// avx2: AVX2 with FMA (the fused multiply-add computes the in-register stages exactly).
enum class CpuIsa { generic, avx2, avx512 };

void limit_cpu_isa(CpuIsa widest);
// The widest instruction set plans made now use (after the cap and what the CPU runs).
CpuIsa cpu_isa();

}  // namespace fwht
