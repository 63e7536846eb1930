// What the CUDA planner needs to know about a device, queried once per device and process.
#pragma once

namespace fwht::cuda {

struct DeviceCaps {
  int sms = 0;  // streaming multiprocessors (0 when the query failed)
  // Largest cluster_log of the cluster passes (cluster_pass.cuh): 3 (clusters of 8, the portable
  // limit) where thread-block clusters exist (sm_90 and later), else 0.
  int max_cluster_log = 0;
  // Device memory below 15 bytes per SM cycle at its peak (2 x memory clock x bus width over SMs x
  // SM clock: an H100 SXM has 12.8, an H200 18.4): there the SM-side cost of larger clusters hides
  // behind the slower memory, and the strided cluster pass's wider rows pay (kTwoPassShapes).
  bool slow_memory = false;
  // Passes after the first may launch as programmatic dependents of the previous one
  // (pass_dependency.cuh): compute capability 9.0 and later.
  bool dependent_launch = false;
};

// The capabilities of the current device (cudaGetDevice), queried on first use and then cached.
// A failed query leaves the conservative value (no clusters, no dependent launches).
const DeviceCaps& device_caps();

}  // namespace fwht::cuda
