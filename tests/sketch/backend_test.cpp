// pagh::sketch with SketchParams::backend, and a CompressedProduct that holds device sketches: the
// queries go where the sketches are, subtract() brings them back to the host. On the CPU the device
// side is a recording stand-in; sketch_cuda_test runs the real one.
#include <gtest/gtest.h>

#include <Eigen/Dense>

#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "pagh/error.hpp"
#include "sketch/compress.hpp"
#include "sketch/sketch.hpp"
#include "sketch_test_support.hpp"

namespace {

using pagh::test::expect_same_sketches;
using pagh::test::gaussian;

// Answers every query with a marker entry and counts the calls.
struct RecordingDevice final : pagh::DeviceSketches {
  mutable int calls = 0;
  std::vector<pagh::Entry> top_k(std::size_t, pagh::Recovery, pagh::RecoveryStats*) const override {
    ++calls;
    return {pagh::Entry{7, 7, -1.0, 0.0}};
  }
  std::vector<pagh::Entry> above(double, std::size_t, pagh::Recovery, pagh::RecoveryStats*) const override {
    ++calls;
    return {pagh::Entry{8, 8, -2.0, 0.0}};
  }
  Eigen::MatrixXd decompress(std::size_t) const override {
    ++calls;
    return Eigen::MatrixXd::Constant(1, 1, -3.0);
  }
};

TEST(Backend, CpuIsTheCpuEngine) {
  std::mt19937_64 rng(11);
  const Eigen::MatrixXd A = gaussian(40, 30, rng), B = gaussian(30, 50, rng);
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    const pagh::SketchParams params{.repetitions = 3, .seed = seed, .backend = pagh::Backend::cpu};
    const pagh::CompressedProduct s = pagh::sketch(A, B, params), c = pagh::compress(A, B, params);
    expect_same_sketches(s, c, "seed " + std::to_string(seed));
    EXPECT_FALSE(s.on_device());
    EXPECT_EQ(s.top_k(5).size(), 5u);
  }
  const Eigen::SparseMatrix<double> As = A.sparseView(), Bs = B.sparseView();
  expect_same_sketches(pagh::sketch(As, Bs, {.seed = 4}), pagh::compress(As, Bs, {.seed = 4}), "sparse");
  const Eigen::MatrixXf Af = A.cast<float>(), Bf = B.cast<float>();
  expect_same_sketches(pagh::sketch(Af, Bf, {.seed = 5}), pagh::compress(Af, Bf, {.seed = 5}), "f32");
}

// This test program does not link pagh::sketch_cuda: Backend::cuda is refused with the reason.
TEST(Backend, CudaWithoutTheCudaLibraryIsRefused) {
  std::string why;
  EXPECT_TRUE(pagh::backend_available(pagh::Backend::cpu, &why));
  EXPECT_FALSE(pagh::backend_available(pagh::Backend::cuda, &why));
  EXPECT_NE(why.find("pagh::sketch_cuda"), std::string::npos) << why;
  const Eigen::MatrixXd A = Eigen::MatrixXd::Ones(4, 3), B = Eigen::MatrixXd::Ones(3, 5);
  try {
    (void)pagh::sketch(A, B, {.backend = pagh::Backend::cuda});
    FAIL() << "Backend::cuda ran without the CUDA library";
  } catch (const pagh::Error& e) {
    EXPECT_NE(std::string(e.what()).find("pagh::sketch_cuda"), std::string::npos) << e.what();
  }
  EXPECT_STREQ(pagh::to_string(pagh::Backend::cuda), "cuda");
  EXPECT_STREQ(pagh::to_string(pagh::Backend::cpu), "cpu");
}

TEST(Backend, QueriesGoWhereTheSketchesAreUntilSubtractChangesThem) {
  std::mt19937_64 rng(12);
  const Eigen::MatrixXd A = gaussian(20, 10, rng), B = gaussian(10, 20, rng);
  const pagh::CompressedProduct host = pagh::compress(A, B, {.seed = 9});
  auto device = std::make_shared<RecordingDevice>();
  pagh::CompressedProduct held = pagh::CompressedProduct::with_device_sketches(host, device);
  ASSERT_TRUE(held.on_device());
  expect_same_sketches(held, host, "the host copy is unchanged");
  EXPECT_EQ(held.top_k(3).at(0).value, -1.0);
  EXPECT_EQ(held.above(0.5).at(0).value, -2.0);
  EXPECT_EQ(held.decompress()(0, 0), -3.0);
  EXPECT_EQ(device->calls, 3);
  // Estimates of single entries read the host sketches.
  EXPECT_EQ(held.estimate(1, 2), host.estimate(1, 2));
  // A copy shares the device sketches; subtract() on it answers from its own host sketches after.
  pagh::CompressedProduct copy = held;
  EXPECT_TRUE(copy.on_device());
  const pagh::Entry known{0, 0, host.estimate(0, 0), 0.0};
  copy.subtract(std::span<const pagh::Entry>(&known, 1));
  EXPECT_FALSE(copy.on_device());
  pagh::CompressedProduct expected = host;
  expected.subtract(std::span<const pagh::Entry>(&known, 1));
  const auto got = copy.top_k(4), want = expected.top_k(4);
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].row, want[i].row);
    EXPECT_EQ(got[i].col, want[i].col);
    EXPECT_EQ(got[i].value, want[i].value);
  }
  EXPECT_EQ(device->calls, 3);
  EXPECT_TRUE(held.on_device());  // the original keeps its device sketches
  // The limit on decompression is the host's, checked before the device is asked.
  EXPECT_THROW((void)held.decompress(8), pagh::Error);
  EXPECT_EQ(device->calls, 3);
}

}  // namespace
