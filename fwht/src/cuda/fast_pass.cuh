// The register-tile pass: plain folklore stages of 4-byte compute types on packed layouts.
//
// A block of 256 threads holds 2^B elements (B = 12, 13, 14) in registers, E = 2^(B-8) per thread
// (Eps = log2 E = 4, 5, 6). Tile index e of the block: on the first pass the block is 2^B
// consecutive elements of the packed buffer (stage bits [0, g); the bits above g select one of
// several small transforms); on a strided pass it is 2^g rows x 2^w columns, row r and column c
// at tile_base + c + r*2^s (column bits [0, w), stage bits [w, w+g)).
//
// The stages run in rounds. In a round, thread t holds the E elements e = part(t, lo) | (m << lo),
// m = 0..E-1: register bits [lo, lo+Eps), the remaining bits of e taken from t in increasing order,
// so lanes of a warp own the lowest other bits (consecutive columns / elements: coalesced). A round
// applies the stages of its register bits that are still due, in increasing order, on registers
// (the reference's exact butterfly: A = a + B, B = a - B). Between rounds the block exchanges the
// tile through shared memory (one store, one load per element). The first round reads device memory
// (first pass: the block's tile through warp-coalesced cp.async into shared memory, then E
// consecutive elements per thread with LDS.128 - or, for 2-byte storage and unaligned buffers,
// straight 16-byte / scalar loads; strided: one element per load, a warp covering consecutive
// columns), the last round writes it directly: one read and one write of device memory per element
// per pass, with all of a thread's loads in flight at once. fused_pass (fused_pass.cuh) runs two strided passes in
// one persistent launch so that the second reads the first's output from L2.
//
// Shared layout of 4-byte words: index e is stored at e ^ bank_xor(e), an XOR of higher bits into
// the 5 bank bits, or, in blocks of 2^13 and in single-pass plans of 2^14 (fast_padded in
// fast_pass.hpp), at padded(e) = e + (e >> 5) and e + (e >> 6). Both are conflict-free for every
// lo (checked by enumeration, bench/NOTES.md; no such padding exists for Eps 4) and linear over
// disjoint bits, so the address of m is the thread's address combined with m's: visiting m in
// Gray-code order costs one XOR or add per element. First passes always run their rounds at
// lo = 0, Eps, B - Eps; there the exchanges (padded layout) and the stores are written with these
// constants, so that shared addresses and global store offsets are immediates (one base register
// each) instead of per-element arithmetic.
//
// Stabilized modes (template St) hold more state per element in the same rounds, never in device
// memory: Kahan/Neumaier (single-pass plans only: error terms start at zero and are dropped at the
// end, so the pass is exact to the reference) keep a register array of error terms beside the
// values and exchange both (two shared-memory planes); wide_onchip keeps the values in the wide type
// (double for float, float for the rounded 16-bit types), widened on load and rounded once on store
// (the fold at the end of the stage group that the pass is); a double is exchanged as two 32-bit
// words in two planes, so the bank-conflict-free swizzle of 4-byte words still applies. wide_carry
// also stores each element's residual byte at the end of every pass but the last and resumes from
// it when the next pass loads (FastArgs::carry: one byte per element, same offsets). Butterflies
// per element run in the reference's stage order with its exact operation sequence, so every mode
// is bit-identical to the CPU backend.
#pragma once

#include <cstring>
#include <string>
#include <type_traits>

#include "cuda/arithmetic.cuh"
#include "cuda/butterflies.cuh"
#include "pagh/cuda_check.hpp"
#include "cuda/fast_pass.hpp"
#include "cuda/pass_dependency.cuh"
#include "pagh/error.hpp"

