// What the CUDA runtime reports about this machine, for --version and for --backend auto. Never
// fails: on a machine without a driver the runtime returns errors, which become "no driver"/"none".
#pragma once

#include <string>
#include <vector>

namespace pagh_mm {

struct CudaInfo {
  bool runtime_linked = false;       // false when pagh-mm was built without the CUDA toolkit
  std::string runtime_version;       // "13.0", or "not linked"
  std::string driver_version;        // "13.0", or "no driver"
  std::vector<std::string> devices;  // "NVIDIA H100 80GB HBM3 (sm_90, 79 GiB)" per usable device
  std::string device_error;          // why devices is empty ("cudaErrorNoDevice: ..."), the detail
  std::string device_problem;        // the same in plain words ("no NVIDIA driver or GPU found")
};

CudaInfo query_cuda();

// The GPUs the NVIDIA kernel driver lists (/proc/driver/nvidia/gpus), without a CUDA call: a process
// that starts the CUDA driver pays its teardown at exit (tens of ms) even if it never uses a GPU.
int nvidia_gpus_listed();

}  // namespace pagh_mm
