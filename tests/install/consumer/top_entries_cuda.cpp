// The library example on the GPU through an installed pagh::sketch_cuda: linking it registers
// Backend::cuda with pagh::sketch (fails here if it did not); without a usable device it says so and
// succeeds; with one, the planted entry wins, answered on the device.
#include <sketch/sketch.hpp>

#include <cstdio>
#include <string>

int main() {
  std::string why;
  if (!pagh::backend_available(pagh::Backend::cuda, &why)) {
    if (why.find("not linked") != std::string::npos) {
      std::printf("pagh::sketch_cuda linked but Backend::cuda not registered: %s\n", why.c_str());
      return 1;
    }
    std::printf("pagh::sketch_cuda linked; no usable device (%s)\n", why.c_str());
    return 0;
  }
  Eigen::MatrixXd A = Eigen::MatrixXd::Random(300, 200), B = Eigen::MatrixXd::Random(200, 400);
  A(7, 0) = B(0, 11) = 60.0;
  const pagh::CompressedProduct C = pagh::sketch(A, B, {.repetitions = 3, .seed = 42, .backend = pagh::Backend::cuda});
  const pagh::Entry best = C.top_k(1).front();
  std::printf("(%lld, %lld) ~ %.1f (on the device: %s)\n", static_cast<long long>(best.row), static_cast<long long>(best.col),
              best.value, C.on_device() ? "yes" : "no");
  return best.row == 7 && best.col == 11 && C.on_device() ? 0 : 1;
}
