// CPU timer of fwht_bench: out-of-place execute on random data, median of repetitions after warm-up.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>
#include <vector>

#include "fwht/fwht.hpp"
#include "fwht_bench.hpp"

namespace fwht::bench {
namespace {

// Random bytes that are valid, finite values of the dtype (N(0,1) or small integers): timing on
// zeros would hide work, and NaN/Inf would not be representative.
std::vector<unsigned char> random_data(DType t, std::size_t count) {
  std::vector<unsigned char> bytes(count * size_of(t));
  std::mt19937_64 rng(12345);
  std::normal_distribution<double> normal;
  std::uniform_int_distribution<int> small(-100, 100);
  for (std::size_t i = 0; i < count; ++i) {
    unsigned char* p = bytes.data() + i * size_of(t);
    auto put = [p](auto v) { std::memcpy(p, &v, sizeof v); };
    switch (t) {
      case DType::f64: put(normal(rng)); break;
      case DType::f32: put(static_cast<float>(normal(rng))); break;
      case DType::f16: put(f16(static_cast<float>(normal(rng)))); break;
      case DType::bf16: put(bf16(static_cast<float>(normal(rng)))); break;
      case DType::i32: put(static_cast<std::int32_t>(small(rng))); break;
      case DType::i64: put(static_cast<std::int64_t>(small(rng))); break;
    }
  }
  return bytes;
}

}  // namespace

Result run_cpu(const Config& c) {
  const std::int64_t n = std::int64_t{1} << c.log2n;
  const Options options{.stabilization = c.stabilization, .algorithm = c.algorithm, .compute = c.compute, .threads = c.threads};
  Plan plan({.n = n, .batch = c.batch}, c.dtype, options);
  const auto in = random_data(c.dtype, static_cast<std::size_t>(n * c.batch));
  std::vector<unsigned char> out(in.size());
  using clock = std::chrono::steady_clock;
  auto once = [&] {
    const auto t0 = clock::now();
    plan.execute(in.data(), out.data());
    return std::chrono::duration<double, std::milli>(clock::now() - t0).count();
  };
  const double first = std::max(once(), once());  // warm-up: page faults, thread start
  int reps = c.repetitions > 0 ? c.repetitions : static_cast<int>(std::clamp(300.0 / std::max(first, 1e-3), 5.0, 2000.0));
  std::vector<double> times(static_cast<std::size_t>(reps));
  for (double& t : times) t = once();
  std::nth_element(times.begin(), times.begin() + reps / 2, times.end());
  Result r;
  r.median_ms = times[static_cast<std::size_t>(reps / 2)];
  r.gbps = 2.0 * static_cast<double>(in.size()) / (r.median_ms * 1e6);
  r.threads = c.threads > 0 ? c.threads : omp_get_max_threads();
  const std::string text = plan.describe().text;  // "cpu plan, <isa> kernels, ..."
  const std::size_t from = text.find(", ") + 2;
  r.isa = text.substr(from, text.find(' ', from) - from);
  return r;
}

#if !defined(FWHT_BENCH_HAVE_CUDA)
Result run_cuda(const Config&) {
  throw pagh::Error("fwht_bench", "--backend cuda: this build has no CUDA backend");
}
#endif

}  // namespace fwht::bench
