// dense_recovery_bench: the largest entries of a dense product too large to keep (m x p FP32 does
// not fit the GPU), found from a sketch (pagh::cuda::Compressor on device-resident inputs, then
// heavy-bucket recovery) against what a strong user writes instead: cuBLAS GEMM over blocks of A's
// rows (FP32 SGEMM, and BF16 GemmEx with FP32 accumulation) with a streaming top-k of each block
// (chunk maxima give a lower bound of the block's k-th largest |value|; the entries above it and
// above the running k-th best are appended and merged). All in one run on one device.
//
//   dense_recovery_bench --m 131072 --k 16384 --p 131072 --d 3 --top 20 --planted 20
//
// A and B are N(0, 1) (cuRAND on the device); `planted` entries of size z * sigma (sigma =
// sqrt(m p k / b), the sketch's noise; default z = 10) own inner indices of their own. Recall: of
// the planted entries among each method's top entries (they are the product's largest).
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <curand.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "dense_recovery.hpp"
#include "sketch/cuda.hpp"
#include "sketch_bench_cuda.hpp"

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
struct Device {
  T* p = nullptr;
  explicit Device(std::size_t n) { check(cudaMalloc(&p, n * sizeof(T)), "cudaMalloc"); }
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
  ~Device() { cudaFree(p); }
};

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

using Position = std::pair<std::int64_t, std::int64_t>;

// Blocked GEMM + streaming top-k; gemm(r0, rows, c) writes C[r0 : r0 + rows, :] (column-major,
// ld = rows) into c. Returns the top positions (0-based) and the time.
template <class Gemm>
std::pair<std::vector<Position>, double> blocked_top_k(std::int64_t m, std::int64_t p, std::int64_t block_rows, std::size_t k,
                                                       Gemm&& gemm) {
  constexpr std::int64_t kChunk = 1024, kCapacity = 1 << 16;
  Device<float> c(static_cast<std::size_t>(block_rows * p)), maxima(static_cast<std::size_t>((block_rows * p + kChunk - 1) / kChunk));
  Device<unsigned long long> count(1);
  Device<std::int64_t> idx(kCapacity);
  Device<float> val(kCapacity);
  std::vector<std::pair<float, Position>> best;  // (|value|, position), the k largest so far
  std::vector<float> host_maxima;
  const double t0 = now_ms();
  for (std::int64_t r0 = 0; r0 < m; r0 += block_rows) {
    const std::int64_t rows = std::min(block_rows, m - r0), n = rows * p, chunks = (n + kChunk - 1) / kChunk;
    gemm(r0, rows, c.p);
    block_chunk_maxima(c.p, n, kChunk, maxima.p);
    host_maxima.resize(static_cast<std::size_t>(chunks));
    check(cudaMemcpy(host_maxima.data(), maxima.p, host_maxima.size() * sizeof(float), cudaMemcpyDeviceToHost), "maxima");
    // The k-th largest chunk maximum bounds the block's k-th largest |value| from below.
    std::nth_element(host_maxima.begin(), host_maxima.begin() + static_cast<std::ptrdiff_t>(k - 1), host_maxima.end(), std::greater<>());
    float tau = host_maxima[k - 1];
    if (best.size() >= k) tau = std::max(tau, best[k - 1].first);
    check(cudaMemset(count.p, 0, sizeof(unsigned long long)), "memset");
    block_select_at_least(c.p, n, tau, count.p, idx.p, val.p, kCapacity);
    unsigned long long found = 0;
    check(cudaMemcpy(&found, count.p, sizeof found, cudaMemcpyDeviceToHost), "count");
    if (found > static_cast<unsigned long long>(kCapacity)) throw std::runtime_error("streaming top-k: too many candidates in a block");
    std::vector<std::int64_t> hi(found);
    std::vector<float> hv(found);
    check(cudaMemcpy(hi.data(), idx.p, found * sizeof(std::int64_t), cudaMemcpyDeviceToHost), "idx");
    check(cudaMemcpy(hv.data(), val.p, found * sizeof(float), cudaMemcpyDeviceToHost), "val");
    for (std::size_t q = 0; q < found; ++q) best.push_back({std::fabs(hv[q]), {r0 + hi[q] % rows, hi[q] / rows}});
    std::sort(best.begin(), best.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
    if (best.size() > k) best.resize(k);
  }
  const double ms = now_ms() - t0;
  std::vector<Position> top;
  for (const auto& b : best) top.push_back(b.second);
  return {top, ms};
}

double recall(const std::vector<Position>& found, const std::set<Position>& planted) {
  std::size_t hits = 0;
  for (const auto& f : found) hits += planted.count(f);
  return static_cast<double>(hits) / static_cast<double>(planted.size());
}

}  // namespace

