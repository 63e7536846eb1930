// RAII ownership of device and pinned host memory for the CUDA sketch backend; every CUDA runtime
// call goes through PAGH_CUDA_CHECK (pagh/cuda_check.hpp: a failure is a pagh::Error naming the call).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <utility>

#include "pagh/cuda_check.hpp"
#include "pagh/error.hpp"

namespace pagh::cuda {

// Throws after a kernel launch if the launch failed (bad configuration, too much shared memory).
inline void check_launch(const char* kernel, const char* where) { check_cuda(cudaGetLastError(), kernel, where); }

// count elements of T on the current device. Out of memory names what was being allocated.
template <class T>
class DeviceArray {
 public:
  DeviceArray() = default;
  DeviceArray(std::size_t count, const char* what) : count_(count) {
    if (count == 0) return;
    const cudaError_t status = cudaMalloc(reinterpret_cast<void**>(&data_), count * sizeof(T));
    if (status != cudaSuccess) {
      cudaGetLastError();  // clear the sticky-free error so later calls do not report it
      data_ = nullptr;
      throw Error("pagh::cuda", std::string("out of device memory allocating ") + what + " (" +
                                    std::to_string(count * sizeof(T)) + " bytes): " + cudaGetErrorString(status));
    }
  }
  DeviceArray(DeviceArray&& o) noexcept : data_(std::exchange(o.data_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  DeviceArray& operator=(DeviceArray&& o) noexcept {
    if (this != &o) {
      release();
      data_ = std::exchange(o.data_, nullptr), count_ = std::exchange(o.count_, 0);
    }
    return *this;
  }
  ~DeviceArray() { release(); }

  T* data() const { return data_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }

 private:
  void release() {
    if (data_) cudaFree(data_);
    data_ = nullptr;
  }
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

// Page-locked host memory (the staging buffers of the streaming path).
template <class T>
class PinnedArray {
 public:
  PinnedArray() = default;
  PinnedArray(std::size_t count, const char* what) : count_(count) {
    if (count == 0) return;
    const cudaError_t status = cudaMallocHost(reinterpret_cast<void**>(&data_), count * sizeof(T));
    if (status != cudaSuccess) {
      cudaGetLastError();
      data_ = nullptr;
      throw Error("pagh::cuda", std::string("cannot allocate pinned host memory for ") + what + " (" +
                                    std::to_string(count * sizeof(T)) + " bytes): " + cudaGetErrorString(status));
    }
  }
  PinnedArray(PinnedArray&& o) noexcept : data_(std::exchange(o.data_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  PinnedArray& operator=(PinnedArray&& o) noexcept {
    if (this != &o) {
      if (data_) cudaFreeHost(data_);
      data_ = std::exchange(o.data_, nullptr), count_ = std::exchange(o.count_, 0);
    }
    return *this;
  }
  ~PinnedArray() {
    if (data_) cudaFreeHost(data_);
  }
  T* data() const { return data_; }
  std::size_t size() const { return count_; }

 private:
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

// Makes `device` current for a scope and restores the previous device afterwards.
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    PAGH_CUDA_CHECK(cudaGetDevice(&previous_), "pagh::cuda");
    if (device != previous_) PAGH_CUDA_CHECK(cudaSetDevice(device), "pagh::cuda");
  }
  ~DeviceScope() { cudaSetDevice(previous_); }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = 0;
};

}  // namespace pagh::cuda
