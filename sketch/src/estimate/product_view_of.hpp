// The kernels' view (device_queries.hpp) of a DeviceProduct's state (device_state.hpp), for the
// host-side .cpp files that bridge Eigen-facing calls to the raw-pointer kernels.
#pragma once

#include "estimate/device_queries.hpp"
#include "estimate/device_state.hpp"

namespace pagh::cuda {

inline ProductView view_of(const DeviceProduct::State& s) {
  ProductView v;
  v.rows = s.rows, v.cols = s.cols, v.buckets = s.tables.buckets, v.repetitions = s.tables.repetitions;
  v.sketches = s.sketches.data();
  v.bucket_a = s.tables.bucket_a.data(), v.bucket_b = s.tables.bucket_b.data();
  v.sign_a = s.tables.sign_a.data(), v.sign_b = s.tables.sign_b.data();
  return v;
}

}  // namespace pagh::cuda
