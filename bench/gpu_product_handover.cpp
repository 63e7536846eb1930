// What a GPU product costs between the sketch and the first answers, the two ways pagh::sketch can
// hand it over, in one process on the same product: "host copy" = DeviceProduct::to_host (the d * b
// values and the tables copied into pageable host memory, the Frobenius estimate summed there) held
// beside the device copy for the queries (with_device_queries), then the NoiseModel from the host
// values; "kept" = pagh::cuda::kept_on_device (the tables copied, the statistics measured on the
// device, no copy of the values), then the NoiseModel from those statistics. Both then answer what
// pagh-mm -k asks: top-k on the device and the assessment of each reported entry.
//
//   gpu_product_handover N PER [K] [REPS]   sparse N x N times N x N, PER nonzeros per row of A and
//                                           column of B (integers), b from the default pad, top-K
// Prints one CSV line per run: mode,run,handover_ms,noise_model_ms,answers_ms,total_ms,same
// (same: the two modes' answers and noise model numbers equal, checked on every run).
#include <Eigen/SparseCore>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <random>
#include <vector>

#include "sketch/cuda.hpp"
#include "sketch/noise_model.hpp"

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

Eigen::SparseMatrix<double> random_sparse(int n, int per, bool by_rows, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> index(0, n - 1), value(-9, 9);
  std::vector<Eigen::Triplet<double>> t;
  t.reserve(static_cast<std::size_t>(n) * static_cast<std::size_t>(per));
  for (int i = 0; i < n; ++i)
    for (int e = 0; e < per; ++e) {
      int v = 0;
      while (v == 0) v = value(rng);
      t.emplace_back(by_rows ? i : index(rng), by_rows ? index(rng) : i, v);
    }
  Eigen::SparseMatrix<double> M(n, n);
  M.setFromTriplets(t.begin(), t.end());
  return M;
}

struct Answers {
  std::vector<pagh::Entry> top;
  std::vector<double> agreement;
  double frobenius = 0, half_width = 0, threshold = 0, tail_sigma = 0;
  bool operator==(const Answers& o) const {
    if (top.size() != o.top.size()) return false;
    for (std::size_t i = 0; i < top.size(); ++i)
      if (top[i].row != o.top[i].row || top[i].col != o.top[i].col || top[i].value != o.top[i].value) return false;
    return agreement == o.agreement && frobenius == o.frobenius && half_width == o.half_width && threshold == o.threshold &&
           tail_sigma == o.tail_sigma;
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: gpu_product_handover N PER [K] [REPS]\n");
    return 64;
  }
  const int n = std::atoi(argv[1]), per = std::atoi(argv[2]);
  const std::size_t k = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 10;
  const int reps = argc > 4 ? std::atoi(argv[4]) : 3;
  std::mt19937_64 rng(3);
  const Eigen::SparseMatrix<double> A = random_sparse(n, per, true, rng), B = random_sparse(n, per, false, rng);
  const pagh::SketchParams params{.repetitions = 3, .seed = 1};
  std::printf("mode,run,handover_ms,noise_model_ms,answers_ms,total_ms,same\n");
  for (int run = 0; run <= reps; ++run) {  // run 0: warm-up, not printed
    Answers got[2];
    for (int mode = 0; mode < 2; ++mode) {
      pagh::cuda::DeviceProduct device = pagh::cuda::compress(A, B, params);
      const auto start = Clock::now();
      std::optional<pagh::CompressedProduct> made;
      if (mode == 0) {
        pagh::CompressedProduct host = device.to_host();  // before the device product moves
        made.emplace(pagh::cuda::with_device_queries(std::move(host), std::move(device)));
      } else {
        made.emplace(pagh::cuda::kept_on_device(std::move(device)));
      }
      const pagh::CompressedProduct& c = *made;
      const double handover = ms_since(start);
      const auto noise_start = Clock::now();
      const pagh::NoiseModel noise(c);
      const double noise_ms = ms_since(noise_start);
      const auto answers_start = Clock::now();
      Answers& a = got[mode];
      a.top = c.top_k(k);
      for (const pagh::Entry& e : a.top) a.agreement.push_back(noise.assess(c, e).agreement);
      a.frobenius = c.frobenius_estimate(), a.half_width = noise.half_width(), a.threshold = noise.agreement_threshold();
      a.tail_sigma = noise.tail_sigma();
      const double answers = ms_since(answers_start), total = ms_since(start);
      if (run > 0)
        std::printf("%s,%d,%.2f,%.2f,%.2f,%.2f,%s\n", mode == 0 ? "host copy" : "kept", run, handover, noise_ms, answers, total,
                    mode == 0 ? "-" : (got[0] == got[1] ? "1" : "0"));
    }
  }
  return 0;
}
