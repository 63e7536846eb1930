// fwht_bench: the interface between the command-line driver (fwht_bench.cpp) and the per-backend
// timers (fwht_bench_cpu.cpp, fwht_bench_cuda.cu).
#pragma once

#include <cstdint>
#include <string>

#include "fwht/options.hpp"

namespace fwht::bench {

struct Config {
  Backend backend = Backend::cpu;
  DType dtype = DType::f32;
  int log2n = 20;
  std::int64_t batch = 1;
  int threads = 0;  // CPU: 0 = all hardware threads
  Stabilization stabilization = Stabilization::none;
  Algorithm algorithm = Algorithm::folklore;
  Compute compute = Compute::f32;
  int repetitions = 0;  // 0 = choose so that the timed region lasts about 0.3 s
};

struct Result {
  double median_ms = 0;    // median time of one execute of the whole batch
  double gbps = 0;         // (read + write of the data) / median time
  int threads = 0;         // threads actually used (CPU)
  std::string isa;         // CPU kernels used, or the GPU name
  // CUDA only (NaN when not measured): floors measured in the same run.
  int passes = 0;          // passes over device memory the plan uses
  double copy_ms = -1;     // device-to-device copy of the same bytes, times `passes`
  double cufft_ms = -1;    // cuFFT R2C of the same n and batch (f32/f64 only)
};

Result run_cpu(const Config& config);
// Defined in fwht_bench_cuda.cu when the CUDA backend is built; otherwise throws pagh::Error.
Result run_cuda(const Config& config);

}  // namespace fwht::bench
