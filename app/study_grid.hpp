// What `pagh-mm study` measures: the presets (sizes, seeds, grids) and the workloads, built with the
// synthetic generators of matrix_io so that every run is reproducible from its seed.
//
// Each workload is swept two ways around a baseline (pad 8, d 3, fp32, no stabilization, folklore):
//   "pad_d"     pad x d at the baseline arithmetic: the estimator's own error, which theory bounds
//               by ||C||_F/sqrt(b) per single estimate;
//   "precision" precision x stabilization (and alman-rao) at pad 8, d 3: the arithmetic's error,
//               measured against the fp64 sketch with the same hash functions, so that the
//               estimator's error cancels out.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backend.hpp"
#include "fwht/options.hpp"

namespace pagh_mm {

struct StudyPreset {
  std::string name;
  std::int64_t n = 0;  // the dimension that sets every workload's size (see make_workload)
  int seeds = 0;
  std::vector<double> pads;
  std::vector<int> sketches;
  std::vector<fwht::DType> precisions;
  std::size_t top_k = 10;
};

// smoke (seconds, for tests), default (a few minutes on 2 CPU cores), large (for a GPU).
StudyPreset study_preset(const std::string& name);

struct StudyConfig {
  std::string sweep;  // "pad_d" or "precision"
  double pad = 8;
  int sketches = 3;
  fwht::DType precision = fwht::DType::f32;
  fwht::Stabilization stabilization = fwht::Stabilization::none;
  fwht::Algorithm algorithm = fwht::Algorithm::folklore;
};

// Every configuration of both sweeps; in the precision sweep the fp64 baseline comes first, since
// the other precisions are measured against it.
std::vector<StudyConfig> study_configs(const StudyPreset& preset);

struct StudyWorkload {
  std::string name, description;
  MatrixData a, b;
  std::int64_t m = 0, k = 0, p = 0;
};

std::vector<std::string> study_workload_names();  // planted-dense, sparse, low-rank-sparse, covariance
StudyWorkload make_workload(const std::string& name, std::int64_t n, std::uint64_t seed);

}  // namespace pagh_mm
