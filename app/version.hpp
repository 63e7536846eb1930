// The version of pagh-mm: the CMake project version and the git commit it was configured from.
#pragma once

namespace pagh_mm {

const char* version_string();  // "0.1.0"
const char* git_commit();      // short hash at configure time, or "unknown"

// The full --version text: version, commit, CUDA runtime and driver, GPUs, backends in this build.
void print_version();

}  // namespace pagh_mm
