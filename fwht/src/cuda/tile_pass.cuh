// The pass kernel: one block loads 2^g rows x W columns of one transform (or several whole small
// transforms) from device memory into shared memory, applies g consecutive stages in radix-16
// register rounds (radix-8 H8 rounds for Alman-Rao), and writes the tile back: one read and one
// write of device memory per element per pass, 16-byte accesses where the layout allows.
//
// Shared-memory index e of a block: bits [0, column_log) = column c, the next g bits = row r, the
// bits above = tile within the block. Stage j of the pass pairs e with e ^ (W << j). Rows are padded
// by one word per 32 (index e + e/32) so that the strided register rounds avoid bank conflicts.
#pragma once

#include <cstring>
#include <string>
#include <type_traits>

#include "cuda/arithmetic.cuh"
#include "cuda/butterflies.cuh"
#include "pagh/cuda_check.hpp"
#include "cuda/tile_pass.hpp"
#include "pagh/error.hpp"

namespace fwht::cuda {

__device__ __forceinline__ int padded(int e) { return e + (e >> 5); }

// Transform t and element i (within the transform) of shared index e of this block; false for the
// padding tiles of the last block.
__device__ __forceinline__ bool locate(const PassArgs& a, int e, std::int64_t& t, std::int64_t& i) {
  const int c = e & ((1 << a.column_log) - 1);
  const int r = (e >> a.column_log) & ((1 << a.g) - 1);
  const int sub = e >> (a.column_log + a.g);
  const std::int64_t q = (static_cast<std::int64_t>(blockIdx.x) << a.tiles_per_block_log) + sub;
  if (q >= a.total_tiles) return false;
  t = q >> a.tiles_per_transform_log;
  const std::int64_t within = q & ((std::int64_t{1} << a.tiles_per_transform_log) - 1);
  const std::int64_t band = within >> a.column_blocks_log;
  const std::int64_t column_block = within & ((std::int64_t{1} << a.column_blocks_log) - 1);
  i = (band << (a.g + a.s)) + (column_block << a.column_log) + (static_cast<std::int64_t>(r) << a.s) + c;
  return true;
}

// Shared <- device memory (converted by `convert`), zeros for padding tiles.
template <class C, class T, class Convert>
__device__ __forceinline__ void load_plane(C* sm, const T* base, std::int64_t distance, std::int64_t stride, bool vec,
                                           int count, const PassArgs& a, Convert convert) {
  constexpr int V = 16 / sizeof(T);
  if (vec) {
    for (int e = threadIdx.x * V; e < count; e += blockDim.x * V) {
      std::int64_t t, i;
      if (locate(a, e, t, i)) {
        const uint4 raw = *reinterpret_cast<const uint4*>(base + t * distance + i);
        T v[V];
        memcpy(v, &raw, 16);
#pragma unroll
        for (int k = 0; k < V; ++k) sm[padded(e + k)] = convert(v[k]);
      } else {
#pragma unroll
        for (int k = 0; k < V; ++k) sm[padded(e + k)] = C{};
      }
    }
  } else {
    for (int e = threadIdx.x; e < count; e += blockDim.x) {
      std::int64_t t, i;
      sm[padded(e)] = locate(a, e, t, i) ? convert(base[t * distance + i * stride]) : C{};
    }
  }
}

// Device memory <- shared (converted by `convert`); padding tiles are not written.
template <class C, class T, class Convert>
__device__ __forceinline__ void store_plane(const C* sm, T* base, std::int64_t distance, std::int64_t stride, bool vec,
                                            int count, const PassArgs& a, Convert convert) {
  constexpr int V = 16 / sizeof(T);
  if (vec) {
    for (int e = threadIdx.x * V; e < count; e += blockDim.x * V) {
      std::int64_t t, i;
      if (!locate(a, e, t, i)) continue;
      T v[V];
#pragma unroll
      for (int k = 0; k < V; ++k) v[k] = convert(sm[padded(e + k)]);
      uint4 raw;
      memcpy(&raw, v, 16);
      *reinterpret_cast<uint4*>(base + t * distance + i) = raw;
    }
  } else {
    for (int e = threadIdx.x; e < count; e += blockDim.x) {
      std::int64_t t, i;
      if (locate(a, e, t, i)) base[t * distance + i * stride] = convert(sm[padded(e)]);
    }
  }
}

// R consecutive stages (radix 2^R) at shared strides 2^h_log .. 2^(h_log+R-1), in registers.
template <Stabilization St, int R, bool H8, class C>
__device__ __forceinline__ void round_in_registers(C* xs, C* es, int h_log, int count) {
  constexpr bool kStab = St != Stabilization::none;
  const int groups = count >> R;
  for (int gid = threadIdx.x; gid < groups; gid += blockDim.x) {
    const int low = gid & ((1 << h_log) - 1);
    const int base = ((gid >> h_log) << (h_log + R)) + low;
    C v[1 << R], ev[1 << R];
#pragma unroll
    for (int m = 0; m < (1 << R); ++m) {
      v[m] = xs[padded(base + (m << h_log))];
      if constexpr (kStab) ev[m] = es[padded(base + (m << h_log))];
    }
    if constexpr (H8) {
      static_assert(R == 3, "H8 rounds are radix 8");
      h8(v);
    } else {
      radix_stages<St, R>(v, ev);
    }
#pragma unroll
    for (int m = 0; m < (1 << R); ++m) {
      xs[padded(base + (m << h_log))] = v[m];
      if constexpr (kStab) es[padded(base + (m << h_log))] = ev[m];
    }
  }
}

template <Stabilization St, class C>
__device__ __forceinline__ void folklore_round(C* xs, C* es, int h_log, int stages, int count) {
  switch (stages) {
    case 1: round_in_registers<St, 1, false>(xs, es, h_log, count); break;
    case 2: round_in_registers<St, 2, false>(xs, es, h_log, count); break;
    case 3: round_in_registers<St, 3, false>(xs, es, h_log, count); break;
    default: round_in_registers<St, 4, false>(xs, es, h_log, count); break;
  }
}

template <class Tr, Stabilization St, Algorithm Al, bool First, bool Last>
__global__ void __launch_bounds__(kPassThreads) tile_pass(const PassArgs a) {
  using C = typename Tr::C;
  using W = typename Tr::W;
  using S = typename Tr::S;
  using Src = std::conditional_t<First, S, W>;
  using Dst = std::conditional_t<Last, S, W>;
  constexpr bool kStab = St != Stabilization::none;

  extern __shared__ __align__(16) unsigned char shared_raw[];
  const int count = 1 << (a.g + a.column_log + a.tiles_per_block_log);
  C* xs = reinterpret_cast<C*>(shared_raw);
  C* es = xs + (count + count / 32);  // error plane (stabilized only)

  const auto to_c = [](Src v) {
    if constexpr (First) return Tr::load_s(v);
    else return Tr::load_w(v);
  };
  load_plane(xs, static_cast<const Src*>(a.src), a.src_distance, a.src_stride, a.vec_src, count, a, to_c);
  if constexpr (kStab) {
    if constexpr (First) {
      for (int e = threadIdx.x; e < count; e += blockDim.x) es[padded(e)] = C{};
    } else {
      load_plane(es, static_cast<const W*>(a.err_in), a.n, 1, a.vec_err, count, a,
                 [](W v) { return Tr::load_w(v); });
    }
  }
  __syncthreads();

  int j = 0;
  if constexpr (Al == Algorithm::alman_rao) {
    if constexpr (First) {
      // Alman-Rao: r = log2(n) % 3 radix-2 stages, then the exact prescale by 2^(nonzero octal
      // digits of i >> r), then H8 rounds. The first pass always contains stage r.
      const int r = a.alman_rao_r < a.g ? a.alman_rao_r : a.g;
      if (r > 0) {
        folklore_round<Stabilization::none>(xs, es, a.column_log, r, count);
        __syncthreads();
      }
      for (int e = threadIdx.x; e < count; e += blockDim.x) {
        std::int64_t t, i;
        if (!locate(a, e, t, i)) continue;
        int digits = 0;
        for (auto v = static_cast<std::uint64_t>(i) >> a.alman_rao_r; v != 0; v >>= 3) digits += (v & 7u) != 0;
        if (digits != 0) xs[padded(e)] = Math<C>::times_pow2(xs[padded(e)], digits);
      }
      __syncthreads();
      j = r;
    }
    for (; j < a.g; j += 3) {
      round_in_registers<Stabilization::none, 3, true>(xs, es, a.column_log + j, count);
      __syncthreads();
    }
  } else {
    for (; j < a.g; j += 4) {
      folklore_round<St>(xs, es, a.column_log + j, a.g - j, count);
      __syncthreads();
    }
  }

  if constexpr (Last) {
    const C scale = [&] {
      if constexpr (Tr::kInteger) return C{};
      else return Math<C>::scale(a.scale);
    }();
    const bool scaled = a.scaled, inverse = a.inverse;
    const std::int64_t n = a.n;
    store_plane(xs, static_cast<S*>(a.dst), a.dst_distance, a.dst_stride, a.vec_dst, count, a,
                [=](C v) { return final_value<Tr>(v, scaled, scale, n, inverse); });
  } else {
    store_plane(xs, static_cast<W*>(a.dst), a.dst_distance, a.dst_stride, a.vec_dst, count, a,
                [](C v) { return Tr::to_w(v); });
    if constexpr (kStab)
      store_plane(es, static_cast<W*>(a.err_out), a.n, 1, a.vec_err, count, a, [](C v) { return Tr::to_w(v); });
  }
}

template <class Tr, Stabilization St, Algorithm Al>
void (*pick_kernel(bool first, bool last))(PassArgs) {
  if (first) return last ? tile_pass<Tr, St, Al, true, true> : tile_pass<Tr, St, Al, true, false>;
  return last ? tile_pass<Tr, St, Al, false, true> : tile_pass<Tr, St, Al, false, false>;
}

template <class Tr>
void launch_pass(const PassArgs& args, Stabilization st, Algorithm al, bool first, bool last, std::int64_t blocks,
                 std::size_t smem, cudaStream_t stream, bool configure_only) {
  constexpr const char* kWhere = "fwht::Plan::execute (cuda)";
  void (*kernel)(PassArgs) = nullptr;
  if (al == Algorithm::alman_rao) {
    if (st == Stabilization::none) kernel = pick_kernel<Tr, Stabilization::none, Algorithm::alman_rao>(first, last);
  } else if (st == Stabilization::none) {
    kernel = pick_kernel<Tr, Stabilization::none, Algorithm::folklore>(first, last);
  } else if constexpr (!Tr::kInteger) {
    if (st == Stabilization::kahan) kernel = pick_kernel<Tr, Stabilization::kahan, Algorithm::folklore>(first, last);
    if (st == Stabilization::neumaier) kernel = pick_kernel<Tr, Stabilization::neumaier, Algorithm::folklore>(first, last);
  }
  if (kernel == nullptr)
    throw pagh::Error(kWhere, "no pass kernel for stabilization " + std::string(to_string(st)) + " with algorithm " +
                                  std::string(to_string(al)));
  if (configure_only) {
    PAGH_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)),
                    "fwht::Plan (cuda)");
    return;
  }
  if (blocks > 0x7fffffff) throw pagh::Error(kWhere, "pass needs more than 2^31-1 blocks");
  kernel<<<static_cast<unsigned>(blocks), kPassThreads, smem, stream>>>(args);
  PAGH_CUDA_CHECK(cudaGetLastError(), kWhere);
}

}  // namespace fwht::cuda

#define FWHT_INSTANTIATE_PASS(...)                                                                              \
  template void launch_pass<__VA_ARGS__>(const PassArgs&, Stabilization, Algorithm, bool, bool, \
                                                      std::int64_t, std::size_t, cudaStream_t, bool);
