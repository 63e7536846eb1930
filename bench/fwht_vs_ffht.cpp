// fwht_vs_ffht: pagh's CPU FWHT and FFHT (FALCONN-LIB/FFHT, built on the side from a local checkout
// given to CMake as -DPAGH_FFHT_DIR=...) timed in one process, single thread, interleaved.
//
//   fwht_vs_ffht [--log2n 10:26] [--dtype f32,f64] [--mode inplace,oop] [--rounds 15]
//
// For each (dtype, mode, size) both transforms run in alternating rounds (pagh first in even rounds,
// FFHT first in odd ones); each round times a group of back-to-back calls on freshly copied random
// data and records the time per call; the table gives the median over rounds of each and their
// ratio pagh/FFHT (below 1: pagh faster). Out of place means fwht::Plan::execute(in, out) against
// FFHT's fht_*_oop (its copy, then its in-place transform). Both compute the same unnormalized
// transform; the harness checks that their results agree (FFHT's operation order differs, so the
// check allows rounding differences) before timing.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "cpu/kernels.hpp"  // the instruction set the plan's kernels use, for the table
#include "fwht/fwht.hpp"

extern "C" {
int fht_float(float* buf, int log_n);
int fht_double(double* buf, int log_n);
int fht_float_oop(float* in, float* out, int log_n);
int fht_double_oop(double* in, double* out, int log_n);
}

