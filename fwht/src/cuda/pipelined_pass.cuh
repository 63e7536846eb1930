// Pipelined cluster passes: the cluster pass of cluster_pass.cuh as a persistent kernel that loads
// the next tile while it transforms the current one.
//
// Why: a cluster pass loads its tile, waits at a cluster barrier for the slowest peer, reads its
// peers' shared memory, stores, and only then does its SM load anything again; with one or two
// such blocks per SM the memory system idles between tiles (ncu, 2^28 in clusters of 8: DRAM 45%,
// bench/NOTES.md "Cluster passes"). Here one block of 256 threads per SM (clusters of 2^Cl blocks,
// as many clusters as fit the device, cudaOccupancyMaxActiveClusters) walks the cluster tiles
// tile, tile + clusters, ... and keeps three 64 KiB buffers of shared memory in rotation: while tile
// i is transformed in buffer i % 3 (registers, exchanges, then exported there for the peers),
// tile i + 1 is already on its way into buffer (i + 1) % 3 through cp.async (warp-coalesced 16-byte
// chunks), and buffer (i + 2) % 3 holds tile i - 1's export, which the peers may still be reading.
// That buffer is reloaded only in iteration i + 1, after this block has passed tile i's cluster
// barrier, which every peer reaches only after its reads of tile i - 1: one cluster barrier per
// tile, none to protect the buffers.
//
// Per tile the work is that of cluster_pass: the block's 2^14 elements (first pass: consecutive;
// strided pass: 2^g rows x 2^w columns, w >= 2) in registers from the staged buffer, the g local
// stages in rounds (run_rounds), export, barrier, the Cl stages across the cluster (cross_phase),
// stores. Stage order and butterflies are the reference's: bit-identical to the CPU backend. Device
// memory: one read and one write per element; 16-byte aligned buffers only (the plan falls back to
// cluster_pass otherwise). Strided passes read the work type, so they need a 4-byte work type (not
// 16-bit types computed in storage precision).
#pragma once

#include <string>
#include <type_traits>

#include "cuda/cluster_pass.cuh"

namespace fwht::cuda {

// Blocks of 2^(Eps + 8) elements: three buffers of 4-byte words.
template <int Eps>
inline constexpr unsigned kPipelineBufferBytes = 4u << (Eps + 8);
inline std::size_t pipelined_shared_bytes(int block_log) { return std::size_t{3} * (std::size_t{4} << block_log); }

// Word of tile element e (row-major, rows of 2^w columns) in a strided pass's staging buffer. The
// first round's loads take, per register m, the lanes' elements part(t) | (m << w): lane bits below
// w are columns, lane bits from w are rows 2^Eps apart, which would all fall in the banks of the
// first 2^w words; XORing those row bits ([w + Eps, Eps + 5)) into word bits [w, 5) spreads the lanes
// over 32 banks. Bits 0 and 1 stay (w >= 2): a 16-byte chunk of 4 columns stays whole.
template <int Eps>
__device__ __forceinline__ int staging_word(int e, int w) {
  if (w >= 5) return e;
  return e ^ (((e >> (w + Eps)) & ((1 << (5 - w)) - 1)) << w);
}

// Issue the cp.async copies of one block's tile (src_block: its element 0) into the buffer at shared
// address stage. First pass: the layout of run_tile's staged load (chunk c at c ^ ((c / NV) % 8)).
template <class Src, int Eps, bool First>
__device__ __forceinline__ void stage_tile(const FastArgs& a, const Src* src_block, unsigned stage) {
  constexpr int V = 16 / sizeof(Src);
  constexpr int NV = (1 << Eps) / V;  // 16-byte chunks per thread
  constexpr int kNvLog = ctz_const(NV);
  static_assert(First || V == 4, "strided pipelined passes read a 4-byte work type");
  const int t = threadIdx.x;
#pragma unroll
  for (int q = 0; q < NV; ++q) {
    const int c = q * kFastThreads + t;
    unsigned dst;
    const Src* from;
    if constexpr (First) {
      dst = stage + static_cast<unsigned>((c ^ ((c >> kNvLog) & 7)) * 16);
      from = src_block + c * V;
    } else {
      const int e = c * V;
      dst = stage + static_cast<unsigned>(staging_word<Eps>(e, a.w) * 4);
      from = src_block + (e & ((1 << a.w) - 1)) + (static_cast<std::int64_t>(e >> a.w) << a.s);
    }
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(from) : "memory");
  }
}

