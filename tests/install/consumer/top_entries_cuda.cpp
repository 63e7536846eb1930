// The library example on the GPU through an installed pagh::sketch_cuda: without a usable device
// it says so and succeeds (linking is what this checks there); with one, the planted entry wins.
#include <sketch/cuda.hpp>

#include <cstdio>
#include <string>

int main() {
  std::string why;
  if (!pagh::cuda::available(&why)) {
    std::printf("pagh::sketch_cuda linked; no usable device (%s)\n", why.c_str());
    return 0;
  }
  Eigen::MatrixXd A = Eigen::MatrixXd::Random(300, 200), B = Eigen::MatrixXd::Random(200, 400);
  A(7, 0) = B(0, 11) = 60.0;
  const pagh::cuda::DeviceProduct C = pagh::cuda::compress(A, B, {.repetitions = 3, .seed = 42});
  const pagh::Entry best = C.top_k(1).front();
  std::printf("(%lld, %lld) ~ %.1f\n", static_cast<long long>(best.row), static_cast<long long>(best.col), best.value);
  return best.row == 7 && best.col == 11 ? 0 : 1;
}