namespace fwht::cuda {

// Blocks per SM the register allocation must allow (ptxas -v: no spills with these). With 64
// elements per thread only first passes of plain float/integer compute fit 80 registers (3
// blocks); strided passes and the rounded 16-bit compute type spill there and get 2. With 32, the
// same first passes fit 64 registers (4 blocks; f16/bf16 batches of 2^7..2^10 measured faster
// than at 3). Two planes of state (stabilized modes, Eps 4 and 5 only) double the state
// registers: 3 and 2 blocks. Paired 16-bit words (Pair16) keep the 16-bit bounds: with HADD2 in the
// rounds, first passes of 64 words per thread spill 332-836 bytes at 80 registers (ptxas).
template <int Eps, bool Three, int Planes = 1> struct FastBounds;
template <bool Three> struct FastBounds<4, Three, 1> { static constexpr int kMinBlocks = 6; };
template <bool Three> struct FastBounds<5, Three, 1> { static constexpr int kMinBlocks = Three ? 4 : 3; };
template <bool Three> struct FastBounds<6, Three, 1> { static constexpr int kMinBlocks = Three ? 3 : 2; };
template <bool Three> struct FastBounds<4, Three, 2> { static constexpr int kMinBlocks = 3; };
template <bool Three> struct FastBounds<5, Three, 2> { static constexpr int kMinBlocks = 2; };

// The register type of a mode: the compute type, or its wide type for wide_onchip / wide_carry.
template <class Tr, Stabilization St, bool kWide = is_wide(St)>
struct Registers {
  using type = typename Tr::C;
  static __device__ __forceinline__ type widen(typename Tr::C x) { return x; }
  static __device__ __forceinline__ typename Tr::C narrow(type x) { return x; }
};
template <class Tr, Stabilization St>
struct Registers<Tr, St, true> {
  using Wd = Wide<typename Tr::C>;
  using type = typename Wd::type;
  static __device__ __forceinline__ type widen(typename Tr::C x) { return Wd::widen(x); }
  static __device__ __forceinline__ typename Tr::C narrow(type x) { return Wd::narrow(x); }
};
template <Stabilization St>
inline constexpr bool kErrorTerms = St == Stabilization::kahan || St == Stabilization::neumaier;
template <class Tr, Stabilization St>
inline constexpr bool kWords64 = sizeof(typename Registers<Tr, St>::type) == 8;
template <class Tr, Stabilization St>
inline constexpr int kPlanes = kErrorTerms<St> || kWords64<Tr, St> ? 2 : 1;
// The wide modes of float at Eps 5: doubles take 64 KiB of shared memory per block (no alignment
// plane), so three blocks fit an SM if the registers do: at 80, ptxas reports at most 28 bytes of
// spills (a fused wide_carry pass would spill 256 bytes: it is not used, see make_fused).
template <class Tr, Stabilization St, int Eps, bool Three>
constexpr int fast_min_blocks() {
  if constexpr (kWords64<Tr, St> && Eps == 5) return 3;
  else return FastBounds<Eps, Three, kPlanes<Tr, St>>::kMinBlocks;
}
template <class Tr, bool First>
inline constexpr bool kThreeWide =
    First && (std::is_same_v<typename Tr::C, float> || std::is_integral_v<typename Tr::C>);

template <int Eps>
__device__ __forceinline__ int bank_xor(int e) {
  const int x = e >> 5;
  if constexpr (Eps == 4) return ((x & 7) << 1) ^ (((x >> 3) & 1) * 17);
  else if constexpr (Eps == 5) return x & 31;
  else return (x >> 1) & 31;
}
template <int Eps>
__device__ __forceinline__ int swizzle(int e) { return e ^ bank_xor<Eps>(e); }
template <int Eps>
__device__ __forceinline__ int padded(int e) { return e + (e >> fast_pad_shift(Eps + 8)); }

// The same for 8-byte words (the double values of the wide modes of float). A warp's 8-byte access
// is served per half-warp: conflict-free when the 16 lanes of each half hit 16 different 8-byte
// bank pairs (word index mod 16). Lane bits j = 0..3 map to element bit j (j < lo) or j + Eps
// (j >= lo), so XORing bits [Eps, Eps + 4) into bits [0, 4) makes the 16 indices mod 16 distinct
// for every lo (checked for every lo and Eps by enumeration, bench/NOTES.md).
template <int Eps>
__device__ __forceinline__ int swizzle64(int e) { return e ^ ((e >> Eps) & 15); }

// Bits of e that come from the thread in a round with register bits [lo, lo + Eps).
template <int Eps>
__device__ __forceinline__ int thread_part(int t, int lo) {
  return (t & ((1 << lo) - 1)) | ((t >> lo) << (lo + Eps));
}

constexpr int ctz_const(int k) {
  int c = 0;
  while ((k & 1) == 0) k >>= 1, ++c;
  return c;
}

// Stages on register bits [k0, k1), increasing. The common full round (all Eps bits) is straight-line
// code; a partial round (the last one, or a small transform) branches per stage. ev holds the error
// terms of Kahan/Neumaier (untouched otherwise).
template <Stabilization St, int Eps, class C>
__device__ __forceinline__ void register_stage(C (&v)[1 << Eps], C (&ev)[1 << Eps], int k) {
#pragma unroll
  for (int m = 0; m < (1 << Eps); ++m) {
    if ((m & (1 << k)) == 0) {
      if constexpr (kErrorTerms<St>) {
        butterfly<St>(v[m], v[m | (1 << k)], ev[m], ev[m | (1 << k)]);
      } else {
        const C a = v[m];
        v[m] = a + v[m | (1 << k)];
        v[m | (1 << k)] = a - v[m | (1 << k)];
      }
    }
  }
}
template <Stabilization St, int Eps, int K0, int K1, class C>
__device__ __forceinline__ void stage_range(C (&v)[1 << Eps], C (&ev)[1 << Eps]) {
#pragma unroll
  for (int k = K0; k < K1; ++k) register_stage<St, Eps>(v, ev, k);
}
// Straight-line code for the full round, every suffix [k0, Eps) (the last round of a pass, clipped
// to the tile) and, for Eps <= 5, every prefix [0, k1) (small transforms, several per block), for
// Eps 6 the prefix [0, 5) only (n = 2^11 in 2^14-element blocks, the default for 2-byte storage;
// more prefixes spill); other partial rounds take the branching form.
template <Stabilization St, int Eps, int K, class C>
__device__ __forceinline__ bool prefix_or_suffix(C (&v)[1 << Eps], C (&ev)[1 << Eps], int k0, int k1) {
  if constexpr (K > Eps) {
    return false;
  } else {
    if ((Eps <= 5 || K == Eps - 1) && k0 == 0 && k1 == K) {  // prefixes: small transforms in one block
      stage_range<St, Eps, 0, K>(v, ev);
      return true;
    }
    if (K < Eps && k0 == K && k1 == Eps) {
      stage_range<St, Eps, K, Eps>(v, ev);
      return true;
    }
    return prefix_or_suffix<St, Eps, K + 1>(v, ev, k0, k1);
  }
}
template <Stabilization St, int Eps, class C>
__device__ __forceinline__ void register_stages(C (&v)[1 << Eps], C (&ev)[1 << Eps], int k0, int k1) {
  if (k0 == 0 && k1 == Eps) {
    stage_range<St, Eps, 0, Eps>(v, ev);
  } else if (!prefix_or_suffix<St, Eps, 1>(v, ev, k0, k1)) {
#pragma unroll
    for (int k = 0; k < Eps; ++k)
      if (k >= k0 && k < k1) register_stage<St, Eps>(v, ev, k);
  }
}

// Registers <-> shared memory with the round's map (register bits [lo, lo + Eps)), in the padded
// or the XOR layout.
template <int Eps, bool Padded, bool ToShared, class C>
__device__ __forceinline__ void exchange(C* sm, C (&v)[1 << Eps], int t, int lo) {
  static_assert(sizeof(C) == 4);
  const auto access = [&](int m, unsigned addr) {
    float* x = reinterpret_cast<float*>(&v[m]);
    if constexpr (ToShared) asm volatile("st.shared.b32 [%0], %1;" ::"r"(addr), "f"(*x) : "memory");
    else asm volatile("ld.shared.b32 %0, [%1];" : "=f"(*x) : "r"(addr) : "memory");
  };
  if constexpr (Padded) {
    // Element m at the thread's address plus padded(m << lo) words: a sum over m's bits, so the
    // Gray-code walk adds or subtracts one bit's offset per step (all constants when lo is).
    int step[Eps];  // byte offsets
#pragma unroll
    for (int j = 0; j < Eps; ++j) step[j] = padded<Eps>(1 << (lo + j)) * 4;
    unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(sm)) + padded<Eps>(thread_part<Eps>(t, lo)) * 4;
#pragma unroll
    for (int k = 0; k < (1 << Eps); ++k) {
      const int m = k ^ (k >> 1);
      if (k > 0) {
        const int j = ctz_const(k);
        if (m & (1 << j)) addr += static_cast<unsigned>(step[j]);
        else addr -= static_cast<unsigned>(step[j]);
      }
      access(m, addr);
    }
  } else if constexpr (Eps <= 5) {
    // sm is aligned to its own size (fast_shared_bytes allocates twice that): the shared-window
    // address of element e is base | 4 * swizzle(e), so each step is one XOR, no add.
    int basis[Eps];  // byte offsets
#pragma unroll
    for (int j = 0; j < Eps; ++j) basis[j] = swizzle<Eps>(1 << (lo + j)) * 4;
    unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(sm)) | (swizzle<Eps>(thread_part<Eps>(t, lo)) * 4);
#pragma unroll
    for (int k = 0; k < (1 << Eps); ++k) {
      if (k > 0) addr ^= static_cast<unsigned>(basis[ctz_const(k)]);
      access(k ^ (k >> 1), addr);
    }
  } else {
    int basis[Eps];  // byte offsets
#pragma unroll
    for (int j = 0; j < Eps; ++j) basis[j] = swizzle<Eps>(1 << (lo + j)) * 4;
    unsigned char* bytes = reinterpret_cast<unsigned char*>(sm);
    int addr = swizzle<Eps>(thread_part<Eps>(t, lo)) * 4;
#pragma unroll
    for (int k = 0; k < (1 << Eps); ++k) {
      if (k > 0) addr ^= basis[ctz_const(k)];
      const int m = k ^ (k >> 1);
      if constexpr (ToShared) *reinterpret_cast<C*>(bytes + addr) = v[m];
      else v[m] = *reinterpret_cast<const C*>(bytes + addr);
    }
  }
}

