// sketch_bench --backend cuda: the compressed product of device-resident dense FP32 inputs against
// cuBLAS SGEMM and BF16 GEMM (cublasGemmEx) of the same n, all timed in the same run by CUDA events
// (median of --reps after two warm-up runs). Inputs are N(0,1) from cuRAND with 10 planted entries
// of 8 sigma (as the CPU bench's dense workload); recall is the fraction of them among the top 10.
//
// --precision (and --compute) choose the sketch's storage as in SketchParams; the GEMMs do not
// change. Reported per n and d: the fused plan with B given by rows (execute_rows), the same on
// tensor cores (PathTuning::tensor_cores, -1 where that path does not apply), the device top-10
// of the plan's product (recovery, host clock around the call), the same with B column-major
// (execute: includes a transposition of B), the general path (forced), SGEMM, BF16 GEMM, and the
// device-to-device copy of A and B (the floor for reading the inputs once). exact = false holds
// only A and B by rows (drawn as such; the GEMM columns print -1), so that n = 65536 (2 x 16 GiB)
// fits an 80 GB card.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <curand.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sketch/cuda.hpp"
#include "sketch_bench_cuda.hpp"
#include "tuning_from_env.hpp"

namespace {

void check(cudaError_t s, const char* what) {
  if (s != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(s));
}
void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(std::string(what) + ": cuBLAS status " + std::to_string(s));
}
void check(curandStatus_t s, const char* what) {
  if (s != CURAND_STATUS_SUCCESS) throw std::runtime_error(std::string(what) + ": cuRAND status " + std::to_string(s));
}

template <class T>
struct Buffer {
  T* p = nullptr;
  explicit Buffer(std::size_t n) { check(cudaMalloc(&p, n * sizeof(T)), "cudaMalloc"); }
  ~Buffer() { cudaFree(p); }
};

// Median time (ms) of `work` enqueued on `stream`, after two warm-up runs.
double time_ms(cudaStream_t stream, int reps, const std::function<void()>& work) {
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "event"), check(cudaEventCreate(&stop), "event");
  for (int w = 0; w < 2; ++w) work();
  std::vector<double> times;
  for (int r = 0; r < reps; ++r) {
    check(cudaEventRecord(start, stream), "record");
    work();
    check(cudaEventRecord(stop, stream), "record");
    check(cudaEventSynchronize(stop), "sync");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop), "elapsed");
    times.push_back(ms);
  }
  cudaEventDestroy(start), cudaEventDestroy(stop);
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

