// The general path of the CUDA sketch (path_choice.hpp): for each repetition and batch of k, the
// pairs' vectors are scattered (general_sketch.cu), rounded to 16 bits where that is the storage,
// transformed by an fwht plan, and their products added to the repetition's spectrum in k order.
// Any input (dense or sparse, f32 or f64 values) and any SketchParams.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <optional>

#include "device_memory.hpp"
#include "hashing/device_tables.hpp"
#include "compress/paths/kernels.hpp"
#include "fwht/plan.hpp"
#include "sketch/params.hpp"

namespace pagh::cuda {

class GeneralPath {
 public:
  // acc_bytes: the spectrum's accumulation type (4 = float, 8 = double). Allocates the vectors of
  // one batch (about 256 MiB) and the forward plan, which validates the FWHT options with the CPU
  // engine's message.
  GeneralPath(const DeviceTables& tables, std::int64_t K, const SketchParams& params, int acc_bytes);
  // Lines [0, count) of the chunk into spectrum (d * b values of the accumulation type).
  void add(const Lines& a, const Lines& b, std::int64_t count, const DeviceTables& tables, char* spectrum, cudaStream_t stream);

 private:
  std::int64_t b_;
  int d_, acc_bytes_;
  fwht::DType precision_;
  std::int64_t pairs_per_batch_ = 1;
  DeviceArray<char> vectors_, scratch_;
  std::optional<fwht::Plan> forward_;
};

}  // namespace pagh::cuda
