// The README's library example: the largest entries of A*B from two Eigen matrices.
#include <sketch/sketch.hpp>

#include <cstdio>

int main() {
  Eigen::MatrixXd A = Eigen::MatrixXd::Random(300, 200), B = Eigen::MatrixXd::Random(200, 400);
  A(7, 0) = B(0, 11) = 60.0;  // plant one large entry: (AB)(7, 11) gets 60 * 60 = 3600
  pagh::CompressedProduct C = pagh::sketch(A, B, {.repetitions = 3, .seed = 42});
  for (const pagh::Entry& e : C.top_k(3))
    std::printf("(%lld, %lld) ~ %.1f +- %.1f (exact %.1f)\n", static_cast<long long>(e.row), static_cast<long long>(e.col), e.value,
                e.spread, (A * B)(e.row, e.col));
  const pagh::Entry best = C.top_k(1).front();
  return best.row == 7 && best.col == 11 ? 0 : 1;
}
