// Cluster passes: one pass of the register-tile kernel over a tile that is 2^Cl times larger than
// a block's shared memory, held by a thread-block cluster of 2^Cl blocks (Hopper's distributed
// shared memory). Two passes of this kind reach 2^31: a block holds 2^14 4-byte elements (64 KiB),
// so without clusters a pass applies at most 14 stages (first pass) or 14 - w (a strided pass with
// rows of 2^w columns). Which shapes a plan takes by default (only those that measured faster than
// the plain passes) is in schedule.hpp (make_fast_schedule).
//
// The cluster's tile: first pass, 2^(B + Cl) consecutive elements, block `rank` holding the
// rank-th 2^B of them; strided pass, 2^(g + Cl) rows x 2^w columns, block `rank` holding rows
// [rank 2^g, (rank + 1) 2^g) (g = FastArgs::g, the stages on chip). Each block runs the ordinary
// tile (fast_pass.cuh, run_tile: load, the g local stages in rounds) and exports it to its own
// shared memory (element e at word e); after a cluster barrier, block `rank` takes the local
// indices e in [rank 2^(B - Cl), (rank + 1) 2^(B - Cl)) of every block (4 consecutive words per
// ld.shared::cluster.v4: 16-byte remote reads), applies the Cl remaining stages across ranks (the
// highest stage bits of the tile, so stages still run in increasing order with the reference's
// butterfly: bit-identical to the CPU backend) and writes the 2^B results to device memory, 4
// consecutive elements per store. A second barrier keeps every block's shared memory alive until
// its peers have read it. Device memory: one read and one write per element, as for any pass;
// distributed shared memory: (1 - 2^-Cl) of the tile crosses between SMs.
#pragma once

#include <cstring>
#include <string>
#include <type_traits>

#include "cuda/fast_pass.cuh"