// The staged tile into registers, in the first round's layout (register bits [lo, lo + Eps), lo = 0
// on the first pass, w on a strided one).
template <class Tr, int Eps, bool First>
__device__ __forceinline__ void read_staged(const FastArgs& a, unsigned stage, typename Tr::C (&v)[1 << Eps]) {
  using Src = std::conditional_t<First, typename Tr::S, typename Tr::W>;
  constexpr int E = 1 << Eps;
  const int t = threadIdx.x;
  if constexpr (First) {
    constexpr int V = 16 / sizeof(Src);
    constexpr int NV = E / V;
    constexpr int kNvLog = ctz_const(NV);
#pragma unroll
    for (int i = 0; i < NV; ++i) {
      const int c = t * NV + i;
      uint4 raw;
      const unsigned from = stage + static_cast<unsigned>((c ^ ((c >> kNvLog) & 7)) * 16);
      asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                   : "=r"(raw.x), "=r"(raw.y), "=r"(raw.z), "=r"(raw.w)
                   : "r"(from)
                   : "memory");
      Src x[V];
      std::memcpy(x, &raw, 16);
#pragma unroll
      for (int j = 0; j < V; ++j) v[i * V + j] = Tr::load_s(x[j]);
    }
  } else {
    // Element part | (m << w): its word is staging_word(part) ^ (m << w) (staging_word is linear
    // over XOR and leaves bits below w + Eps alone), visited in Gray-code order, one XOR each.
    int basis[Eps];
#pragma unroll
    for (int j = 0; j < Eps; ++j) basis[j] = 4 << (a.w + j);
    unsigned offset = static_cast<unsigned>(staging_word<Eps>(thread_part<Eps>(t, a.w), a.w) * 4);
#pragma unroll
    for (int k = 0; k < E; ++k) {
      if (k > 0) offset ^= static_cast<unsigned>(basis[ctz_const(k)]);
      const int m = k ^ (k >> 1);
      unsigned bits;
      asm volatile("ld.shared.b32 %0, [%1];" : "=r"(bits) : "r"(stage + offset) : "memory");
      Src x;
      std::memcpy(&x, &bits, 4);
      v[m] = Tr::load_w(x);
    }
  }
}

// Blocks of 2^13 elements (Eps = 5: 96 KiB, two blocks and 16 warps per SM) or 2^14 (Eps = 6: 192
// KiB, one block per SM).
template <class Tr, int Eps, bool First, bool Last, int Cl>
__global__ void __launch_bounds__(kFastThreads, Eps == 5 ? 2 : 1) pipelined_pass(const FastArgs a) {
  using C = typename Tr::C;
  using Src = std::conditional_t<First, typename Tr::S, typename Tr::W>;
  static_assert(sizeof(C) == 4, "pipelined passes are for 4-byte compute types");
  constexpr int B = Eps + 8, E = 1 << Eps, kRanks = 1 << Cl;
  constexpr unsigned kBufferBytes = kPipelineBufferBytes<Eps>;
  constexpr int kVectors = E / kRanks / 4;
  pass_prologue<First>();
  extern __shared__ __align__(16) unsigned char pipeline_shared[];
  const unsigned shared0 = static_cast<unsigned>(__cvta_generic_to_shared(pipeline_shared));
  const int t = threadIdx.x;
  const int rank = static_cast<int>(blockIdx.x) & (kRanks - 1);
  const std::int64_t clusters = gridDim.x >> Cl;
  const auto block_source = [&](std::int64_t tile) {
    std::int64_t base, rank_step;
    cluster_tile_origin<First, B, Cl>(a, tile, base, rank_step);
    return static_cast<const Src*>(a.src) + base + rank * rank_step;
  };

  std::int64_t tile = blockIdx.x >> Cl;
  if (tile < a.tiles) stage_tile<Src, Eps, First>(a, block_source(tile), shared0);
  asm volatile("cp.async.commit_group;" ::: "memory");
  for (int slot = 0; tile < a.tiles; tile += clusters) {
    const int next = slot == 2 ? 0 : slot + 1;
    if (tile + clusters < a.tiles)
      stage_tile<Src, Eps, First>(a, block_source(tile + clusters), shared0 + next * kBufferBytes);
    asm volatile("cp.async.commit_group;" ::: "memory");
    asm volatile("cp.async.wait_group 1;" ::: "memory");  // this tile's copies (the next tile's may fly)
    __syncthreads();

    const unsigned stage = shared0 + slot * kBufferBytes;
    C* sm = reinterpret_cast<C*>(pipeline_shared + slot * kBufferBytes);  // not aligned to its size
    C v[E];
    C ev[E];  // error terms: unused in plain mode
    read_staged<Tr, Eps, First>(a, stage, v);
    const int sb = First ? 0 : a.w;
    int rounds = 0;
    run_rounds<Stabilization::none, Eps, false>(v, ev, sm, t, sb, sb + a.g, sb, true, rounds);
    __syncthreads();  // every thread has read the last exchange (or the staged tile)
#pragma unroll
    for (int m = 0; m < E; ++m) sm[t + (m << 8)] = v[m];  // the full tile ends with lo = B - Eps
    cluster_arrive();
    cluster_wait();  // every block's tile is in its shared memory

    std::int64_t base, rank_step;
    cluster_tile_origin<First, B, Cl>(a, tile, base, rank_step);
    cross_phase<Tr, Eps, First, Last, Cl, kVectors>(a, sm, base, rank_step, rank, [] {});
    slot = next;
  }
  cluster_arrive();
  cluster_wait();  // the peers are done with this block's shared memory
}

