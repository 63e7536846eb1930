// The cluster sketch kernel: the fused kernel of fused_sketch.cu without its replicated scatter.
//
// fused_sketch.cu gives each slice of 2^12 output buckets its own block, and every block scatters
// every entry of the line (the top stages folded into signs), so the scatter costs b / 2^12 times
// the line. Here a thread-block cluster of C = 2^c blocks (c <= 4; 16 is
// non-portable, Hopper allows it) shares the top c stages instead:
// block r scatters only the entries whose bucket bits [12, 12 + c) equal r (a per-rank list
// prepared once per plan, in index order), transforms its slice on bits [0, 12) as the fused
// kernel does, and the c remaining stages run across the cluster through distributed shared
// memory: block r reads elements e of [r 2^12 / C, (r + 1) 2^12 / C) from all C blocks and applies
// the C-point transform in registers, so it ends with outputs (r_out, e) for every r_out. Bucket
// bits above 12 + c are still folded (for b > 2^15), with the fold factor divided by C.
//
// Per k: scatter, round 1, round 2 (as the fused kernel; results stay in shared memory), cluster
// barrier, remote reads + the cross stages + multiply-accumulate in chunks of 4 elements, cluster
// barrier (the buffers may be overwritten only once every block has read them), zero. The sums are
// in a fixed order: deterministic, and chunking K does not change them (groups take k mod groups).
#include <cooperative_groups.h>

#include <cstdint>
#include <cstdlib>

#include "device_memory.hpp"
#include "compress/paths/fused_common.cuh"
#include "compress/paths/kernels.hpp"

namespace pagh::cuda {
namespace {

using namespace fused;
namespace cg = cooperative_groups;

// One warp scatters its line's entries of this rank: list entry q holds the entry's index in the
// line (or ~0u for padding) and its code (prepared like prepare_fused_tables' codes, with the
// collision ranks of this list's instructions). Lists are padded to multiples of 32.
template <int kUnroll>
__device__ __forceinline__ void scatter_list(const float* __restrict__ line, const std::uint32_t* __restrict__ index,
                                             const std::uint32_t* __restrict__ code, std::int64_t length, std::uint32_t fold_mask,
                                             float* buffer, int lane) {
  const auto buf = static_cast<unsigned>(__cvta_generic_to_shared(buffer));
  std::int64_t base = 0;
  for (; base + 32 * kUnroll <= length; base += 32 * kUnroll) {
    std::uint32_t where[kUnroll], c[kUnroll];
    float value[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) where[u] = __ldg(index + base + 32 * u + lane), c[u] = __ldg(code + base + 32 * u + lane);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) value[u] = where[u] != ~0u ? __ldg(line + where[u]) : 0.0f;
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) scatter_one(value[u], c[u], where[u] != ~0u, fold_mask, buf);
  }
  for (; base < length; base += 32) {
    const std::uint32_t where = __ldg(index + base + lane);
    scatter_one(where != ~0u ? __ldg(line + where) : 0.0f, __ldg(code + base + lane), where != ~0u, fold_mask, buf);
  }
}

// The C-point transform across the cluster on x[r'][0..W) (r' = source rank), in place: afterwards
// x[r_out] holds sum_r' (-1)^popcount(r_out & r') x[r'].
template <int C, int W>
__device__ __forceinline__ void cross_stages(float (&x)[C][W]) {
#pragma unroll
  for (int s = 1; s < C; s <<= 1) {
#pragma unroll
    for (int r = 0; r < C; ++r) {
      if ((r & s) == 0) {
#pragma unroll
        for (int w = 0; w < W; ++w) {
          const float a = x[r][w], b = x[r | s][w];
          x[r][w] = __fadd_rn(a, b);
          x[r | s][w] = __fsub_rn(a, b);
        }
      }
    }
  }
}

// W consecutive floats (W = 2 or 4, aligned) of a cluster peer's shared memory, as one load from
// a 32-bit shared::cluster address: generic pointers from map_shared_rank are 64-bit, and with one
// per rank and buffer hoisted out of the k loop (4 C registers) the kernel spilled.
template <int W, int kByteOffset>
__device__ __forceinline__ void load_remote(unsigned address, float (&x)[W]) {
  if constexpr (W == 4)
    asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4 + %5];"
                 : "=f"(x[0]), "=f"(x[1]), "=f"(x[2]), "=f"(x[3])
                 : "r"(address), "n"(kByteOffset)
                 : "memory");
  else
    asm volatile("ld.shared::cluster.v2.f32 {%0, %1}, [%2 + %3];" : "=f"(x[0]), "=f"(x[1]) : "r"(address), "n"(kByteOffset) : "memory");
}