namespace {

constexpr const char* kUsage =
    "usage: fwht_vs_ffht [--log2n A[:B]] [--dtype f32,f64] [--mode inplace,oop] [--rounds R]\n"
    "Times pagh's CPU FWHT (1 thread) and FFHT interleaved in one process; prints medians and pagh/FFHT.\n";

[[noreturn]] void usage_error(const std::string& why) {
  std::fprintf(stderr, "fwht_vs_ffht: %s\n%s", why.c_str(), kUsage);
  std::exit(64);
}

int parse_int(const std::string& option, const std::string& text) {
  char* end = nullptr;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0') usage_error(option + ": '" + text + "' is not an integer");
  return static_cast<int>(v);
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> parts;
  for (std::size_t at = 0; at <= s.size();) {
    const std::size_t comma = std::min(s.find(',', at), s.size());
    parts.push_back(s.substr(at, comma - at));
    at = comma + 1;
  }
  return parts;
}

// 64-byte aligned storage (FFHT's kernels use unaligned loads, but aligned buffers are what a
// careful caller of either library passes).
template <class T>
struct Buffer {
  explicit Buffer(std::size_t n) : data(static_cast<T*>(std::aligned_alloc(64, (n * sizeof(T) + 63) / 64 * 64))), size(n) {
    if (data == nullptr) usage_error("out of memory for 2 x " + std::to_string(n) + " elements");
  }
  ~Buffer() { std::free(data); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  T* data;
  std::size_t size;
};

template <class T>
int ffht_in_place(T* x, int L) {
  if constexpr (std::is_same_v<T, float>) return fht_float(x, L);
  else return fht_double(x, L);
}
template <class T>
int ffht_out_of_place(T* in, T* out, int L) {
  if constexpr (std::is_same_v<T, float>) return fht_float_oop(in, out, L);
  else return fht_double_oop(in, out, L);
}

double now_ms() { return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

template <class T>
void compare(int L, bool in_place, int rounds) {
  const std::size_t n = std::size_t{1} << L;
  Buffer<T> source(n), in(n), out(n);
  std::mt19937_64 rng(12345 + static_cast<unsigned>(L));
  std::normal_distribution<double> normal;
  for (std::size_t i = 0; i < n; ++i) source.data[i] = static_cast<T>(normal(rng));
  fwht::Plan plan({.n = static_cast<std::int64_t>(n)}, std::is_same_v<T, float> ? fwht::DType::f32 : fwht::DType::f64,
                  {.threads = 1});

  auto run_pagh = [&] { in_place ? plan.execute(out.data, out.data) : plan.execute(in.data, out.data); };
  auto run_ffht = [&] {
    const int rc = in_place ? ffht_in_place(out.data, L) : ffht_out_of_place(in.data, out.data, L);
    if (rc != 0) usage_error("FFHT refused log2n " + std::to_string(L));
  };
  auto reset = [&] {
    std::memcpy(in.data, source.data, n * sizeof(T));
    if (in_place) std::memcpy(out.data, source.data, n * sizeof(T));
  };

  // Agreement check: same transform up to rounding (relative to the result's norm).
  reset();
  run_pagh();
  std::vector<T> pagh_result(out.data, out.data + n);
  reset();
  run_ffht();
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < n; ++i) {
    diff = std::max(diff, std::abs(static_cast<double>(pagh_result[i]) - static_cast<double>(out.data[i])));
    norm = std::max(norm, std::abs(static_cast<double>(out.data[i])));
  }
  const double tolerance = (std::is_same_v<T, float> ? 1e-5 : 1e-13) * L;
  if (!(diff <= tolerance * norm)) {
    std::fprintf(stderr, "fwht_vs_ffht: log2n %d: pagh and FFHT disagree (max |diff| %g, max |y| %g)\n", L, diff, norm);
    std::exit(70);
  }

  // Calls per timed group: about 2 ms of work, and few enough in place that repeated transforms
  // (each multiplies magnitudes by up to sqrt(n)) stay finite: in-place groups restart from the data.
  const double t0 = now_ms();
  reset();
  run_pagh();
  const double one = std::max(now_ms() - t0, 1e-4);
  int group = std::clamp(static_cast<int>(2.0 / one), 1, 1000);
  const int wanted = group;
  if (in_place) group = std::min(group, std::is_same_v<T, float> ? 120 / L : 1000 / L);
  const int total_rounds = rounds * std::min(20, wanted / group);  // more rounds where groups were cut short
  std::vector<double> pagh_ms, ffht_ms;
  for (int r = 0; r < total_rounds; ++r) {
    for (int which = 0; which < 2; ++which) {
      const bool pagh = (which == 0) == (r % 2 == 0);
      reset();
      const double start = now_ms();
      for (int g = 0; g < group; ++g) pagh ? run_pagh() : run_ffht();
      (pagh ? pagh_ms : ffht_ms).push_back((now_ms() - start) / group);
    }
  }
  auto median = [](std::vector<double> v) {
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
  };
  const double p = median(pagh_ms), f = median(ffht_ms);
  std::printf("%-5s %-8s %5d %12.5f %12.5f %8.3f %9.2f  %s\n", std::is_same_v<T, float> ? "f32" : "f64", in_place ? "inplace" : "oop", L,
              p, f, p / f, 2.0 * static_cast<double>(n * sizeof(T)) / (p * 1e6), fwht::cpu::select_kernels<T>().isa);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  int lo = 10, hi = 26, rounds = 15;
  std::vector<std::string> dtypes{"f32", "f64"}, modes{"inplace", "oop"};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (i + 1 >= argc) usage_error(arg + " needs a value");
    const std::string value = argv[++i];
    if (arg == "--log2n") {
      const auto colon = value.find(':');
      lo = parse_int(arg, value.substr(0, colon));
      hi = colon == std::string::npos ? lo : parse_int(arg, value.substr(colon + 1));
      if (lo < 1 || hi < lo || hi > 30) usage_error("--log2n: need 1 <= A <= B <= 30");
    } else if (arg == "--dtype") {
      dtypes = split(value);
      for (const auto& d : dtypes)
        if (d != "f32" && d != "f64") usage_error("--dtype: expected f32 or f64, got '" + d + "'");
    } else if (arg == "--mode") {
      modes = split(value);
      for (const auto& m : modes)
        if (m != "inplace" && m != "oop") usage_error("--mode: expected inplace or oop, got '" + m + "'");
    } else if (arg == "--rounds") {
      rounds = parse_int(arg, value);
      if (rounds < 1) usage_error("--rounds must be at least 1");
    } else {
      usage_error("unknown option " + arg);
    }
  }
  std::printf("%-5s %-8s %5s %12s %12s %8s %9s  %s\n", "dtype", "mode", "log2n", "pagh_ms", "ffht_ms", "pagh/ffht", "pagh_GB/s", "pagh ISA");
  try {
    for (const auto& d : dtypes)
      for (const auto& m : modes)
        for (int L = lo; L <= hi; ++L) d == "f32" ? compare<float>(L, m == "inplace", rounds) : compare<double>(L, m == "inplace", rounds);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fwht_vs_ffht: %s\n", e.what());
    return 70;
  }
  return 0;
}
