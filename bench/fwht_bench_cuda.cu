// fwht_bench --backend cuda: median time of Plan::execute by CUDA events after warm-up, GB/s, and
// two floors measured in the same run: a device-to-device copy of the same bytes times the passes
// the plan makes, and cuFFT R2C (D2Z for f64, R2C of the same n for the 16-bit types) of the same n
// and batch. Data is random and non-zero; when one buffer fits in L2 several buffers rotate, for
// all three alike, so that none of them is timed on inputs left in L2 by the previous call
// (FWHT_BENCH_ROTATE=0: one buffer each, all three warm in L2 where they fit).
#include <cuda_runtime.h>
#include <cufft.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "fwht/plan.hpp"
#include "fwht_bench.hpp"
#include "pagh/error.hpp"
#include "tuning_from_env.hpp"

namespace fwht::bench {
namespace {

constexpr const char* kWhere = "fwht_bench (cuda)";

void ok(cudaError_t s, const char* what) {
  if (s != cudaSuccess) throw pagh::Error(kWhere, std::string(what) + ": " + cudaGetErrorString(s));
}
void ok_fft(cufftResult s, const char* what) {
  if (s != CUFFT_SUCCESS) throw pagh::Error(kWhere, std::string(what) + " failed with cufftResult " + std::to_string(s));
}

// Non-zero random bit patterns that are valid, moderate values of each type (no NaN, no zeros).
__global__ void fill_random(unsigned char* p, std::size_t bytes, int elem, std::uint64_t seed) {
  for (std::size_t k = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; k * elem < bytes; k += std::size_t{gridDim.x} * blockDim.x) {
    std::uint64_t z = seed + k * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    const float u = 0.5f + static_cast<float>(z >> 40) * 0x1p-24f;  // [0.5, 1.5)
    const float v = (z & 1) ? -u : u;
    switch (elem) {
      case 8: reinterpret_cast<double*>(p)[k] = v; break;
      case 4: reinterpret_cast<float*>(p)[k] = v; break;
      case 2: {  // f16 0x3800.. = [0.5, 2); read as bf16 the same bits are ~[4e-5, 1e-4]: finite, non-zero
        const unsigned short h = static_cast<unsigned short>(0x3800u + (z >> 54));
        reinterpret_cast<unsigned short*>(p)[k] = static_cast<unsigned short>(h | ((z & 1) << 15));
        break;
      }
    }
  }
}

struct Timer {
  cudaEvent_t a{}, b{};
  Timer() {
    ok(cudaEventCreate(&a), "cudaEventCreate");
    ok(cudaEventCreate(&b), "cudaEventCreate");
  }
  ~Timer() {
    cudaEventDestroy(a);
    cudaEventDestroy(b);
  }
};

// Median of `reps` timings of f(rep), after `warm` untimed calls; each timing covers one call.
template <class F>
double median_ms(F&& f, int reps, cudaStream_t stream) {
  Timer t;
  for (int i = 0; i < 3; ++i) f(i);
  ok(cudaStreamSynchronize(stream), "warm-up");
  std::vector<float> ms(reps);
  for (int i = 0; i < reps; ++i) {
    ok(cudaEventRecord(t.a, stream), "cudaEventRecord");
    f(i);
    ok(cudaEventRecord(t.b, stream), "cudaEventRecord");
    ok(cudaEventSynchronize(t.b), "cudaEventSynchronize");
    ok(cudaEventElapsedTime(&ms[i], t.a, t.b), "cudaEventElapsedTime");
  }
  std::nth_element(ms.begin(), ms.begin() + reps / 2, ms.end());
  return ms[reps / 2];
}

}  // namespace

Result run_cuda(const Config& c) {
  const std::int64_t n = std::int64_t{1} << c.log2n;
  const Options o{.stabilization = c.stabilization, .algorithm = c.algorithm, .compute = c.compute,
                  .tuning = pagh::bench::fwht_tuning_from_env()};
  const Shape shape{.n = n, .batch = c.batch};
  Plan plan(shape, c.dtype, o, Backend::cuda);
  const std::size_t elem = size_of(c.dtype);
  const std::size_t bytes = static_cast<std::size_t>(n * c.batch) * elem;

  int device = 0;
  cudaDeviceProp prop{};
  ok(cudaGetDevice(&device), "cudaGetDevice");
  ok(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  // Rotate enough buffers to defeat L2 (at least 4x L2 in total) when one buffer is small.
  const char* rotate_env = std::getenv("FWHT_BENCH_ROTATE");
  const bool rotate = rotate_env == nullptr || rotate_env[0] != '0';
  const int buffers =
      rotate ? static_cast<int>(std::min<std::size_t>(16, std::max<std::size_t>(1, 4 * prop.l2CacheSize / bytes + 1))) : 1;
  std::vector<void*> in(buffers), out(buffers);
  for (int k = 0; k < buffers; ++k) {
    ok(cudaMalloc(&in[k], bytes), "cudaMalloc");
    ok(cudaMalloc(&out[k], bytes), "cudaMalloc");
    fill_random<<<1024, 256>>>(static_cast<unsigned char*>(in[k]), bytes, static_cast<int>(elem), 1234567u + k);
    ok(cudaGetLastError(), "fill_random");
  }
  void* ws = nullptr;
  if (plan.workspace_bytes()) ok(cudaMalloc(&ws, plan.workspace_bytes()), "cudaMalloc workspace");
  cudaStream_t stream{};
  ok(cudaStreamCreate(&stream), "cudaStreamCreate");
  ok(cudaDeviceSynchronize(), "setup");

  const int reps = c.repetitions > 0 ? c.repetitions : (bytes >= (std::size_t{1} << 30) ? 15 : 50);
  Result r;
  r.isa = prop.name;
  r.passes = plan.describe().memory_passes;
  // Out of place (in -> out), the way a caller keeps its input.
  r.median_ms = median_ms([&](int i) { plan.execute(in[i % buffers], out[i % buffers], stream, ws); }, reps, stream);
  r.gbps = 2.0 * static_cast<double>(bytes) / (r.median_ms * 1e6);
  const double copy = median_ms(
      [&](int i) { ok(cudaMemcpyAsync(out[i % buffers], in[i % buffers], bytes, cudaMemcpyDeviceToDevice, stream), "copy"); },
      reps, stream);
  r.copy_ms = copy * r.passes;

  // cuFFT R2C of the same n and batch, out of place into a complex buffer (n/2+1 per transform).
  // FWHT_BENCH_CUFFT=0 skips it (A/B sweeps of the FWHT kernels alone).
  const char* cufft_env = std::getenv("FWHT_BENCH_CUFFT");
  const bool want_cufft = cufft_env == nullptr || cufft_env[0] != '0';
  if (want_cufft && c.log2n >= 1 && (c.dtype == DType::f32 || c.dtype == DType::f64 || c.dtype == DType::f16 || c.dtype == DType::bf16)) {
    const bool dbl = c.dtype == DType::f64;
    const std::size_t real_bytes = static_cast<std::size_t>(n * c.batch) * (dbl ? 8 : 4);
    const std::size_t cbytes = static_cast<std::size_t>((n / 2 + 1) * c.batch) * (dbl ? 16 : 8);
    std::size_t free_b = 0, total_b = 0;
    ok(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
    // The same rotation as the FWHT and the copy, so that cuFFT is not timed warm in L2 while they
    // are timed cold.
    int fft_buffers = buffers;
    while (fft_buffers > 1 && fft_buffers * (real_bytes + cbytes) + (std::size_t{1} << 30) >= free_b) --fft_buffers;
    if (real_bytes + cbytes + (std::size_t{1} << 30) < free_b) {
      std::vector<void*> fin(fft_buffers), fout(fft_buffers);
      for (int k = 0; k < fft_buffers; ++k) {
        ok(cudaMalloc(&fin[k], real_bytes), "cudaMalloc");
        ok(cudaMalloc(&fout[k], cbytes), "cudaMalloc");
        fill_random<<<1024, 256>>>(static_cast<unsigned char*>(fin[k]), real_bytes, dbl ? 8 : 4, 99 + k);
        ok(cudaGetLastError(), "fill_random");
      }
      cufftHandle h;
      long long nn = n;
      std::size_t work = 0;
      ok_fft(cufftCreate(&h), "cufftCreate");
      ok_fft(cufftMakePlanMany64(h, 1, &nn, nullptr, 1, nn, nullptr, 1, nn / 2 + 1, dbl ? CUFFT_D2Z : CUFFT_R2C, c.batch,
                                 &work),
             "cufftMakePlanMany64");
      ok_fft(cufftSetStream(h, stream), "cufftSetStream");
      r.cufft_ms = median_ms(
          [&](int i) {
            void* src = fin[i % fft_buffers];
            void* dst = fout[i % fft_buffers];
            if (dbl)
              ok_fft(cufftExecD2Z(h, static_cast<cufftDoubleReal*>(src), static_cast<cufftDoubleComplex*>(dst)), "D2Z");
            else
              ok_fft(cufftExecR2C(h, static_cast<cufftReal*>(src), static_cast<cufftComplex*>(dst)), "R2C");
          },
          reps, stream);
      cufftDestroy(h);
      for (int k = 0; k < fft_buffers; ++k) {
        cudaFree(fin[k]);
        cudaFree(fout[k]);
      }
    }
  }
  for (int k = 0; k < buffers; ++k) {
    cudaFree(in[k]);
    cudaFree(out[k]);
  }
  if (ws) cudaFree(ws);
  cudaStreamDestroy(stream);
  return r;
}

}  // namespace fwht::bench
