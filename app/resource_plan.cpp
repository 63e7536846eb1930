#include "resource_plan.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <barrier>
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>
#include <system_error>
#include <thread>
#include <vector>

#include "cli_error.hpp"

namespace pagh_mm {
namespace {

// "<key>: <number> kB" from a /proc file such as /proc/meminfo or /proc/self/status.
std::optional<std::uint64_t> proc_kilobytes(const char* file, const std::string& key) {
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key + ":", 0) != 0) continue;
    std::istringstream fields(line.substr(key.size() + 1));
    std::uint64_t kb = 0;
    if (fields >> kb) return kb * 1024;
  }
  return std::nullopt;
}

std::optional<std::uint64_t> file_number(const std::string& path) {
  std::ifstream in(path);
  std::uint64_t value = 0;
  if (in >> value) return value;  // "max" (no limit) does not parse
  return std::nullopt;
}

// cgroup v2: the process's group from /proc/self/cgroup ("0::/path").
std::optional<std::uint64_t> cgroup_headroom() {
  std::ifstream in("/proc/self/cgroup");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("0::", 0) != 0) continue;
    const std::string dir = "/sys/fs/cgroup" + line.substr(3);
    const auto max = file_number(dir + "/memory.max");
    const auto current = file_number(dir + "/memory.current");
    if (max && current) return *max > *current ? *max - *current : 0;
  }
  return std::nullopt;
}

}  // namespace

AvailableMemory available_memory() {
  AvailableMemory best{UINT64_MAX, "no limit found"};
  const auto consider = [&](std::optional<std::uint64_t> bytes, const char* source) {
    if (bytes && *bytes < best.bytes) best = {*bytes, source};
  };
  consider(proc_kilobytes("/proc/meminfo", "MemAvailable"), "MemAvailable");
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    const std::uint64_t mapped = proc_kilobytes("/proc/self/status", "VmSize").value_or(0);
    consider(limit.rlim_cur > mapped ? limit.rlim_cur - mapped : 0, "ulimit -v");
  }
  consider(cgroup_headroom(), "cgroup memory.max");
  return best;
}

std::string gigabytes(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g GB", bytes / 1e9);
  return text;
}

void refuse_memory(ExitCode code, const std::string& subject, double needed_bytes, const AvailableMemory& available,
                   const std::string& advice) {
  throw CliError(code, subject,
                 "insufficient memory: needs " + gigabytes(needed_bytes) + ", " + gigabytes(static_cast<double>(available.bytes)) +
                     " available (" + available.source + ")" + advice);
}

void require_memory(double needed_bytes, const std::string& subject) {
  const AvailableMemory available = available_memory();
  if (needed_bytes > static_cast<double>(available.bytes)) refuse_memory(ExitCode::os_error, subject, needed_bytes, available);
}

void check_threads_can_start(int requested, const std::string& option) {
  // 0 = one per hardware thread: those are started here too, since a memory limit (ulimit -d)
  // can refuse even them, and the OpenMP runtime would then abort without a sysexits status.
  const int hardware = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int threads = requested > 0 ? requested : hardware;
  std::barrier all_started(threads);
  std::vector<std::thread> started;
  std::string failure;
  try {
    for (int t = 0; t < threads; ++t) started.emplace_back([&] { all_started.arrive_and_wait(); });
  } catch (const std::system_error& e) {
    failure = e.what();
    // The threads already started wait for the ones that never will: arrive for those.
    for (int t = static_cast<int>(started.size()); t < threads; ++t) (void)all_started.arrive();
  }
  for (auto& thread : started) thread.join();
  if (!failure.empty())
    throw CliError(ExitCode::os_error, option,
                   "cannot start " + std::to_string(threads) + " threads (" + failure + ")" +
                       (requested > 0 ? "; use fewer, or 0 for one per hardware thread" : "; use --threads with fewer"));
}

}  // namespace pagh_mm
