// Pieces the paired benchmarks (sketch_vs_compmatmul, linear_hash_prototype) share: list and sweep
// options, clocks and a median. Each program defines bench_cli::usage_error (its name and usage text).
#pragma once

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

namespace bench_cli {

// Prints why and the program's usage, exits 64 (EX_USAGE). Defined by each program.
[[noreturn]] void usage_error(const std::string& why);

// "1,2,4": integers in [lo, hi], else a usage error naming the option.
inline std::vector<int> parse_list(const std::string& option, const std::string& text, int lo, int hi) {
  std::vector<int> values;
  for (std::size_t at = 0; at <= text.size();) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    const std::string part = text.substr(at, comma - at);
    char* end = nullptr;
    const long v = std::strtol(part.c_str(), &end, 10);
    if (part.empty() || *end != '\0' || v < lo || v > hi)
      usage_error(option + ": '" + part + "' is not an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    values.push_back(static_cast<int>(v));
    at = comma + 1;
  }
  return values;
}

// The sweep options both benchmarks take: --n (powers of two in [min_n, max_n]: b = 8n must be one),
// --d, --threads, --rounds. Returns whether arg was one of them (its value then parsed into place).
inline bool parse_sweep_option(const std::string& arg, const std::string& value, int min_n, int max_n, std::vector<int>& ns,
                               std::vector<int>& ds, std::vector<int>& thread_counts, int& rounds) {
  if (arg == "--n") {
    ns = parse_list(arg, value, min_n, max_n);
    for (int n : ns)
      if ((n & (n - 1)) != 0) usage_error("--n: " + std::to_string(n) + " is not a power of two (b = 8n must be one)");
  } else if (arg == "--d") {
    ds = parse_list(arg, value, 1, 64);
  } else if (arg == "--threads") {
    thread_counts = parse_list(arg, value, 1, 1024);
  } else if (arg == "--rounds") {
    rounds = parse_list(arg, value, 1, 100000).front();
  } else {
    return false;
  }
  return true;
}

inline double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// CPU time of the whole process (all its threads): less disturbed than wall time by other work on
// a shared machine, and comparable between two codes as long as both run the same thread count
// (OpenMP threads that wait spin for a while and count too).
inline double cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

}  // namespace bench_cli
