// fwht_bench: one executable for all FWHT timing, CPU and CUDA.
//
//   fwht_bench --backend cpu --dtype f32 --log2n 10:26 --batch 1 --threads 1 --format json
//
// For each log2n in the range it prints the median time of one execute of the whole batch,
// elements/s and GB/s (data read + written once), and for CUDA the copy and cuFFT floors measured in
// the same run with their ratios. --stabilize takes a comma-separated list (e.g.
// none,kahan,neumaier,wide_onchip): the modes run side by side per size, each with its time over
// the first mode's ("x_first", the ratio to plain when the list starts with none).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "fwht/fwht.hpp"
#include "fwht_bench.hpp"

namespace {

using fwht::bench::Config;
using fwht::bench::Result;

constexpr const char* kUsage =
    "usage: fwht_bench [--backend cpu|cuda] [--dtype f64|f32|f16|bf16|i32|i64] [--log2n A[:B]]\n"
    "                  [--batch N] [--threads T] [--stabilize S[,S...]] (none|kahan|neumaier|wide_onchip|wide_carry)\n"
    "                  [--algorithm folklore|alman_rao] [--compute f32|storage] [--reps R]\n"
    "                  [--format text|json]\n"
    "Times fwht::Plan::execute (out of place) on random data; prints the median over R repetitions\n"
    "(default: about 0.3 s of work) after warm-up. --threads 0 (default) uses all CPU threads.\n";

[[noreturn]] void usage_error(const std::string& why) {
  std::fprintf(stderr, "fwht_bench: %s\n%s", why.c_str(), kUsage);
  std::exit(64);
}

long long parse_int(std::string_view option, const std::string& text) {
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0') usage_error(std::string(option) + ": '" + text + "' is not an integer");
  return v;
}

std::string json_number(double v) {
  if (!std::isfinite(v) || v < 0) return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  Config base;
  std::vector<fwht::Stabilization> modes{fwht::Stabilization::none};
  int log2_lo = 20, log2_hi = 20;
  std::string format = "text";
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string_view arg = argv[i];
      if (arg == "--help" || arg == "-h") {
        std::fputs(kUsage, stdout);
        return 0;
      }
      if (i + 1 >= argc) usage_error(std::string(arg) + " needs a value");
      const std::string value = argv[++i];
      if (arg == "--backend") base.backend = fwht::parse_backend(value);
      else if (arg == "--dtype") base.dtype = fwht::parse_dtype(value);
      else if (arg == "--stabilize") {
        modes.clear();
        for (std::size_t at = 0; at <= value.size();) {
          const std::size_t comma = std::min(value.find(',', at), value.size());
          modes.push_back(fwht::parse_stabilization(std::string_view(value).substr(at, comma - at)));
          at = comma + 1;
        }
      }
      else if (arg == "--algorithm") base.algorithm = fwht::parse_algorithm(value);
      else if (arg == "--compute") base.compute = fwht::parse_compute(value);
      else if (arg == "--batch") base.batch = parse_int(arg, value);
      else if (arg == "--threads") base.threads = static_cast<int>(parse_int(arg, value));
      else if (arg == "--reps") base.repetitions = static_cast<int>(parse_int(arg, value));
      else if (arg == "--format") {
        if (value != "text" && value != "json") usage_error("--format: expected text or json, got '" + value + "'");
        format = value;
      } else if (arg == "--log2n") {
        const auto colon = value.find(':');
        log2_lo = static_cast<int>(parse_int(arg, value.substr(0, colon)));
        log2_hi = colon == std::string::npos ? log2_lo : static_cast<int>(parse_int(arg, value.substr(colon + 1)));
        if (log2_lo < 0 || log2_hi < log2_lo || log2_hi > 40) usage_error("--log2n: need 0 <= A <= B <= 40");
      } else {
        usage_error("unknown option " + std::string(arg));
      }
    }
  } catch (const pagh::Error& e) {
    usage_error(e.what());
  }
  if (base.batch < 1) usage_error("--batch must be at least 1");
  if (base.threads < 0) usage_error("--threads must be >= 0");

  const bool json = format == "json";
  if (json) std::printf("[\n");
  else
    std::printf("%-5s %-5s %5s %7s %4s %-9s %-9s %-7s %11s %10s %9s %s\n", "back", "dtype", "log2n", "batch", "thr", "stabilize",
                "algorithm", "compute", "median_ms", "Gelem/s", "GB/s", "isa/device, floors");
  bool first = true;
  double first_mode_ms = 0;  // time of modes[0] at this size
  for (int step = 0; step < (log2_hi - log2_lo + 1) * static_cast<int>(modes.size()); ++step) {
    const int L = log2_lo + step / static_cast<int>(modes.size());
    const std::size_t mi = static_cast<std::size_t>(step) % modes.size();
    Config c = base;
    c.log2n = L;
    c.stabilization = modes[mi];
    Result r;
    try {
      r = c.backend == fwht::Backend::cpu ? fwht::bench::run_cpu(c) : fwht::bench::run_cuda(c);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "fwht_bench: log2n %d: %s\n", L, e.what());
      return 70;
    }
    const double elements = std::ldexp(static_cast<double>(c.batch), L);
    const double gelems = elements / (r.median_ms * 1e6);
    const double copy_ratio = r.copy_ms > 0 ? r.median_ms / r.copy_ms : -1;
    const double cufft_ratio = r.cufft_ms > 0 ? r.cufft_ms / r.median_ms : -1;
    if (mi == 0) first_mode_ms = r.median_ms;
    const double first_ratio = r.median_ms / first_mode_ms;
    if (json) {
      std::printf(
          "%s  {\"backend\": \"%s\", \"dtype\": \"%s\", \"log2n\": %d, \"batch\": %lld, \"threads\": %d, \"stabilize\": \"%s\", "
          "\"algorithm\": \"%s\", \"compute\": \"%s\", \"median_ms\": %s, \"gelems\": %s, \"gbps\": %s, \"isa\": \"%s\"",
          first ? "" : ",\n", std::string(fwht::to_string(c.backend)).c_str(), std::string(fwht::to_string(c.dtype)).c_str(), L,
          static_cast<long long>(c.batch), r.threads, std::string(fwht::to_string(c.stabilization)).c_str(),
          std::string(fwht::to_string(c.algorithm)).c_str(), std::string(fwht::to_string(c.compute)).c_str(),
          json_number(r.median_ms).c_str(), json_number(gelems).c_str(), json_number(r.gbps).c_str(), r.isa.c_str());
      if (c.backend == fwht::Backend::cuda)
        std::printf(", \"passes\": %d, \"copy_ms\": %s, \"copy_ratio\": %s, \"cufft_ms\": %s, \"cufft_ratio\": %s", r.passes,
                    json_number(r.copy_ms).c_str(), json_number(copy_ratio).c_str(), json_number(r.cufft_ms).c_str(),
                    json_number(cufft_ratio).c_str());
      std::printf(", \"x_first\": %s}", json_number(first_ratio).c_str());
    } else {
      std::printf("%-5s %-5s %5d %7lld %4d %-9s %-9s %-7s %11.4f %10.3f %9.2f %s", std::string(fwht::to_string(c.backend)).c_str(),
                  std::string(fwht::to_string(c.dtype)).c_str(), L, static_cast<long long>(c.batch), r.threads,
                  std::string(fwht::to_string(c.stabilization)).c_str(), std::string(fwht::to_string(c.algorithm)).c_str(),
                  std::string(fwht::to_string(c.compute)).c_str(), r.median_ms, gelems, r.gbps, r.isa.c_str());
      if (c.backend == fwht::Backend::cuda)
        std::printf(" passes=%d copy=%.4fms (x%.2f) cufft=%.4fms (fwht %.2fx faster)", r.passes, r.copy_ms, copy_ratio, r.cufft_ms,
                    cufft_ratio);
      std::printf(" x_first=%.2f\n", first_ratio);
    }
    std::fflush(stdout);
    first = false;
  }
  if (json) std::printf("\n]\n");
  return 0;
}