// The shared::cluster address of `local` (this block's shared memory) in the block of rank `rank`.
__device__ __forceinline__ unsigned map_rank(const void* local, int rank) {
  unsigned remote;
  asm("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(static_cast<unsigned>(__cvta_generic_to_shared(local))), "r"(rank));
  return remote;
}

template <int kLogC, int kUnroll>
__global__ void __launch_bounds__(kThreads, kBlocksPerSm) cluster_sketch(ClusterArgs args) {
  constexpr int C = 1 << kLogC;
  constexpr int kPer = kRegs / C;  // consecutive elements per thread and source rank
  constexpr int W = C >= 16 ? 2 : 4;
  __shared__ __align__(16) float buffers[2][kSlice];
  cg::cluster_group cluster = cg::this_cluster();
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int rank = static_cast<int>(cluster.block_rank());
  const int group = static_cast<int>(blockIdx.x) / C, rep = blockIdx.z;
  const unsigned fold = blockIdx.y;
  const std::int64_t b = std::int64_t{1} << args.log2b;
  // Outputs of this thread: (r_out, e) with e = rank * 2^12 / C + tid * kPer + j; acc[r_out * kPer + j].
  const int e0 = rank * (kSlice / C) + tid * kPer;
  float* partial = args.partials + (static_cast<std::int64_t>(group) * args.repetitions + rep) * b +
                   static_cast<std::int64_t>(fold) * (kSlice * C) + e0;
  float acc[kRegs];
#pragma unroll
  for (int r = 0; r < C; ++r)
#pragma unroll
    for (int q = 0; q < kPer / 4; ++q) {
      const float4 old = args.accumulate ? *reinterpret_cast<const float4*>(partial + r * kSlice + 4 * q) : make_float4(0, 0, 0, 0);
      acc[r * kPer + 4 * q] = old.x, acc[r * kPer + 4 * q + 1] = old.y, acc[r * kPer + 4 * q + 2] = old.z, acc[r * kPer + 4 * q + 3] = old.w;
    }
  for (int e = tid; e < 2 * kSlice; e += kThreads) (&buffers[0][0])[e] = 0.0f;

  const std::int64_t first = args.k_first + ((group - args.k_first % args.groups) % args.groups + args.groups) % args.groups;
  const std::int64_t end = args.k_first + args.k_count;
  const std::int64_t* start = warp == 0 ? args.start_a : args.start_b;
  const std::int64_t list = start[rep * C + rank], list_end = start[rep * C + rank + 1];
  const std::uint32_t* index = (warp == 0 ? args.index_a : args.index_b) + list;
  const std::uint32_t* code = (warp == 0 ? args.code_a : args.code_b) + list;
  const std::uint32_t fold_mask = fold << (kSliceLog + kLogC);
  const Addresses at(tid);
  unsigned peer[C];  // buffers[0] of every block of the cluster (buffers[1] follows at + 4 kSlice bytes)
#pragma unroll
  for (int r = 0; r < C; ++r) peer[r] = map_rank(&buffers[0][0], r);
  __syncthreads();
  for (std::int64_t k = first; k < end; k += args.groups) {
    const std::int64_t local = k - args.k_first;
    const float* line = warp == 0 ? args.a + local * args.lda : args.bt + local * args.ldbt;
    scatter_list<kUnroll>(line, index, code, list_end - list, fold_mask, buffers[warp], lane);
    __syncthreads();
    float v[kRegs];
    round_one(buffers, at, v);
    __syncthreads();
#pragma unroll
    for (int which = 0; which < 2; ++which) {
      load_second<false>(buffers[which], at, v);
      register_stages(v);
      store_second(buffers[which], at, v);
    }
    cluster.sync();  // every block's slice transform is in its shared memory

    // Chunks of W elements: 16-byte loads up to clusters of 8; with 16 source ranks two 16-byte
    // chunks of Ha and Hb (128 registers) beside the accumulators would spill, so 8-byte chunks.
#pragma unroll
    for (int q = 0; q < kPer / W; ++q) {
      // Element e0 + W q .. + W - 1 of every source rank: W-aligned, so one swizzled load each.
      const int offset = swizzle(e0 + W * q);
      float xa[C][W], xb[C][W];
#pragma unroll
      for (int r = 0; r < C; ++r) {
        load_remote<W, 0>(peer[r] + 4 * offset, xa[r]);
        load_remote<W, 4 * kSlice>(peer[r] + 4 * offset, xb[r]);
      }
      cross_stages<C, W>(xa);
      cross_stages<C, W>(xb);
      // P += Ha . Hb, multiply then add (rounded separately, as the CPU engine does).
#pragma unroll
      for (int r = 0; r < C; ++r)
#pragma unroll
        for (int w = 0; w < W; ++w) {
          float& p = acc[r * kPer + W * q + w];
          p = __fadd_rn(p, __fmul_rn(xa[r][w], xb[r][w]));
        }
    }
    cluster.sync();  // nobody reads this block's buffers any more: zero them for the next scatter
    for (int e = 4 * tid; e < 2 * kSlice; e += 4 * kThreads) *reinterpret_cast<float4*>(&buffers[0][0] + e) = make_float4(0, 0, 0, 0);
    __syncthreads();
  }
#pragma unroll
  for (int r = 0; r < C; ++r)
#pragma unroll
    for (int q = 0; q < kPer / 4; ++q)
      *reinterpret_cast<float4*>(partial + r * kSlice + 4 * q) =
          make_float4(acc[r * kPer + 4 * q], acc[r * kPer + 4 * q + 1], acc[r * kPer + 4 * q + 2], acc[r * kPer + 4 * q + 3]);
}

// The launch configuration of a cluster launch (the attribute must outlive the launch call).
struct ClusterConfig {
  cudaLaunchConfig_t config{};
  cudaLaunchAttribute attribute{};
  ClusterConfig(int log_cluster, dim3 grid, cudaStream_t stream) {
    config.gridDim = grid, config.blockDim = dim3(kThreads), config.dynamicSmemBytes = 0, config.stream = stream;
    attribute.id = cudaLaunchAttributeClusterDimension;
    attribute.val.clusterDim.x = 1u << log_cluster, attribute.val.clusterDim.y = 1, attribute.val.clusterDim.z = 1;
    config.attrs = &attribute, config.numAttrs = 1;
  }
};

// Loads in flight per lane in the scatter: 8 (with 16 the index and value arrays spill here).
constexpr int kClusterUnroll = 8;

// Clusters of 16 exceed the portable limit of 8; Hopper allows them once the kernel opts in.
template <int kLogC>
auto cluster_kernel() {
  const auto kernel = cluster_sketch<kLogC, kClusterUnroll>;
  if constexpr (kLogC > 3) {
    static const cudaError_t allowed = cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
    if (allowed != cudaSuccess) (void)cudaGetLastError();  // then the occupancy query reports 0 clusters
  }
  return kernel;
}

template <int kLogC>
void launch_with(const ClusterArgs& args, dim3 grid, cudaStream_t stream) {
  ClusterConfig cluster(kLogC, grid, stream);
  const cudaLaunchConfig_t& config = cluster.config;
  const cudaError_t status = cudaLaunchKernelEx(&config, cluster_kernel<kLogC>(), args);
  check_cuda(status, "cudaLaunchKernelEx(cluster_sketch)", "pagh::cuda::launch_cluster");
}

template <int kLogC>
int resident_clusters() {
  ClusterConfig cluster(kLogC, dim3(1u << kLogC), nullptr);
  int clusters = 0;
  const cudaError_t status = cudaOccupancyMaxActiveClusters(&clusters, cluster_kernel<kLogC>(), &cluster.config);
  if (kLogC > 3 && status != cudaSuccess) {  // a device without non-portable clusters: not resident
    (void)cudaGetLastError();
    return 0;
  }
  check_cuda(status, "cudaOccupancyMaxActiveClusters", "pagh::cuda::cluster_resident_blocks");
  return clusters;
}

}  // namespace