// Registers <-> shared memory for doubles: one 8-byte access per element (STS.64 / LDS.64), offsets
// walked in Gray-code order by XOR as in exchange and added to the tile's address (the tile is not
// aligned to its size: aligning 2^(Eps+11) bytes would cost up to as much again).
template <int Eps, bool ToShared>
__device__ __forceinline__ void exchange64(double* sm, double (&v)[1 << Eps], int t, int lo) {
  int basis[Eps];  // byte offsets
#pragma unroll
  for (int j = 0; j < Eps; ++j) basis[j] = swizzle64<Eps>(1 << (lo + j)) * 8;
  const unsigned base = static_cast<unsigned>(__cvta_generic_to_shared(sm));
  unsigned offset = static_cast<unsigned>(swizzle64<Eps>(thread_part<Eps>(t, lo)) * 8);
#pragma unroll
  for (int k = 0; k < (1 << Eps); ++k) {
    if (k > 0) offset ^= static_cast<unsigned>(basis[ctz_const(k)]);
    const int m = k ^ (k >> 1);
    if constexpr (ToShared) asm volatile("st.shared.b64 [%0], %1;" ::"r"(base + offset), "d"(v[m]) : "memory");
    else asm volatile("ld.shared.b64 %0, [%1];" : "=d"(v[m]) : "r"(base + offset) : "memory");
  }
}