int run_cuda_bench(const CudaBenchConfig& config) {
  std::printf("sketch precision %s, compute %s\n", std::string(fwht::to_string(config.precision)).c_str(),
              std::string(fwht::to_string(config.compute)).c_str());
  std::printf("%6s %2s %8s %10s %10s %8s %10s %10s %10s %10s %10s %9s %9s %7s  %s\n", "n", "d", "b", "rows_ms", "tc_ms", "top_ms", "cols_ms",
              "general_ms", "sgemm_ms", "bf16_ms", "copy_ms", "x_sgemm", "x_bf16", "recall", "path");
  cublasHandle_t handle;
  check(cublasCreate(&handle), "cublasCreate");
  curandGenerator_t gen;
  check(curandCreateGenerator(&gen, CURAND_RNG_PSEUDO_PHILOX4_32_10), "curandCreateGenerator");
  for (std::int64_t n : config.sizes) {
    const auto nn = static_cast<std::size_t>(n * n);
    // Without the exact products only A and B by rows are held; B^T is drawn directly (another
    // N(0, 1) matrix than the exact mode's B, the same distribution).
    const bool exact = config.exact;
    Buffer<float> A(nn), Bt(nn);
    std::unique_ptr<Buffer<float>> B, C, copy;
    std::unique_ptr<Buffer<__nv_bfloat16>> A16, B16;
    if (exact) {
      B = std::make_unique<Buffer<float>>(nn), C = std::make_unique<Buffer<float>>(nn), copy = std::make_unique<Buffer<float>>(2 * nn);
      A16 = std::make_unique<Buffer<__nv_bfloat16>>(nn), B16 = std::make_unique<Buffer<__nv_bfloat16>>(nn);
    }
    check(curandSetPseudoRandomGeneratorSeed(gen, 1234), "seed");
    check(curandGenerateNormal(gen, A.p, nn, 0.0f, 1.0f), "normal A");
    check(curandGenerateNormal(gen, exact ? B->p : Bt.p, nn, 0.0f, 1.0f), "normal B");
    // Planted entries C(i_q, j_q) = v * v through A(i_q, q) = B(q, j_q) = v, v^2 = 8 sigma.
    const double sigma = std::pow(static_cast<double>(n), 1.5) / std::sqrt(8.0 * static_cast<double>(n));
    const float v = static_cast<float>(std::sqrt(8 * sigma));
    std::vector<std::pair<std::int64_t, std::int64_t>> planted;
    for (std::int64_t q = 0; q < 10; ++q) {
      const std::int64_t i = (q * 7919 + 13) % n, j = (q * 104729 + 101) % n;
      planted.emplace_back(i, j);
      check(cudaMemcpy(A.p + i + q * n, &v, 4, cudaMemcpyHostToDevice), "plant");
      check(cudaMemcpy(exact ? B->p + q + j * n : Bt.p + j + q * n, &v, 4, cudaMemcpyHostToDevice), "plant");
    }
    // B by rows (B^T column-major) for execute_rows; bf16 copies for the BF16 GEMM.
    const float one = 1.0f, zero = 0.0f;
    double sgemm = -1, bf16 = -1, copy_ms = -1;
    if (exact) {
      transpose_square(B->p, Bt.p, n);
      round_to_bf16(A.p, A16->p, nn);
      round_to_bf16(B->p, B16->p, nn);
      check(cudaDeviceSynchronize(), "setup");
      cudaStream_t stream;
      check(cudaStreamCreate(&stream), "stream");
      check(cublasSetStream(handle, stream), "cublasSetStream");
      const int ni = static_cast<int>(n);
      sgemm = time_ms(stream, config.reps, [&] {
        check(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, ni, ni, ni, &one, A.p, ni, B->p, ni, &zero, C->p, ni), "sgemm");
      });
      bf16 = time_ms(stream, config.reps, [&] {
        check(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, ni, ni, ni, &one, A16->p, CUDA_R_16BF, ni, B16->p, CUDA_R_16BF, ni, &zero, C->p,
                           CUDA_R_32F, ni, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
              "gemmex");
      });
      copy_ms = time_ms(stream, config.reps, [&] {
        check(cudaMemcpyAsync(copy->p, A.p, nn * 4, cudaMemcpyDeviceToDevice, stream), "copy");
        check(cudaMemcpyAsync(copy->p + nn, B->p, nn * 4, cudaMemcpyDeviceToDevice, stream), "copy");
      });
      cudaStreamDestroy(stream);
    }
    check(cudaDeviceSynchronize(), "setup");

    for (int d : config.repetitions) {
      pagh::SketchParams params{.pad = config.pad, .repetitions = d, .seed = 42, .precision = config.precision, .compute = config.compute};
      const pagh::cuda::PathTuning tuning = pagh::bench::path_tuning_from_env();
      double tensor = -1;
      {
        pagh::cuda::PathTuning on = tuning;
        on.tensor_cores = true;
        pagh::cuda::Compressor tc(n, n, n, params, {.b_by_rows_only = true, .tuning = on});
        if (tc.path().find("tensor") != std::string::npos)
          tensor = time_ms(tc.stream(), config.reps, [&] { tc.execute_rows(A.p, n, Bt.p, n); });
      }
      pagh::cuda::Compressor plan(n, n, n, params, {.b_by_rows_only = !exact, .tuning = tuning});
      const double rows = time_ms(plan.stream(), config.reps, [&] { plan.execute_rows(A.p, n, Bt.p, n); });
      plan.synchronize();
      std::vector<double> top_times;
      for (int r = 0; r < std::min(config.reps, 5); ++r) {
        const auto start = std::chrono::steady_clock::now();
        (void)plan.product().top_k(planted.size());
        top_times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
      }
      std::sort(top_times.begin(), top_times.end());
      const double top_ms = top_times[top_times.size() / 2];
      const double cols = exact ? time_ms(plan.stream(), config.reps, [&] { plan.execute(A.p, n, B->p, n); }) : -1;
      double general = -1;
      if (exact && config.general && n <= 4096) {
        pagh::cuda::Compressor slow(n, n, n, params, {.force_general = true, .b_by_rows_only = true});
        general = time_ms(slow.stream(), std::min(config.reps, 5), [&] { slow.execute_rows(A.p, n, Bt.p, n); });
      }
      plan.synchronize();
      const auto top = plan.product().top_k(planted.size());
      std::size_t hits = 0, host_hits = 0;
      for (const auto& [i, j] : planted)
        for (const pagh::Entry& e : top) hits += e.row == i && e.col == j;
      if (config.check_host && n <= 4096) {  // the device top-k against the host's
        const auto host_top = plan.product().to_host().top_k(planted.size());
        for (const auto& [i, j] : planted)
          for (const pagh::Entry& e : host_top) host_hits += e.row == i && e.col == j;
        for (std::size_t q = 0; q < std::min(top.size(), host_top.size()); ++q)
          if (top[q].row != host_top[q].row || top[q].col != host_top[q].col || top[q].value != host_top[q].value)
            std::printf("  top-k mismatch at %zu: device (%lld, %lld, %g) host (%lld, %lld, %g)\n", q, static_cast<long long>(top[q].row),
                        static_cast<long long>(top[q].col), top[q].value, static_cast<long long>(host_top[q].row),
                        static_cast<long long>(host_top[q].col), host_top[q].value);
        std::printf("  host top-k recall %.2f; planted (%lld, %lld) estimate %g\n", static_cast<double>(host_hits) / planted.size(),
                    static_cast<long long>(planted[0].first), static_cast<long long>(planted[0].second),
                    plan.product().to_host().estimate(planted[0].first, planted[0].second));
      }
      std::printf("%6lld %2d %8lld %10.4f %10.4f %8.3f %10.4f %10.4f %10.4f %10.4f %10.4f %9.2f %9.2f %7.2f  %s\n", static_cast<long long>(n),
                  d, static_cast<long long>(plan.product().buckets()), rows, tensor, top_ms, cols, general, sgemm, bf16, copy_ms,
                  sgemm / rows, bf16 / rows,
                  static_cast<double>(hits) / static_cast<double>(planted.size()), plan.path().c_str());
      std::fflush(stdout);
    }
  }
  curandDestroyGenerator(gen);
  cublasDestroy(handle);
  return 0;
}
