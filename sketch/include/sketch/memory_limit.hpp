// What compress() and CompressedProduct::load() throw when the memory their plan needs exceeds the
// limit the caller gave (SketchParams::max_memory_bytes, LoadLimits::max_bytes): a pagh::Error, so
// that code catching Error still sees it, and a type of its own, so that a caller can tell "this
// machine has too little memory" from "this input is wrong". Thrown before anything large is
// allocated. No Eigen here, as in too_many_entries.hpp.
#pragma once

#include <cstdint>
#include <string>

#include "pagh/error.hpp"

namespace pagh {

class MemoryLimitExceeded : public Error {
 public:
  MemoryLimitExceeded(const std::string& where, const std::string& what, std::uint64_t needed_bytes, std::uint64_t limit_bytes)
      : Error(where, what + " needs " + std::to_string(needed_bytes) + " bytes, more than the limit of " +
                         std::to_string(limit_bytes) + " bytes"),
        needed_(needed_bytes), limit_(limit_bytes) {}
  std::uint64_t needed_bytes() const noexcept { return needed_; }
  std::uint64_t limit_bytes() const noexcept { return limit_; }

 private:
  std::uint64_t needed_, limit_;
};

// Limits of CompressedProduct::load(). The default, 64 GiB, bounds what a file from anyone can make
// a program allocate; a caller that knows the machine passes the memory it can spare.
struct LoadLimits {
  std::uint64_t max_bytes = std::uint64_t{64} << 30;
};

}  // namespace pagh
