// The CUDA backend's entry points, called by fwht/src/plan.cpp (no CUDA headers here).
//
// Supported: every dtype, normalization, stabilization and algorithm of the CPU core, with results
// bit-identical to it, except integer transforms with Options::check_overflow, which the factory
// rejects with pagh::Error (exact checked arithmetic would need 128-bit intermediates between passes
// and a host synchronization in execute to report an overflow; use the CPU backend for them).
#pragma once

#include <memory>
#include <string>

#include "fwht/plan.hpp"

namespace fwht::cuda {

// Shape as normalized by Plan (distance != 0). Throws pagh::Error for unsupported options or when
// the device cannot hold the plan's workspace.
std::unique_ptr<PlanImpl> make_cuda_plan(const Shape& shape, DType dtype, const Options& options);

// True when a CUDA device is present and this build's kernels run on it; otherwise fills `why`.
bool device_usable(std::string* why);

}  // namespace fwht::cuda