int cluster_resident_blocks(int log_cluster) {
  int clusters = 0;
  switch (log_cluster) {
    case 1: clusters = resident_clusters<1>(); break;
    case 2: clusters = resident_clusters<2>(); break;
    case 3: clusters = resident_clusters<3>(); break;
    default: clusters = resident_clusters<4>(); break;
  }
  return clusters << log_cluster;
}

void launch_cluster(const ClusterArgs& args, cudaStream_t stream) {
  if (args.log_cluster < 1 || args.log_cluster > kMaxLogCluster || args.log2b < kSliceLog + args.log_cluster || args.log2b > 27 ||
      args.groups < 1 || args.repetitions < 1)
    throw Error("pagh::cuda::launch_cluster", "unsupported geometry");
  const dim3 grid(static_cast<unsigned>(args.groups) << args.log_cluster, 1u << (args.log2b - kSliceLog - args.log_cluster),
                  static_cast<unsigned>(args.repetitions));
  if (grid.y > 65535u || grid.z > 65535u) throw Error("pagh::cuda::launch_cluster", "too many slices or repetitions for one launch");
  switch (args.log_cluster) {
    case 1: launch_with<1>(args, grid, stream); break;
    case 2: launch_with<2>(args, grid, stream); break;
    case 3: launch_with<3>(args, grid, stream); break;
    default: launch_with<4>(args, grid, stream); break;
  }
}

}  // namespace pagh::cuda
