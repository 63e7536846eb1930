#include "cuda/device_caps.hpp"

#include <cuda_runtime.h>

#include <map>
#include <mutex>

namespace fwht::cuda {
namespace {

int attribute(cudaDeviceAttr what, int device) {
  int value = 0;
  if (cudaDeviceGetAttribute(&value, what, device) != cudaSuccess) {
    cudaGetLastError();  // clear the non-sticky error: the conservative value
    return 0;
  }
  return value;
}

DeviceCaps query(int device) {
  DeviceCaps caps;
  caps.sms = attribute(cudaDevAttrMultiProcessorCount, device);
  caps.max_cluster_log = attribute(cudaDevAttrClusterLaunch, device) ? 3 : 0;
  const int memory_khz = attribute(cudaDevAttrMemoryClockRate, device);
  const int bus_bits = attribute(cudaDevAttrGlobalMemoryBusWidth, device);
  const int sm_khz = attribute(cudaDevAttrClockRate, device);
  if (memory_khz > 0 && bus_bits > 0 && sm_khz > 0 && caps.sms > 0)
    caps.slow_memory = 2.0 * memory_khz * (bus_bits / 8.0) / (static_cast<double>(caps.sms) * sm_khz) < 15.0;
  caps.dependent_launch = attribute(cudaDevAttrComputeCapabilityMajor, device) >= 9;
  return caps;
}

}  // namespace

const DeviceCaps& device_caps() {
  static std::mutex mutex;
  static std::map<int, DeviceCaps> known;  // node-based: references stay valid
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) cudaGetLastError();
  const std::lock_guard lock(mutex);
  auto it = known.find(device);
  if (it == known.end()) it = known.emplace(device, query(device)).first;
  return it->second;
}

}  // namespace fwht::cuda