namespace fwht::cuda {

__device__ __forceinline__ void cluster_arrive() { asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory"); }
__device__ __forceinline__ void cluster_wait() { asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory"); }

// Registers: as the plain passes (3 blocks per SM for first passes of float and integers). The
// cross phase holds E values per thread; single passes (first and last: the normalization too)
// spilled 8-230 bytes at 80 registers (ptxas) with all of them in flight, so they run it in two
// halves.
template <class Tr, int Eps, bool First, bool Last, int Cl>
__global__ void __launch_bounds__(kFastThreads, fast_min_blocks<Tr, Stabilization::none, Eps, kThreeWide<Tr, First>>())
    cluster_pass(const FastArgs a) {
  using C = typename Tr::C;
  using Dst = std::conditional_t<Last, typename Tr::S, typename Tr::W>;
  static_assert(sizeof(C) == 4, "cluster passes are for 4-byte compute types");
  pass_prologue<First>();
  constexpr int B = Eps + 8, E = 1 << Eps, kRanks = 1 << Cl;
  constexpr int kVectors = E / kRanks / 4;  // runs of 4 consecutive local indices per thread
  static_assert(kVectors >= 1, "too many ranks for the elements of a thread");
  constexpr int kChunk = First && Last ? kVectors / 2 : kVectors;  // runs in flight at once
  const int t = threadIdx.x;
  const int rank = static_cast<int>(blockIdx.x) & (kRanks - 1);  // %cluster_ctarank of a 1-D cluster
  const std::int64_t cluster = blockIdx.x >> Cl;

  // Device-memory offset of the cluster tile's element 0, and from one rank's rows to the next.
  std::int64_t base, rank_step;
  if constexpr (First) {
    base = cluster << (B + Cl);
    rank_step = std::int64_t{1} << B;
  } else {
    const int rows_log = a.g + Cl;
    const int tpt = a.log2n - rows_log - a.w;  // log2 cluster tiles per transform
    const std::int64_t tr = cluster >> tpt;
    const std::int64_t within = cluster & ((std::int64_t{1} << tpt) - 1);
    const std::int64_t band = within >> (a.s - a.w);
    const std::int64_t cb = within & ((std::int64_t{1} << (a.s - a.w)) - 1);
    base = tr * a.n + (band << (a.s + rows_log)) + (cb << a.w);
    rank_step = std::int64_t{1} << (a.s + a.g);
  }
  C* sm = tile_shared<Eps, C>();
  run_tile<Tr, Eps, First, false, 0, Stabilization::none, true>(a, base + rank * rank_step, sm);
  cluster_arrive();
  cluster_wait();  // every block's tile is in its shared memory

  const auto out = [&](C v) { return pass_output<Tr, Last>(v, a); };
  // Local indices e = e0 + 1024 q + i (e0 = rank 2^(B - Cl) + 4 t, i < 4) of every rank r, in
  // chunks of kChunk runs: x[j][r][i] for q = q0 + j. 4 consecutive local indices are 4
  // consecutive elements (first pass, or w >= 2 columns); the offset of e0 + 1024 q is that of e0
  // plus q steps of 1024 / 2^w rows.
  using Vector = std::conditional_t<sizeof(Dst) == 4, uint4, uint2>;
  const unsigned local = static_cast<unsigned>(__cvta_generic_to_shared(sm));
  const int e0 = (rank << (B - Cl)) + (t << 2);
  Dst* const dst = static_cast<Dst*>(a.dst) + base +
                   (First ? e0 : (e0 & ((1 << a.w) - 1)) + (static_cast<std::int64_t>(e0 >> a.w) << a.s));
  const std::int64_t q_step = First ? 4 * kFastThreads : static_cast<std::int64_t>(4 * kFastThreads >> a.w) << a.s;
#pragma unroll
  for (int q0 = 0; q0 < kVectors; q0 += kChunk) {
    C x[kChunk][kRanks][4];
#pragma unroll
    for (int r = 0; r < kRanks; ++r) {
      unsigned remote;
      asm("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"(r));
#pragma unroll
      for (int j = 0; j < kChunk; ++j) {
        const unsigned address = remote + static_cast<unsigned>((e0 + (q0 + j) * 4 * kFastThreads) * 4);
        unsigned w[4];
        asm volatile("ld.shared::cluster.v4.b32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3])
                     : "r"(address)
                     : "memory");
        std::memcpy(x[j][r], w, 16);
      }
    }
    if (q0 + kChunk == kVectors) cluster_arrive();  // this block is done with its peers' shared memory

    // The Cl stages across ranks, increasing, with the reference's butterfly.
#pragma unroll
    for (int k = 0; k < Cl; ++k)
#pragma unroll
      for (int r = 0; r < kRanks; ++r)
        if ((r & (1 << k)) == 0)
#pragma unroll
          for (int j = 0; j < kChunk; ++j)
#pragma unroll
            for (int i = 0; i < 4; ++i) {
              const C lo = x[j][r][i];
              x[j][r][i] = lo + x[j][r | (1 << k)][i];
              x[j][r | (1 << k)][i] = lo - x[j][r | (1 << k)][i];
            }

#pragma unroll
    for (int r = 0; r < kRanks; ++r)
#pragma unroll
      for (int j = 0; j < kChunk; ++j) {
        const std::int64_t offset = r * rank_step + (q0 + j) * q_step;
        Dst y[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) y[i] = out(x[j][r][i]);
        if (a.vec_dst) {
          Vector packed;
          std::memcpy(&packed, y, sizeof(Vector));
          *reinterpret_cast<Vector*>(dst + offset) = packed;
        } else {
#pragma unroll
          for (int i = 0; i < 4; ++i) dst[offset + i] = y[i];
        }
      }
  }
  cluster_wait();  // the peers are done with this block's shared memory
}

// The kernel of (Cl, first, last) with blocks of 2^14 elements, or nullptr (no cluster pass applies
// stages after another cluster pass's: two passes at most).
template <class Tr, int Cl>
void (*pick_cluster(bool first, bool last))(FastArgs) {
  if (first) return last ? cluster_pass<Tr, 6, true, true, Cl> : cluster_pass<Tr, 6, true, false, Cl>;
  return last ? cluster_pass<Tr, 6, false, true, Cl> : nullptr;
}

template <class Tr>
void (*cluster_kernel(int cluster_log, bool first, bool last))(FastArgs) {
  if constexpr (sizeof(typename Tr::C) == 4) {
    switch (cluster_log) {
      case 1: return pick_cluster<Tr, 1>(first, last);
      case 2: return pick_cluster<Tr, 2>(first, last);
      case 3: return pick_cluster<Tr, 3>(first, last);
      default: return nullptr;
    }
  }
  return nullptr;
}

template <class Tr>
void launch_cluster(const FastArgs& args, int cluster_log, bool first, bool last, std::int64_t blocks,
                    cudaStream_t stream, bool configure_only) {
  constexpr const char* kWhere = "fwht::Plan::execute (cuda)";
  void (*kernel)(FastArgs) = cluster_kernel<Tr>(cluster_log, first, last);
  if (kernel == nullptr)
    throw pagh::Error(kWhere, "no cluster pass kernel for clusters of 2^" + std::to_string(cluster_log) +
                                  (first ? " first" : "") + (last ? " last" : ""));
  const std::size_t smem = fast_shared_bytes(14, Stabilization::none, false, fast_padded(14, false));
  if (configure_only) {
    PAGH_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)),
                    "fwht::Plan (cuda)");
    return;
  }
  if (blocks > 0x7fffffff || blocks % (std::int64_t{1} << cluster_log) != 0)
    throw pagh::Error(kWhere, "cluster pass: " + std::to_string(blocks) + " blocks");
  PassLaunch launch(dim3(static_cast<unsigned>(blocks)), dim3(kFastThreads), smem, stream, args.dependent);
  launch.cluster(1u << cluster_log);
  PAGH_CUDA_CHECK(cudaLaunchKernelEx(&launch.config, kernel, args), kWhere);
}

}  // namespace fwht::cuda
