#include "compress/paths/direct_add_on.hpp"

#include "compress/paths/direct_sketch.hpp"
#include "pagh/error.hpp"

namespace pagh::cuda {
namespace {
constexpr const char* kWhere = "pagh::cuda::compress";
}  // namespace

void DirectAddOn::reserve(std::int64_t max_pairs, const DeviceTables& tables, int log2b, cudaStream_t stream) {
  if (max_pairs <= max_pairs_) return;
  if (sketches_.size() == 0) {
    sketches_ = DeviceArray<double>(static_cast<std::size_t>(tables.repetitions * tables.buckets), "time-domain sketches");
    PAGH_CUDA_CHECK(cudaMemsetAsync(sketches_.data(), 0, sketches_.bytes(), stream), kWhere);
  }
  workspace_ = DeviceArray<char>(direct_workspace_bytes(max_pairs, log2b), "direct-path workspace");
  max_pairs_ = max_pairs;
}

void DirectAddOn::add(const Lines& a, const Lines& b, const std::int64_t* pair_start, std::int64_t count, std::int64_t pairs,
                      const DeviceTables& tables, int log2b, cudaStream_t stream) {
  if (count <= 0 || pairs <= 0) return;
  if (pairs > max_pairs_) throw Error(kWhere, "internal: reserve_direct was not called for this batch");
  const std::int64_t m = tables.m, p = tables.p, bk = tables.buckets;
  for (int t = 0; t < tables.repetitions; ++t) {
    DirectArgs args;
    args.a = a, args.b = b, args.pair_start = pair_start, args.lines = count, args.pairs = pairs;
    args.bucket_a = tables.bucket_a.data() + t * m, args.sign_a = tables.sign_a.data() + t * m;
    args.bucket_b = tables.bucket_b.data() + t * p, args.sign_b = tables.sign_b.data() + t * p;
    args.log2b = log2b, args.time_domain = sketches_.data() + t * bk;
    launch_direct(args, workspace_.data(), workspace_.bytes(), max_pairs_, stream);
  }
  used_ = true;
}

void DirectAddOn::reset(cudaStream_t stream) {
  if (used_) PAGH_CUDA_CHECK(cudaMemsetAsync(sketches_.data(), 0, sketches_.bytes(), stream), kWhere);
  used_ = false;
}

void DirectAddOn::add_to(double* sketches, cudaStream_t stream) const {
  if (used_) launch_add(sketches_.data(), static_cast<std::int64_t>(sketches_.size()), sketches, stream);  // c_t = H P_t / b + direct part
}

}  // namespace pagh::cuda
