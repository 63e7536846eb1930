// fwht-demo: a small tour of the fwht library on a bundled vector (data/fwht_demo.txt) until the
// pagh-mm command exists. Prints H x, checks the round trip H(Hx)/n = x, shows the XOR-convolution
// theorem, and times one 2^20-point FP32 transform.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "fwht/fwht.hpp"

namespace {

void print(const char* label, const std::vector<double>& v) {
  std::printf("%-22s", label);
  for (double x : v) std::printf(" %7.3g", x);
  std::printf("\n");
}

constexpr const char* kUsage =
    "usage: fwht-demo VECTOR.txt\n"
    "\n"
    "A small tour of the fwht library (the Walsh-Hadamard transform behind pagh-mm) on a vector of\n"
    "whitespace-separated numbers whose count is a power of two, e.g. data/fwht_demo.txt: prints\n"
    "H x, checks the round trip H(Hx)/n = x, shows the XOR-convolution theorem, and times one\n"
    "2^20-point FP32 transform.\n"
    "\n"
    "Exit status: 0 success, 64 usage, 65 bad data, 66 cannot open the file, 70 internal error.\n";

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h")) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (argc != 2) {
    std::fputs(kUsage, stderr);
    return 64;
  }
  std::ifstream file(argv[1]);
  if (!file) {
    std::fprintf(stderr, "fwht-demo: %s: cannot open file\n", argv[1]);
    return 66;
  }
  std::vector<double> x;
  for (double v; file >> v;) x.push_back(v);
  if (!file.eof()) {
    std::fprintf(stderr, "fwht-demo: %s: entry %zu is not a number\n", argv[1], x.size() + 1);
    return 65;
  }
  try {
    print("x", x);
    std::vector<double> y = x;
    fwht::transform(std::span<double>(y));
    print("H x", y);
    fwht::transform(std::span<double>(y), {.normalization = fwht::Normalization::inverse});
    print("H(H x) / n", y);

    // XOR convolution through the transform: (a (*) b)_i = sum_{j^k=i} a_j b_k = H^-1(Ha . Hb).
    std::vector<std::int64_t> a(x.size()), b(x.size(), 0), direct(x.size(), 0);
    for (std::size_t i = 0; i < x.size(); ++i) a[i] = static_cast<std::int64_t>(i) + 1;
    b[x.size() - 1] = 1;
    for (std::size_t j = 0; j < a.size(); ++j)
      for (std::size_t k = 0; k < b.size(); ++k) direct[j ^ k] += a[j] * b[k];
    fwht::transform(std::span<std::int64_t>(a));
    fwht::transform(std::span<std::int64_t>(b));
    for (std::size_t i = 0; i < a.size(); ++i) a[i] *= b[i];
    fwht::transform(std::span<std::int64_t>(a), {.normalization = fwht::Normalization::inverse, .check_overflow = true});
    std::printf("XOR convolution with e_{n-1}: %s (reverses the order of 1..n)\n", a == direct ? "matches the direct sum" : "MISMATCH");

    std::vector<float> big(std::size_t{1} << 20);
    std::mt19937 rng(1);
    std::normal_distribution<float> normal;
    for (float& v : big) v = normal(rng);
    fwht::Plan plan({.n = static_cast<std::int64_t>(big.size())}, fwht::DType::f32, {.threads = 1});
    plan.execute(std::span<float>(big));  // warm-up
    const auto t0 = std::chrono::steady_clock::now();
    plan.execute(std::span<float>(big));
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::printf("one 2^20-point FP32 transform on one thread: %.3f ms\n", ms);
    return a == direct ? 0 : 70;
  } catch (const pagh::Error& e) {
    std::fprintf(stderr, "fwht-demo: %s: %s\n", argv[1], e.what());
    return 65;
  }
}
