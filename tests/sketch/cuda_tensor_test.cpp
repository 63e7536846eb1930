// The wide kernel's tensor-core rounds (compress/paths/tensor_rounds.cuh): H_1024 on each warp's
// slots from three exact bf16 parts per value and FP32 accumulation. Against an FP64 reference,
// beside FP32 butterflies on the same inputs: random, wide dynamic range, full 24-bit significands,
// and integers (bit for bit); the sketch on that path against the FP32 wide kernel and the CPU.
// The tiles' layout is checked on the host in cuda_tensor_layout_test.cpp.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "cuda_test_support.hpp"
#include "sketch/compress.hpp"
#include "tensor_rounds_kernel.hpp"

namespace {

using namespace pagh::cuda_test;

constexpr int kRun = 1024;           // the rounds transform runs of 1024 values
constexpr int kVector = 1 << 14;     // one block's buffer
constexpr int kVectors = 24;         // 384 runs per input

template <class T>
void fwht_runs(std::vector<T>& x) {  // in place, every run of kRun, radix-2 folklore
  for (std::size_t base = 0; base < x.size(); base += kRun)
    for (int h = 1; h < kRun; h *= 2)
      for (int i = 0; i < kRun; i += 2 * h)
        for (int j = i; j < i + h; ++j) {
          const T a = x[base + j], b = x[base + j + h];
          x[base + j] = a + b, x[base + j + h] = a - b;
        }
}

// The tensor rounds on the device; every output poisoned (NaN) first and checked written.
std::vector<float> on_device(const std::vector<float>& in) {
  std::vector<float> out(in.size());
  float *d_in = nullptr, *d_out = nullptr;
  EXPECT_EQ(cudaMalloc(&d_in, in.size() * 4), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&d_out, in.size() * 4), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(d_in, in.data(), in.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemset(d_out, 0xff, in.size() * 4), cudaSuccess);
  EXPECT_EQ(apply_tensor_rounds(d_in, d_out, static_cast<int>(in.size() / kVector)), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(out.data(), d_out, out.size() * 4, cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(d_in);
  cudaFree(d_out);
  for (std::size_t i = 0; i < out.size(); ++i)
    if (std::isnan(out[i])) {
      ADD_FAILURE() << "output " << i << " not written (or NaN)";
      break;
    }
  return out;
}

struct Errors {
  double tensor = 0, fp32 = 0;  // ||y - ref|| / ||ref|| over all runs
  double worst_scaled = 0;      // max over runs of max |y - ref| / ||x_run||_2, tensor
};

Errors errors_of(const std::vector<float>& in) {
  std::vector<double> ref(in.begin(), in.end());
  fwht_runs(ref);
  std::vector<float> fp32 = in;
  fwht_runs(fp32);
  const std::vector<float> tensor = on_device(in);
  Errors e;
  double norm = 0, dt = 0, df = 0;
  for (std::size_t base = 0; base < in.size(); base += kRun) {
    double run_norm = 0, run_worst = 0;
    for (int j = 0; j < kRun; ++j) run_norm += static_cast<double>(in[base + j]) * in[base + j];
    for (int j = 0; j < kRun; ++j) {
      const std::size_t i = base + j;
      norm += ref[i] * ref[i];
      dt += (tensor[i] - ref[i]) * (tensor[i] - ref[i]);
      df += (fp32[i] - ref[i]) * (fp32[i] - ref[i]);
      run_worst = std::max(run_worst, std::fabs(tensor[i] - ref[i]));
    }
    if (run_norm > 0) e.worst_scaled = std::max(e.worst_scaled, run_worst / std::sqrt(run_norm));
  }
  e.tensor = std::sqrt(dt / norm), e.fp32 = std::sqrt(df / norm);
  return e;
}

constexpr double kEps = std::numeric_limits<float>::epsilon();

// Random and wide-dynamic-range inputs: the error stays within a small constant of FP32 rounding.
// Bounds set from the arithmetic before the first run: an output is rounded four times (two MMA
// axes, each accumulating 16 exact parts of which only the last, hi, carries weight; two butterfly
// stages) where the FP32 butterflies round ten times. A tensor-core accumulation aligns to its
// largest term and truncates: up to about two units of that term (rms ~1.2) against 0.29 for
// rounding to nearest, so the norm-wise error is sqrt((2 * 1.2^2 + 2 * 0.29^2) / (10 * 0.29^2))
// ~ 3x the FP32 path's at worst: within 4x; and every output within log2(1024) eps of its run's
// 2-norm (the bound the fwht tests use for FP32).
TEST(SketchCudaTensor, RoundsStayWithinFp32Rounding) {
  SKIP_WITHOUT_GPU();
  TRACE_SEED();
  std::mt19937_64 rng(run_seed());
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-40, 40);
  for (const bool wide_range : {false, true}) {
    SCOPED_TRACE(wide_range ? "dynamic range 2^-40..2^40 within each run" : "gaussian");
    std::vector<float> x(static_cast<std::size_t>(kVectors) * kVector);
    for (float& v : x) v = wide_range ? std::ldexp(normal(rng), exponent(rng)) : normal(rng);
    const Errors e = errors_of(x);
    std::printf("tensor rounds (%s): relative error %.3g (FP32 butterflies %.3g); worst |err| / ||x|| %.3g eps\n",
                wide_range ? "wide range" : "gaussian", e.tensor, e.fp32, e.worst_scaled / kEps);
    EXPECT_GT(e.tensor, 0.0) << "exact on non-integer data would mean the check compares the reference with itself";
    EXPECT_LE(e.tensor, 4 * e.fp32) << "FP32 butterflies: " << e.fp32;
    EXPECT_LE(e.worst_scaled, std::log2(static_cast<double>(kRun)) * kEps);
  }
}

// A single value per run, any FP32 value: every output is +-x exactly, which needs the three
// parts to hold all 24 significant bits (two bf16 parts would keep 16) and the accumulation to
// add them without loss.
TEST(SketchCudaTensor, SpikesWithFullSignificandsAreExact) {
  SKIP_WITHOUT_GPU();
  TRACE_SEED();
  std::mt19937_64 rng(run_seed());
  std::uniform_int_distribution<std::uint32_t> significand(0, (1u << 23) - 1);
  std::uniform_int_distribution<int> exponent(-100, 100), position(0, kRun - 1);
  std::vector<float> x(static_cast<std::size_t>(kVectors) * kVector, 0.0f);
  std::vector<int> where;
  for (std::size_t base = 0; base < x.size(); base += kRun) {
    const int at = position(rng);
    const std::uint32_t bits = (significand(rng) | 1u) | (static_cast<std::uint32_t>(127 + exponent(rng)) << 23) | (rng() & 1u) << 31;
    std::memcpy(&x[base + at], &bits, 4);
    where.push_back(at);
  }
  std::vector<double> ref(x.begin(), x.end());
  fwht_runs(ref);
  const std::vector<float> y = on_device(x);
  for (std::size_t i = 0; i < x.size(); ++i)
    ASSERT_EQ(static_cast<double>(y[i]), ref[i]) << "output " << i << " (spike at " << where[i / kRun] << " of its run)";
}

// Integer inputs whose sums stay below 2^24: bit for bit equal to the exact transform.
TEST(SketchCudaTensor, IntegerInputsAreBitExact) {
  SKIP_WITHOUT_GPU();
  TRACE_SEED();
  std::mt19937_64 rng(run_seed());
  for (const int range : {1, 8, 4096}) {
    SCOPED_TRACE("integers in [-" + std::to_string(range) + ", " + std::to_string(range) + "]");
    std::uniform_int_distribution<int> value(-range, range);
    std::vector<float> x(static_cast<std::size_t>(kVectors) * kVector);
    for (float& v : x) v = static_cast<float>(value(rng));
    std::vector<double> ref(x.begin(), x.end());
    fwht_runs(ref);
    const std::vector<float> y = on_device(x);
    for (std::size_t i = 0; i < x.size(); ++i) ASSERT_EQ(static_cast<double>(y[i]), ref[i]) << "output " << i;
  }
}

}  // namespace

namespace {

using namespace pagh::cuda_test;

// The sketch on the tensor-core path (PathTuning::tensor_cores) against the FP32 wide kernel and
// the CPU engine (FP64): within rounding of both, deterministic, and bit for bit on small-integer
// inputs (every sum exact). b = 2^15 (two folded slices), 2^17 (eight) and 2^18 (sixteen).
TEST(SketchCudaTensor, SketchAgreesWithFp32PathAndCpu) {
  SKIP_WITHOUT_GPU();
  TRACE_SEED();
  std::mt19937_64 rng(run_seed());
  const pagh::cuda::DeviceOptions tensor{.tuning = {.tensor_cores = true}}, fp32{.tuning = {.tensor_cores = false}};
  for (const std::int64_t m : {2101, 16000, 16400}) {
    SCOPED_TRACE("m = " + std::to_string(m));
    const std::int64_t K = 60, p = 1900;
    const Dense A = gaussian(m, K, rng), B = gaussian(K, p, rng);
    const pagh::SketchParams params{.repetitions = 2, .seed = rng(), .precision = fwht::DType::f64};
    pagh::SketchParams f32_params = params;
    f32_params.precision = fwht::DType::f32;
    EXPECT_NE(pagh::cuda::Compressor(m, K, p, f32_params, tensor).path().find("tensor"), std::string::npos);
    EXPECT_EQ(pagh::cuda::Compressor(m, K, p, f32_params, fp32).path().find("tensor"), std::string::npos);
    const auto on_tensor = device_sketches(pagh::cuda::compress(A, B, f32_params, tensor));
    EXPECT_EQ(first_difference(on_tensor, device_sketches(pagh::cuda::compress(A, B, f32_params, tensor))), -1) << "two runs differ";
    const auto on_fp32 = device_sketches(pagh::cuda::compress(A, B, f32_params, fp32));
    const auto exact = host_sketches(pagh::compress(A, B, params));  // FP64 throughout
    ASSERT_EQ(on_tensor.size(), exact.size());
    double norm = 0, err_tensor = 0, err_fp32 = 0;
    for (std::size_t i = 0; i < exact.size(); ++i) {
      norm += exact[i] * exact[i];
      err_tensor += (on_tensor[i] - exact[i]) * (on_tensor[i] - exact[i]);
      err_fp32 += (on_fp32[i] - exact[i]) * (on_fp32[i] - exact[i]);
    }
    err_tensor = std::sqrt(err_tensor / norm), err_fp32 = std::sqrt(err_fp32 / norm);
    std::printf("sketch m = %lld: relative error vs FP64, tensor cores %.3g, FP32 wide kernel %.3g\n", static_cast<long long>(m), err_tensor,
                err_fp32);
    // The transform's share of the error within 4x (RoundsStayWithinFp32Rounding); the scatter,
    // products and inverse are the same arithmetic: the whole sketch within 4x as well.
    EXPECT_LE(err_tensor, 4 * err_fp32);
    EXPECT_GT(err_tensor, 0.0);
  }
  const Dense A = small_integers(2101, 90, 0.3, rng), B = small_integers(90, 1900, 0.3, rng);
  const pagh::SketchParams params{.repetitions = 3, .seed = rng()};
  EXPECT_EQ(first_difference(device_sketches(pagh::cuda::compress(A, B, params, tensor)),
                             device_sketches(pagh::cuda::compress(A, B, params, fp32))),
            -1)
      << "small integers: every sum is exact on both paths";
}

}  // namespace