template <class Tr, int Eps, int Cl>
void (*pick_pipelined(bool first, bool last))(FastArgs) {
  if (first) return last ? pipelined_pass<Tr, Eps, true, true, Cl> : pipelined_pass<Tr, Eps, true, false, Cl>;
  if constexpr (sizeof(typename Tr::W) == 4) return last ? pipelined_pass<Tr, Eps, false, true, Cl> : nullptr;
  return nullptr;
}
template <class Tr, int Eps>
void (*pick_pipelined(int cluster_log, bool first, bool last))(FastArgs) {
  switch (cluster_log) {
    case 1: return pick_pipelined<Tr, Eps, 1>(first, last);
    case 2: return pick_pipelined<Tr, Eps, 2>(first, last);
    case 3: return pick_pipelined<Tr, Eps, 3>(first, last);
    default: return nullptr;
  }
}

// The kernel of (block_log, Cl, first, last), or nullptr where none exists (block_log other than 13
// and 14, Cl outside 1..3, a strided pass of a 2-byte work type, a strided pass that is not the last).
template <class Tr>
void (*pipelined_kernel(int block_log, int cluster_log, bool first, bool last))(FastArgs) {
  if constexpr (sizeof(typename Tr::C) == 4) {
    if (block_log == 13) return pick_pipelined<Tr, 5>(cluster_log, first, last);
    if (block_log == 14) return pick_pipelined<Tr, 6>(cluster_log, first, last);
  }
  return nullptr;
}

template <class Tr>
int launch_pipelined(const FastArgs& args, int block_log, int cluster_log, bool first, bool last,
                     std::int64_t clusters, cudaStream_t stream, bool configure_only) {
  constexpr const char* kWhere = "fwht::Plan::execute (cuda)";
  void (*kernel)(FastArgs) = pipelined_kernel<Tr>(block_log, cluster_log, first, last);
  const std::size_t smem = pipelined_shared_bytes(block_log);
  if (kernel == nullptr) {
    if (configure_only) return 0;
    throw pagh::Error(kWhere, "no pipelined pass kernel for clusters of 2^" + std::to_string(cluster_log) +
                                  (first ? " first" : "") + (last ? " last" : ""));
  }
  if (configure_only) {
    FWHT_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)),
                    "fwht::Plan (cuda)");
    PassLaunch probe(dim3(1u << cluster_log), dim3(kFastThreads), smem, nullptr, false);
    probe.cluster(1u << cluster_log);
    int resident = 0;
    FWHT_CUDA_CHECK(cudaOccupancyMaxActiveClusters(&resident, kernel, &probe.config), "fwht::Plan (cuda)");
    return resident;
  }
  if (clusters < 1 || (clusters << cluster_log) > 0x7fffffff)
    throw pagh::Error(kWhere, "pipelined pass: " + std::to_string(clusters) + " clusters");
  PassLaunch launch(dim3(static_cast<unsigned>(clusters << cluster_log)), dim3(kFastThreads), smem, stream,
                    args.dependent);
  launch.cluster(1u << cluster_log);
  FWHT_CUDA_CHECK(cudaLaunchKernelEx(&launch.config, kernel, args), kWhere);
  return 0;
}

}  // namespace fwht::cuda