// Registers <-> shared memory for all of a mode's state: values (doubles as 8-byte words) and, for
// Kahan/Neumaier, error terms in a second plane one plane (fast_plane_words) after the first, so
// that it is aligned like the first (the XOR layout) and hits the same banks (both layouts).
template <int Eps, bool Padded, bool ToShared, Stabilization St, class R, class C>
__device__ __forceinline__ void exchange_state(C* sm, R (&v)[1 << Eps], R (&ev)[1 << Eps], int t, int lo) {
  constexpr int kPlane = static_cast<int>(fast_plane_words(Eps + 8, Padded));
  if constexpr (sizeof(R) == 8) {
    static_assert(!kErrorTerms<St>, "error terms of an 8-byte register type are not supported");
    exchange64<Eps, ToShared>(reinterpret_cast<double*>(sm), v, t, lo);
  } else {
    exchange<Eps, Padded, ToShared>(reinterpret_cast<R*>(sm), v, t, lo);
    if constexpr (kErrorTerms<St>) exchange<Eps, Padded, ToShared>(reinterpret_cast<R*>(sm) + kPlane, ev, t, lo);
  }
}

// The block's tile of shared memory: for the XOR layout of Eps <= 5 and 4-byte words aligned to
// 2^(B+2) bytes inside the allocation of one plane more (see exchange); the padded layout, Eps 6
// and 8-byte words (exchange64) need no alignment.
template <int Eps, class C, bool Words64 = false, bool Padded = false>
__device__ __forceinline__ C* tile_shared() {
  extern __shared__ __align__(16) unsigned char fast_shared[];
  if constexpr (Eps <= 5 && !Padded && !Words64) {
    constexpr unsigned kBytes = 4u << (Eps + 8);
    const unsigned base = static_cast<unsigned>(__cvta_generic_to_shared(fast_shared));
    return reinterpret_cast<C*>(fast_shared + (((base + kBytes - 1) & ~(kBytes - 1)) - base));
  } else {
    return reinterpret_cast<C*>(fast_shared);
  }
}

