#include "study_grid.hpp"

#include <cmath>

#include "cli_error.hpp"
#include "matrix_io/synthetic.hpp"

namespace pagh_mm {

namespace mio = pagh::matrix_io;

StudyPreset study_preset(const std::string& name) {
  const std::vector<fwht::DType> all_precisions = {fwht::DType::f64, fwht::DType::f32, fwht::DType::f16, fwht::DType::bf16};
  if (name == "smoke") return {"smoke", 48, 1, {2, 8}, {1, 3}, all_precisions, 10};
  if (name == "default") return {"default", 384, 3, {1, 2, 4, 8, 16}, {1, 3, 5, 9}, all_precisions, 10};
  if (name == "large") return {"large", 4096, 5, {1, 2, 4, 8, 16, 32}, {1, 3, 5, 9, 15}, all_precisions, 100};
  usage_error("--preset", "unknown preset '" + name + "' (expected smoke, default, large or real)");
}

std::vector<StudyConfig> study_configs(const StudyPreset& preset) {
  std::vector<StudyConfig> configs;
  for (double pad : preset.pads)
    for (int d : preset.sketches) configs.push_back({"pad_d", pad, d});
  // fp64 first: the reference of the precision sweep.
  for (fwht::DType precision : preset.precisions) {
    for (auto stabilization : {fwht::Stabilization::none, fwht::Stabilization::kahan, fwht::Stabilization::neumaier})
      configs.push_back({"precision", 8, 3, precision, stabilization, fwht::Algorithm::folklore});
    configs.push_back({"precision", 8, 3, precision, fwht::Stabilization::none, fwht::Algorithm::alman_rao});
  }
  return configs;
}

std::vector<std::string> study_workload_names() { return {"planted-dense", "sparse", "low-rank-sparse", "covariance"}; }

StudyWorkload make_workload(const std::string& name, std::int64_t n, std::uint64_t seed) {
  StudyWorkload w;
  w.name = name;
  if (name == "planted-dense") {
    // 10 planted entries, so that they are the exact top 10; 40x the background standard
    // deviation sqrt(k), so that they stand out of the sketch's noise ||C||_F/sqrt(b) ~ n/sqrt(pad)
    // from a moderate pad on (at 10x, the generator's default, they stay buried at n = 384).
    mio::PlantedDenseOptions o;
    o.m = o.k = o.p = n, o.seed = seed, o.planted = 10;
    o.planted_value = 40.0 * std::sqrt(static_cast<double>(n));
    auto pair = mio::planted_dense(o);
    w.description = "dense Gaussian A, B; 10 entries of 40x the background std. dev. planted in C";
    w.a = std::move(pair.a), w.b = std::move(pair.b);
  } else if (name == "sparse") {
    mio::SparseProductOptions o;
    o.m = o.k = o.p = 4 * n, o.seed = seed, o.a_per_row = 4, o.b_per_col = 4;
    auto pair = mio::sparse_product(o);
    w.description = "sparse A (4 per row), B (4 per column); C has about 16 m nonzeros";
    w.a = std::move(pair.a), w.b = std::move(pair.b);
  } else if (name == "low-rank-sparse") {
    mio::LowRankPlusSparseOptions o;
    o.m = o.k = o.p = n, o.seed = seed, o.rank = 8;
    auto pair = mio::low_rank_plus_sparse(o);
    w.description = "rank-8 Gaussian part plus 1% sparse entries of std. dev. 10";
    w.a = std::move(pair.a), w.b = std::move(pair.b);
  } else if (name == "covariance") {
    mio::SampleCovarianceOptions o;
    o.samples = 2 * n, o.features = n, o.seed = seed, o.pairs = 8, o.correlation = 0.9;
    auto pair = mio::sample_covariance(o);
    w.description = "X^T X for 2n samples of n features, 8 feature pairs with correlation 0.9";
    w.a = std::move(pair.a), w.b = std::move(pair.b);
  } else {
    usage_error("--workloads", "unknown workload '" + name + "' (expected planted-dense, sparse, low-rank-sparse or covariance)");
  }
  const auto dims = [](const MatrixData& x, bool rows) {
    return std::visit([rows](const auto& mat) { return static_cast<std::int64_t>(rows ? mat.rows() : mat.cols()); }, x);
  };
  w.m = dims(w.a, true), w.k = dims(w.a, false), w.p = dims(w.b, false);
  return w;
}

}  // namespace pagh_mm
