// Argument checks shared by the Plan, the one-shot calls and the reference.
#pragma once

#include <cstdint>

#include "fwht/options.hpp"

namespace fwht::detail {

// Throws pagh::Error("<where>: <reason>") if n is not a power of two >= 1 or the options do not
// apply to the dtype (stabilization or orthonormal on integers, stabilization with alman_rao,
// negative threads).
void validate(std::int64_t n, DType dtype, const Options& options, const char* where);

}  // namespace fwht::detail