// What a pass stores for a compute value x: the work type, or on the last pass the storage type
// after the normalization.
template <class Tr, bool Last>
__device__ __forceinline__ std::conditional_t<Last, typename Tr::S, typename Tr::W> pass_output(typename Tr::C x,
                                                                                               const FastArgs& a) {
  using C = typename Tr::C;
  if constexpr (Last) {
    const C scale = [&] {
      if constexpr (Tr::kInteger) return C{};
      else return Math<C>::scale(a.scale);
    }();
    return final_value<Tr>(x, a.scaled, scale, a.n, a.inverse);
  } else {
    return Tr::to_w(x);
  }
}

// One tile of one pass (a.s, a.g, a.w), the block's 2^B elements starting at tile_base: load,
// rounds, store. Hint (fused passes, 4-byte work type): 0 none; 1 (first of two fused passes)
// loads marked evict-first in L2 and stores evict-last, so that they stay for the second; 2 (the
// second) loads bypass L1 (written by other blocks of the same launch) and are marked evict-first,
// as are the stores. 3: loads bypass L1, no L2 hints.
template <class Tr, int Eps, bool First, bool Last, int Hint = 0, Stabilization St = Stabilization::none,
          bool Export = false>
__device__ __forceinline__ void run_tile(const FastArgs& a, const std::int64_t tile_base, typename Tr::C* sm) {
  using C = typename Tr::C;
  using W = typename Tr::W;
  using S = typename Tr::S;
  using Src = std::conditional_t<First, S, W>;
  using Dst = std::conditional_t<Last, S, W>;
  using Reg = Registers<Tr, St>;
  using R = typename Reg::type;
  constexpr bool kCarry = St == Stabilization::wide_carry;
  static_assert(sizeof(C) == 4, "the fast pass is for 4-byte compute types");
  static_assert(!kErrorTerms<St> || (First && Last), "Kahan/Neumaier: single-pass plans only (error terms start at 0)");
  constexpr int E = 1 << Eps;
  constexpr int B = Eps + 8;

  const int t = threadIdx.x;
  const int sb = First ? 0 : a.w;  // stage bits [sb, se) of e
  [[maybe_unused]] std::uint64_t evict_first = 0, evict_last = 0;
  if constexpr (Hint == 1 || Hint == 2) {
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(evict_first));
    asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(evict_last));
  }
  const int se = sb + a.g;

  // Device-memory offset of e = part | (m << lo) is base(part) + m * 2^step_log.
  const auto base_of = [&](int lo) -> std::int64_t {
    const int part = thread_part<Eps>(t, lo);
    if constexpr (First) return tile_base + part;
    else
      return tile_base + (part & ((1 << a.w) - 1)) + (static_cast<std::int64_t>(part >> a.w) << a.s);
  };
  const auto step_log_of = [&](int lo) { return First ? lo : lo - a.w + a.s; };

  // Elements of this thread in the current round that exist (first pass: the last block may be
  // partial; whole transforms only, so whole 16-byte vectors): m < count_of(...).
  const auto count_of = [&](std::int64_t base, int step_log) -> int {
    if constexpr (!First) return E;
    const std::int64_t rem = a.total - base;
    if (rem <= 0) return 0;
    const std::int64_t c = (rem + (std::int64_t{1} << step_log) - 1) >> step_log;
    return c < E ? static_cast<int>(c) : E;
  };

  R v[E];
  R ev[E];  // Kahan/Neumaier error terms (unused otherwise)
  if constexpr (kErrorTerms<St>) {
#pragma unroll
    for (int m = 0; m < E; ++m) ev[m] = R{};
  }
  int lo = min(sb, B - Eps);
  {
    const std::int64_t base = base_of(lo);
    const int step_log = step_log_of(lo);
    const int count = count_of(base, step_log);
    const Src* p = static_cast<const Src*>(a.src) + base;
    const auto convert = [](Src x) {
      if constexpr (First) return Reg::widen(Tr::load_s(x));
      else return Reg::widen(Tr::load_w(x));
    };
    if (First && a.vec_src && a.staged) {  // lo == 0: E consecutive elements, via shared memory
      // The block's 2^B elements are 256 * NV chunks of 16 bytes. Warp-coalesced cp.async (chunk
      // q * 256 + t) into shared memory, chunk c stored at c ^ ((c / NV) % 8): then each 8-thread
      // phase of the LDS.128 reads of thread-consecutive chunks (t * NV + i) hits 8 different
      // 16-byte bank groups, and so does each phase of the writes. Chunks past the end of the data
      // (last block) are zero-filled.
      constexpr int V = 16 / sizeof(Src);
      constexpr int NV = E / V;
      constexpr int kNvLog = ctz_const(NV);
      const unsigned stage = static_cast<unsigned>(__cvta_generic_to_shared(sm));
      const Src* block_src = static_cast<const Src*>(a.src) + tile_base;
      const std::int64_t left = (a.total - tile_base) / V;
      const int valid = left < 256 * NV ? static_cast<int>(left) : 256 * NV;
#pragma unroll
      for (int q = 0; q < NV; ++q) {
        const int c = q * 256 + t;
        const unsigned dst = stage + static_cast<unsigned>((c ^ ((c >> kNvLog) & 7)) * 16);
        const bool ok = c < valid;
        const Src* from = block_src + (ok ? c * V : 0);
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(from), "r"(ok ? 16 : 0) : "memory");
      }
      asm volatile("cp.async.wait_all;" ::: "memory");
      __syncthreads();
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
        for (int j = 0; j < V; ++j) v[i * V + j] = convert(x[j]);
      }
    } else if (First && a.vec_src) {  // lo == 0: E consecutive elements
      constexpr int V = 16 / sizeof(Src);
      uint4 raw[E / V];
#pragma unroll
      for (int q = 0; q < E / V; ++q) {
        if (q * V < count) raw[q] = *reinterpret_cast<const uint4*>(p + q * V);
        else raw[q] = make_uint4(0, 0, 0, 0);
      }
#pragma unroll
      for (int q = 0; q < E / V; ++q) {
        Src x[V];
        std::memcpy(x, &raw[q], 16);
#pragma unroll
        for (int j = 0; j < V; ++j) v[q * V + j] = convert(x[j]);
      }
    } else {
      // Offsets below 2^31 elements: n <= 2^31 on this path (see use_fast).
      const int stride = 1 << step_log;
      Src x[E];
      [[maybe_unused]] signed char residual[E];
      if constexpr (kCarry && !First) {  // read once: through L2 only
#pragma unroll
        for (int m = 0; m < E; ++m) residual[m] = __ldcg(a.carry + base + static_cast<std::int64_t>(m) * stride);
      }
#pragma unroll
      for (int m = 0; m < E; ++m) {
        if (!First || m < count) {
          if constexpr (Hint == 3 && Tr::kPairs) {  // __ldcg has no overload for Pair16: its bits
            const unsigned bits = __ldcg(reinterpret_cast<const unsigned*>(p + m * stride));
            std::memcpy(&x[m], &bits, 4);
          } else if constexpr (Hint == 3) {
            x[m] = __ldcg(p + m * stride);
          } else if constexpr ((Hint == 1 || Hint == 2) && sizeof(Src) == 4) {
            unsigned bits;
            asm volatile("ld.global.cg.L2::cache_hint.b32 %0, [%1], %2;"
                         : "=r"(bits)
                         : "l"(p + m * stride), "l"(evict_first));
            std::memcpy(&x[m], &bits, 4);
          } else {
            x[m] = p[m * stride];
          }
        } else {
          std::memset(&x[m], 0, sizeof(Src));
        }
      }
#pragma unroll
      for (int m = 0; m < E; ++m) {
        if constexpr (kCarry && !First) v[m] = Reg::Wd::resume(Tr::load_w(x[m]), residual[m]);
        else v[m] = convert(x[m]);
      }
    }
  }

  // First passes run their rounds at lo = 0, Eps, B - Eps: exchanges and stores are specialized to
  // these constants (not for the wide modes, whose extra state spills in the extra copies).
  constexpr bool kConstRounds = First && !is_wide(St);
  constexpr bool kPad = fast_padded(B, First && Last && !Export);  // the shared layout (fast_pass.hpp)
  int done = sb, round = 0;
  for (;;) {
    const int k1 = min(lo + Eps, se) - lo;
    register_stages<St, Eps>(v, ev, max(lo, done) - lo, k1);
    done = lo + k1;
    if (done >= se) break;
    ++round;
    const int next = min(sb + round * Eps, B - Eps);
    // Every thread has read the previous exchange (or the staged tile) before this one writes.
    if (round > 1 || (First && a.vec_src && a.staged)) __syncthreads();
    const auto exchange_rounds = [&](int from, int to) {
      exchange_state<Eps, kPad, true, St>(sm, v, ev, t, from);
      __syncthreads();
      exchange_state<Eps, kPad, false, St>(sm, v, ev, t, to);
    };
    // Padded layout: constants give immediate offsets (the XOR layout of 2^12-element blocks would
    // hold 2 x 16 precomputed addresses instead, and spill).
    if (kConstRounds && kPad && lo == 0) exchange_rounds(0, Eps);
    else if (kConstRounds && kPad) exchange_rounds(Eps, B - Eps);
    else exchange_rounds(lo, next);
    lo = next;
  }
  if constexpr (Export) {
    // Cluster passes (cluster_pass.cuh) finish the tile across blocks: tile element e goes to
    // sm[e]. A full tile (sb + g == B) ends on the round lo == B - Eps, where thread t holds
    // e = t + 256 m: consecutive lanes, consecutive words, no bank conflicts.
    static_assert(St == Stabilization::none && !Last, "cluster passes: plain, the cross stages come last");
    __syncthreads();  // every thread has read the last exchange
#pragma unroll
    for (int m = 0; m < E; ++m) sm[t + (m << 8)] = v[m];
    return;
  }

  // The fold of wide_onchip (x = one rounding to C), then the normalization of the last pass.
  const auto out = [&](C x) { return pass_output<Tr, Last>(x, a); };
  // wide_carry, every pass but the last: element m's residual byte, from the same fold x.
  [[maybe_unused]] const auto residual = [&](int m, C x) -> signed char {
    if constexpr (kCarry) return static_cast<signed char>(Reg::Wd::residual(v[m], x));
    else return 0;
  };
  constexpr bool kStoreResidual = kCarry && !Last;
  const std::int64_t base = base_of(lo);
  const int step_log = step_log_of(lo);
  const int count = count_of(base, step_log);
  Dst* p = static_cast<Dst*>(a.dst) + base;
  [[maybe_unused]] signed char* r = a.carry + base;  // residual bytes: the same offsets
  if (First && round == 0 && a.vec_dst) {  // lo == 0: E consecutive elements
    constexpr int V = 16 / sizeof(Dst);
#pragma unroll
    for (int q = 0; q < E / V; ++q) {
      if (count < E && q * V >= count) continue;
      Dst x[V];
      [[maybe_unused]] signed char bytes[V];
#pragma unroll
      for (int j = 0; j < V; ++j) {
        const C folded = Reg::narrow(v[q * V + j]);
        x[j] = out(folded);
        if constexpr (kStoreResidual) bytes[j] = residual(q * V + j, folded);
      }
      uint4 raw;
      std::memcpy(&raw, x, 16);
      *reinterpret_cast<uint4*>(p + q * V) = raw;
      if constexpr (kStoreResidual) {  // V bytes at a multiple of V (base is a multiple of E)
        using Packed = std::conditional_t<V == 4, unsigned, uint2>;
        Packed packed;
        std::memcpy(&packed, bytes, V);
        *reinterpret_cast<Packed*>(r + q * V) = packed;
      }
    }
  } else {
    const int stride = 1 << step_log;
    const auto put = [&](int m, int stride) {
      const C folded = Reg::narrow(v[m]);
      const Dst x = out(folded);
      if constexpr ((Hint == 1 || Hint == 2) && sizeof(Dst) == 4) {
        unsigned bits;
        std::memcpy(&bits, &x, 4);
        asm volatile("st.global.L2::cache_hint.b32 [%0], %1, %2;" ::"l"(p + m * stride), "r"(bits),
                     "l"(Hint == 1 ? evict_last : evict_first)
                     : "memory");
      } else {
        p[m * stride] = x;
      }
      if constexpr (kStoreResidual) r[static_cast<std::int64_t>(m) * stride] = residual(m, folded);
    };
    if (kConstRounds && count == E && step_log == Eps) {  // the constant strides of first passes: immediates
#pragma unroll
      for (int m = 0; m < E; ++m) put(m, 1 << Eps);
    } else if (kConstRounds && count == E && step_log == B - Eps) {
#pragma unroll
      for (int m = 0; m < E; ++m) put(m, 1 << (B - Eps));
    } else if (!First || count == E) {  // every block but the last partial one: no predicates
#pragma unroll
      for (int m = 0; m < E; ++m) put(m, stride);
    } else {
#pragma unroll
      for (int m = 0; m < E; ++m)
        if (m < count) put(m, stride);
    }
  }
}

template <class Tr, int Eps, bool First, bool Last, Stabilization St>
__global__ void __launch_bounds__(kFastThreads, fast_min_blocks<Tr, St, Eps, kThreeWide<Tr, First>>())
    fast_pass(const FastArgs a) {
  pass_prologue<First>();
  constexpr int B = Eps + 8;
  std::int64_t tile_base;
  if constexpr (First) {
    tile_base = static_cast<std::int64_t>(blockIdx.x) << B;
  } else {
    const int tpt = a.log2n - a.g - a.w;  // log2 tiles per transform
    const std::int64_t q = blockIdx.x;
    const std::int64_t tr = q >> tpt;
    const std::int64_t within = q & ((std::int64_t{1} << tpt) - 1);
    const std::int64_t band = within >> (a.s - a.w);
    const std::int64_t cb = within & ((std::int64_t{1} << (a.s - a.w)) - 1);
    tile_base = tr * a.n + (band << (a.s + a.g)) + (cb << a.w);
  }
  using C = typename Tr::C;
  run_tile<Tr, Eps, First, Last, 0, St>(a, tile_base, tile_shared<Eps, C, kWords64<Tr, St>, fast_padded(B, First && Last)>());
}

}  // namespace fwht::cuda
