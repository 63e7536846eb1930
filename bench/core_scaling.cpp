// How much of one core's speed each core keeps while N cores of this host work at once: the ceiling
// that any strong-scaling measurement on the host meets, whatever the code. Every one of N threads
// (bind them: OMP_PLACES=cores OMP_PROC_BIND=close) runs the same kernel on data of its own, started
// together; the slowest thread's time against one thread alone is the best "of linear" a perfectly
// divided workload of that kind can reach at N.
//   core_scaling [N,N,...] [REPEATS [KERNEL]]   (default 1,2,4,8,16, 3 and all three kernels)
// Kernels (each thread's own buffers, touched first by that thread):
//   compute  8 independent chains of dependent double adds, no memory (the clock each core keeps)
//   stream   x[i] += 1 over 256 MiB, 4 passes (each core's share of memory bandwidth)
//   random   c[h] += 1 at 2^24 random h in 201 MB (a d x b sketch of n = 10^6: one miss per add)
// Output: one CSV line per kernel and N: kernel,threads,alone_ms,slowest_ms,median_ms,of_linear
// (of_linear = alone_ms / slowest_ms, medians over REPEATS).
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace {

double now_ms() { return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

double compute_kernel() {
  double a[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  for (long i = 0; i < 200'000'000L; ++i)
    for (double& x : a) x += 1e-9;
  double s = 0;
  for (double x : a) s += x;
  return s;
}

double stream_kernel(std::vector<double>& x) {
  for (int pass = 0; pass < 4; ++pass)
    for (double& v : x) v += 1.0;
  return x[x.size() / 2];
}

double random_kernel(std::vector<double>& c) {
  std::uint64_t state = 0x9E3779B97F4A7C15ull ^ reinterpret_cast<std::uintptr_t>(c.data());
  const std::uint64_t n = c.size();
  for (long i = 0; i < (1L << 24); ++i) {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    c[(state >> 11) % n] += 1.0;
  }
  return c[0];
}

// Each of `threads` threads runs kernel k once, together; returns each thread's time.
std::vector<double> run_together(const std::string& kernel, int threads) {
  std::vector<double> ms(static_cast<std::size_t>(threads));
  double sink = 0;
#pragma omp parallel num_threads(threads) reduction(+ : sink)
  {
    std::vector<double> data;
    if (kernel == "stream") data.assign(std::size_t{32} << 20, 0.0);            // 256 MiB
    if (kernel == "random") data.assign(std::size_t{3} * (std::size_t{1} << 23), 0.0);  // 201 MB
#pragma omp barrier
    const double start = now_ms();
    sink += kernel == "compute" ? compute_kernel() : kernel == "stream" ? stream_kernel(data) : random_kernel(data);
    ms[static_cast<std::size_t>(omp_get_thread_num())] = now_ms() - start;
  }
  if (sink == 42.0) std::puts("");  // keeps the kernels' results alive
  return ms;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> counts = {1, 2, 4, 8, 16};
  if (argc > 1) {
    counts.clear();
    for (const char* p = argv[1]; *p;) {
      char* end = nullptr;
      const long v = std::strtol(p, &end, 10);
      if (end == p || v < 1) {
        std::fprintf(stderr, "core_scaling: thread counts '%s' are not a list like 1,2,4,8\n", argv[1]);
        return 64;
      }
      counts.push_back(static_cast<int>(v));
      p = *end == ',' ? end + 1 : end;
    }
  }
  const int repeats = argc > 2 ? std::max(1, std::atoi(argv[2])) : 3;
  const std::string only = argc > 3 ? argv[3] : "";
  if (!only.empty() && only != "compute" && only != "stream" && only != "random") {
    std::fprintf(stderr, "core_scaling: kernel '%s' is not compute, stream or random\n", argv[3]);
    return 64;
  }
  std::puts("kernel,threads,alone_ms,slowest_ms,median_ms,of_linear");
  for (const std::string kernel : {"compute", "stream", "random"}) {
    if (!only.empty() && kernel != only) continue;
    std::vector<double> alone;
    for (int r = 0; r < repeats; ++r) alone.push_back(run_together(kernel, 1)[0]);
    const double one = median(alone);
    for (int n : counts) {
      std::vector<double> slowest, middle;
      for (int r = 0; r < repeats; ++r) {
        const std::vector<double> ms = run_together(kernel, n);
        slowest.push_back(*std::max_element(ms.begin(), ms.end()));
        middle.push_back(median(ms));
      }
      std::printf("%s,%d,%.1f,%.1f,%.1f,%.2f\n", kernel.c_str(), n, one, median(slowest), median(middle), one / median(slowest));
      std::fflush(stdout);
    }
  }
  return 0;
}