int main(int argc, char** argv) {
  std::int64_t m = 131072, K = 16384, p = 131072, block_rows = 8192, planted = 20;
  int d = 3;
  std::size_t top = 20;
  double z = 10;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string arg = argv[i];
    const double v = std::atof(argv[i + 1]);
    if (arg == "--m") m = static_cast<std::int64_t>(v);
    else if (arg == "--k") K = static_cast<std::int64_t>(v);
    else if (arg == "--p") p = static_cast<std::int64_t>(v);
    else if (arg == "--d") d = static_cast<int>(v);
    else if (arg == "--top") top = static_cast<std::size_t>(v);
    else if (arg == "--planted") planted = static_cast<std::int64_t>(v);
    else if (arg == "--z") z = v;
    else if (arg == "--block-rows") block_rows = static_cast<std::int64_t>(v);
    else {
      std::fprintf(stderr, "dense_recovery_bench: unknown option %s\n", arg.c_str());
      return 64;
    }
  }
  try {
    Device<float> a(static_cast<std::size_t>(m * K)), b(static_cast<std::size_t>(K * p));
    curandGenerator_t gen;
    check(curandCreateGenerator(&gen, CURAND_RNG_PSEUDO_PHILOX4_32_10), "curandCreateGenerator");
    check(curandSetPseudoRandomGeneratorSeed(gen, 1), "seed");
    check(curandGenerateNormal(gen, a.p, static_cast<std::size_t>(m * K), 0.0f, 1.0f), "normal A");
    check(curandGenerateNormal(gen, b.p, static_cast<std::size_t>(K * p), 0.0f, 1.0f), "normal B");
    curandDestroyGenerator(gen);
    const pagh::SketchParams params{.repetitions = d};
    const double buckets = static_cast<double>(pagh::sketch_length(m, p, params));
    const double value = z * std::sqrt(static_cast<double>(m) * static_cast<double>(p) * static_cast<double>(K) / buckets);
    std::set<Position> planted_at;
    std::srand(7);
    for (std::int64_t q = 0; q < planted; ++q) {  // inner index q: one entry in A's column, one in B's row
      const std::int64_t i = std::rand() % m, j = std::rand() % p;
      const float s = static_cast<float>(std::sqrt(value)), t = q % 2 ? -s : s;
      check(cudaMemset(a.p + q * m, 0, static_cast<std::size_t>(m) * sizeof(float)), "plant");
      zero_row(b.p, K, p, q);
      check(cudaMemcpy(a.p + q * m + i, &s, sizeof s, cudaMemcpyHostToDevice), "plant");
      check(cudaMemcpy(b.p + q + j * K, &t, sizeof t, cudaMemcpyHostToDevice), "plant");
      planted_at.insert({i, j});
    }
    check(cudaDeviceSynchronize(), "setup");

    double sketch_ms = 0, recover_ms = 0, sketch_recall = 0;
    std::string path;
    {
      pagh::cuda::Compressor plan(m, K, p, params);
      path = plan.path();
      plan.execute(a.p, m, b.p, K);  // warm-up
      plan.synchronize();
      const double t0 = now_ms();
      plan.execute(a.p, m, b.p, K);
      plan.synchronize();
      sketch_ms = now_ms() - t0;
      const pagh::cuda::DeviceProduct product = plan.product();
      const double t1 = now_ms();
      const auto found = product.top_k(top);
      recover_ms = now_ms() - t1;
      std::vector<Position> positions;
      for (const auto& e : found) positions.push_back({e.row, e.col});
      sketch_recall = recall(positions, planted_at);
    }
    cublasHandle_t handle;
    check(cublasCreate(&handle), "cublasCreate");
    const float one = 1, zero = 0;
    const auto [sgemm_top, sgemm_ms] = blocked_top_k(m, p, block_rows, top, [&](std::int64_t r0, std::int64_t rows, float* c) {
      check(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(rows), static_cast<int>(p), static_cast<int>(K), &one, a.p + r0,
                        static_cast<int>(m), b.p, static_cast<int>(K), &zero, c, static_cast<int>(rows)),
            "sgemm");
    });
    Device<std::uint16_t> a16(static_cast<std::size_t>(m * K)), b16(static_cast<std::size_t>(K * p));
    round_to_bf16(a.p, a16.p, static_cast<std::size_t>(m * K));
    round_to_bf16(b.p, b16.p, static_cast<std::size_t>(K * p));
    check(cudaDeviceSynchronize(), "bf16 copies");
    const auto [bf16_top, bf16_ms] = blocked_top_k(m, p, block_rows, top, [&](std::int64_t r0, std::int64_t rows, float* c) {
      check(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(rows), static_cast<int>(p), static_cast<int>(K), &one, a16.p + r0,
                         CUDA_R_16BF, static_cast<int>(m), b16.p, CUDA_R_16BF, static_cast<int>(K), &zero, c, CUDA_R_32F,
                         static_cast<int>(rows), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
            "bf16 gemm");
    });
    cublasDestroy(handle);
    std::printf("%8s %6s %8s %2s %8s %11s %11s %7s %15s %7s %15s %7s  %s\n", "m", "k", "p", "d", "b", "sketch_ms", "recover_ms",
                "recall", "sgemm_topk_ms", "recall", "bf16_topk_ms", "recall", "sketch path");
    std::printf("%8lld %6lld %8lld %2d %8.0f %11.1f %11.2f %7.2f %15.1f %7.2f %15.1f %7.2f  %s\n", static_cast<long long>(m),
                static_cast<long long>(K), static_cast<long long>(p), d, buckets, sketch_ms, recover_ms, sketch_recall, sgemm_ms,
                recall(sgemm_top, planted_at), bf16_ms, recall(bf16_top, planted_at), path.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dense_recovery_bench: %s\n", e.what());
    return 70;
  }
  return 0;
}
