// Factory of the CPU backend's plans.
#pragma once

#include <memory>

#include "fwht/plan.hpp"

namespace fwht::cpu {

// shape is validated and normalized (distance != 0) by fwht::Plan.
std::unique_ptr<PlanImpl> make_cpu_plan(const Shape& shape, DType dtype, const Options& options);

}  // namespace fwht::cpu
