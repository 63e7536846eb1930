// What this machine lets the process have, asked before large work starts, so that a request that
// cannot fit fails at once with a clear message instead of after minutes, by a kill, or by a
// half-written output. The library never asks: it takes these numbers as limits
// (SketchParams::max_memory_bytes, LoadLimits::max_bytes) and throws MemoryLimitExceeded.
#pragma once

#include <cstdint>
#include <string>

#include "exit_codes.hpp"

namespace pagh_mm {

struct AvailableMemory {
  std::uint64_t bytes = 0;
  std::string source;  // which limit bound it: "MemAvailable", "ulimit -v", "cgroup memory.max"
};

// The least of: MemAvailable in /proc/meminfo; the address-space limit (ulimit -v) less what the
// process has mapped already; the cgroup's memory.max less its memory.current. A limit that cannot
// be read does not count.
AvailableMemory available_memory();

// "12.3 GB" (decimal gigabytes, three significant digits).
std::string gigabytes(double bytes);

// Throws CliError(code, subject, "insufficient memory: needs X GB, Y GB available (<source>)<advice>").
[[noreturn]] void refuse_memory(ExitCode code, const std::string& subject, double needed_bytes, const AvailableMemory& available,
                                const std::string& advice = "");

// Refuses (71, naming subject) when needed_bytes exceed the memory available now.
void require_memory(double needed_bytes, const std::string& subject);

// The most --threads accepts: more threads than this is never faster, only a way to exhaust the
// process table.
inline constexpr int kMaxThreads = 1024;

// Starts `threads` threads together and lets them finish, so that a thread count the system cannot
// grant fails here with a message (71) rather than inside OpenMP, whose runtime exits with status 1
// and a message of its own. 0 stands for one per hardware thread (a memory limit can refuse even
// those).
void check_threads_can_start(int threads, const std::string& option);

}  // namespace pagh_mm
