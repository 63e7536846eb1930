// The time-domain ("direct") path of sparse products on the GPU, as on the CPU (hybrid_rule.hpp):
// for a thin inner index k, c_t[h_a(i) XOR h_b(j)] += (s_a(i) A_ik) (s_b(j) B_kj) for every nonzero
// pair, in double. Deterministic without atomics: the pairs of a batch of k are generated in (k, i,
// j) order with their bucket as key, sorted stably by bucket (CUB radix sort), and each bucket's run
// is summed in that order by one thread and added to the sketch. The products are the CPU's bit for
// bit; the sums are associated differently (integer inputs: exact either way).
#include <cub/device/device_radix_sort.cuh>

#include <cstdint>

#include "device_memory.hpp"
#include "compress/paths/direct_sketch.hpp"

namespace pagh::cuda {
namespace {

constexpr const char* kWhere = "pagh::cuda::launch_direct";

unsigned grid_for(std::int64_t n, int threads = 256) {
  return static_cast<unsigned>(std::max<std::int64_t>(1, std::min<std::int64_t>((n + threads - 1) / threads, 1 << 16)));
}

// Pair e of the batch: line j with pair_start[j] <= e < pair_start[j + 1], then entry q / nb of
// column j of A and q % nb of row j of B (q = e - pair_start[j]): (k, i, j) order.
__global__ void make_pairs(const DirectArgs args, std::uint32_t* keys, double* values) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t e = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; e < args.pairs; e += stride) {
    std::int64_t lo = 0, hi = args.lines;  // the last j with pair_start[j] <= e
    while (hi - lo > 1) {
      const std::int64_t mid = (lo + hi) / 2;
      if (args.pair_start[mid] <= e) lo = mid;
      else hi = mid;
    }
    const std::int64_t q = e - args.pair_start[lo];
    const std::int64_t nb = args.b.start[lo + 1] - args.b.start[lo];
    const std::int64_t ea = args.a.start[lo] + q / nb, eb = args.b.start[lo] + q % nb;
    const std::int32_t i = args.a.index[ea], j = args.b.index[eb];
    const double ai = static_cast<double>(args.sign_a[i]) * args.a.values_f64[ea];
    const double bj = static_cast<double>(args.sign_b[j]) * args.b.values_f64[eb];
    keys[e] = args.bucket_a[i] ^ args.bucket_b[j];
    values[e] = __dmul_rn(ai, bj);
  }
}

// The first element of each run of equal keys sums the run in order and adds it to its bucket:
// one thread per bucket, so no two threads touch one bucket.
__global__ void add_runs(const std::uint32_t* keys, const double* values, std::int64_t count, double* time_domain) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t e = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; e < count; e += stride) {
    const std::uint32_t key = keys[e];
    if (e > 0 && keys[e - 1] == key) continue;
    double sum = 0;
    for (std::int64_t f = e; f < count && keys[f] == key; ++f) sum = __dadd_rn(sum, values[f]);
    time_domain[key] = __dadd_rn(time_domain[key], sum);
  }
}

__global__ void add_into(const double* from, std::int64_t count, double* to) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t e = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; e < count; e += stride)
    to[e] = __dadd_rn(to[e], from[e]);
}

// Workspace layout: keys in, keys out, values in, values out, CUB's temporary storage.
struct Layout {
  std::size_t keys = 0, values = 0, cub = 0, total = 0;
  Layout(std::int64_t max_pairs, int log2b) {
    const auto n = static_cast<std::size_t>(std::max<std::int64_t>(max_pairs, 1));
    keys = (n * sizeof(std::uint32_t) + 255) / 256 * 256;
    values = n * sizeof(double);
    PAGH_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, cub, static_cast<const std::uint32_t*>(nullptr),
                                                    static_cast<std::uint32_t*>(nullptr), static_cast<const double*>(nullptr),
                                                    static_cast<double*>(nullptr), static_cast<std::int64_t>(n), 0,
                                                    std::max(log2b, 1)),
                    kWhere);
    total = 2 * keys + 2 * values + cub;
  }
};

}  // namespace

std::size_t direct_workspace_bytes(std::int64_t max_pairs, int log2b) { return Layout(max_pairs, log2b).total; }

void launch_direct(const DirectArgs& args, void* workspace, std::size_t workspace_bytes, std::int64_t max_pairs,
                   cudaStream_t stream) {
  if (args.pairs <= 0) return;
  if (args.pairs > max_pairs) throw Error(kWhere, "internal: a batch of direct pairs exceeds the workspace");
  const Layout layout(max_pairs, args.log2b);
  if (workspace_bytes < layout.total) throw Error(kWhere, "internal: direct workspace too small");
  char* at = static_cast<char*>(workspace);
  auto* keys_in = reinterpret_cast<std::uint32_t*>(at);
  auto* keys_out = reinterpret_cast<std::uint32_t*>(at + layout.keys);
  auto* values_in = reinterpret_cast<double*>(at + 2 * layout.keys);
  auto* values_out = reinterpret_cast<double*>(at + 2 * layout.keys + layout.values);
  void* temp = at + 2 * layout.keys + 2 * layout.values;
  make_pairs<<<grid_for(args.pairs), 256, 0, stream>>>(args, keys_in, values_in);
  check_launch("make_pairs", kWhere);
  std::size_t temp_bytes = layout.cub;
  PAGH_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp, temp_bytes, keys_in, keys_out, values_in, values_out, args.pairs, 0,
                                                  std::max(args.log2b, 1), stream),
                  kWhere);
  add_runs<<<grid_for(args.pairs), 256, 0, stream>>>(keys_out, values_out, args.pairs, args.time_domain);
  check_launch("add_runs", kWhere);
}

void launch_add(const double* from, std::int64_t count, double* to, cudaStream_t stream) {
  if (count <= 0) return;
  add_into<<<grid_for(count), 256, 0, stream>>>(from, count, to);
  check_launch("add_into", "pagh::cuda::launch_add");
}

}  // namespace pagh::cuda
