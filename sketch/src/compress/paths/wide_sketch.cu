// The wide sketch kernel: the fused path's kernel for b = 2^14..2^18 (bench/NOTES.md "sketch CUDA:
// wide kernel"). A block of 512 threads owns one wide slice of 2^14 output buckets, one
// repetition and one group of k; per k it folds column k of A and row k of B into two shared
// buffers of 2^14 floats (as fused_sketch.cu folds into 2^12: the top log2(b) - 14 stages become
// the sign (-1)^popcount(f_hi & h_hi) of each entry, one bit of its code), transforms both, and
// adds their product to an accumulator that stays in registers for all k of the block.
//
// Entries come in the order of wide_layout.hpp, s(i) A_ik at the entry's position: for short
// lines (kGather) the block copies column k of A and row k of B into shared memory (bulk copies,
// one k ahead) and each lane gathers its entries through the layout's source words; longer lines
// are first copied into that order by a permutation pass (permute_lines), whose values the lanes
// read directly. Either way the sums are the same, in the same order. Warp w reads its own parts
// coalesced and writes only its own 1024 slots: first the stores part (the first
// entry of each slot: a plain store of 0 + x), then the adds part (the other entries, in index
// order per slot; one read-modify-write per lane, instructions in order). No atomics, no chains
// of conflicting lanes, and the sums have a fixed order. The transform runs in three rounds of 32
// registers per thread:
//   round A: slots w<<10 | lane<<5 | r     (stages on bits 0-4; 16-byte accesses)   warp-local
//   round B: slots w<<10 | r<<5 | lane     (stages on bits 5-9)                     warp-local
//   round C: slots r>>1<<10 | (r&1)<<9 | w<<5 | lane (stages on bits 10-13)         after a barrier
// so a block synchronizes twice per k and its warps otherwise run at their own pace. Slot u lives
// at wide_swizzle(u) (wide_layout.hpp), which makes all three rounds free of bank conflicts.
// Each block adds the k with k mod groups == group in increasing order, so its partial sums do not
// depend on how K is chunked; the engine reduces the groups' partial spectra in a fixed order.
// With 16-bit precision the kernel rounds each slot's sum before the transform and each
// transformed value before the product, as the CPU engine stores its vectors, and with compute =
// storage every butterfly as well; a folded slice rounds the sum of its folded buckets where the
// CPU rounds each bucket and then applies the top stages (within rounding; bit for bit on integer
// inputs whose values are exact in the format).
//
// On tensor cores (WideArgs::tensor_cores, f32 storage): rounds A and B become tensor_rounds
// (tensor_rounds.cuh: H_1024 on the warp's slots as 16 x 16 MMA tiles of three exact bf16 parts
// per value, FP32 accumulation), in one shared-memory round trip instead of two; round C and the
// rest are unchanged.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <cstdlib>
#include <type_traits>

#include "device_memory.hpp"
#include "compress/paths/fused_common.cuh"
#include "compress/paths/kernels.hpp"
#include "compress/paths/tensor_rounds.cuh"
#include "compress/paths/wide_layout.hpp"

namespace pagh::cuda {
namespace {

constexpr int kSlots = 1 << kWideLog;
constexpr int kThreads = 32 * kWideWarps;
constexpr int kRegs = kSlots / kThreads;  // 32 values per thread in each round
static_assert(kWideMaxLog == kWideLog + kWideMaxFold, "the layout's code planes carry one parity bit per slice");
static_assert(kRegs == 32 && kWideLog == 14, "the rounds below assume 2^14 = 2^4 warps x 2^5 lanes x 2^5 registers");

__device__ __forceinline__ void store_shared(unsigned address, float x) {
  asm volatile("st.shared.f32 [%0], %1;" ::"r"(address), "f"(x) : "memory");
}
__device__ __forceinline__ float load_shared(unsigned address) {
  float x;
  asm volatile("ld.shared.f32 %0, [%1];" : "=f"(x) : "r"(address) : "memory");
  return x;
}

// The scatter's input pipeline. Each lane owns a ring of kRing slots in shared memory; slot s
// holds 16 bytes of values and 16 bytes of codes: the lane's 4 entries of one chunk (wide_layout.hpp
// stores them lane-major). The lane copies them itself with cp.async, so it never waits for another
// lane and needs no barrier: wait_group tells it that its oldest copy has landed. Chunks are issued
// kRing ahead of their use, across k, so the copies of k + 1 run while the block transforms k.
constexpr int kRing = 6;
// With staged lines (kGather) the rings shrink to make room: 4 slots (64 KiB) while the lines fit
// beside them (m + p up to ~8400 entries), else 2 (m + p up to ~16600).
constexpr int kGatherRings[] = {4, 2};
constexpr int kChunk = 32 * kWideBatch;
static_assert(kWideBatch == 4, "one 16-byte copy of values and one of codes per lane and chunk");

__device__ __forceinline__ void copy_16(unsigned to, const void* from) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(to), "l"(from) : "memory");
}
__device__ __forceinline__ void commit_copies() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int kSlotsInRing>
__device__ __forceinline__ void wait_oldest_copy() { asm volatile("cp.async.wait_group %0;" ::"n"(kSlotsInRing - 1) : "memory"); }
__device__ __forceinline__ void wait_all_copies() { asm volatile("cp.async.wait_group 0;" ::: "memory"); }
__device__ __forceinline__ void load_shared_4(unsigned address, std::uint32_t (&x)[4]) {
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(x[0]), "=r"(x[1]), "=r"(x[2]), "=r"(x[3]) : "r"(address) : "memory");
}

// Staged lines (kGather): thread 0 copies column k of A and row k of B into shared memory with two
// bulk copies (the tensor memory accelerator) that complete on one mbarrier, a mechanism apart from
// the lanes' cp.async groups. The lines have one zero cell after them (index n: padding entries).
__device__ __forceinline__ void init_line_barrier(unsigned bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar) : "memory");
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // visible to the bulk copies
}
__device__ __forceinline__ void stage_lines(unsigned bar, unsigned to_a, const float* a, unsigned bytes_a, unsigned to_b, const float* b,
                                            unsigned bytes_b) {
  // The previous k's gathers (generic proxy) are ordered before these writes (async proxy).
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes_a + bytes_b) : "memory");
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(to_a), "l"(a),
               "r"(bytes_a), "r"(bar)
               : "memory");
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(to_b), "l"(b),
               "r"(bytes_b), "r"(bar)
               : "memory");
}
__device__ __forceinline__ void wait_lines(unsigned bar, unsigned phase) {
  unsigned done = 0;
  do {
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                 : "=r"(done)
                 : "r"(bar), "r"(phase)
                 : "memory");
  } while (!done);
}
// The value of source word e (i | (s(i) < 0) << 31, or kWidePad) in a staged line of n entries.
__device__ __forceinline__ std::uint32_t gathered(unsigned line, unsigned n, std::uint32_t e) {
  std::uint32_t x;
  asm volatile("ld.shared.u32 %0, [%1];" : "=r"(x) : "r"(line + 4 * min(e & kWidePad, n)) : "memory");
  return x ^ (e & 0x80000000u);
}

// One entry: x = s(i) A_ik (the permutation applied s) times the fold's sign for this slice (code
// bit 18 + f), into the cell at code bits 0-17 of `buffer`. Stores: 0 + x (distinct slots; turns
// -0 into +0 as the CPU's zeroed bucket); adds: cell += x, then __syncwarp because the next
// instruction may add to the same slot.
template <bool kAdd>
__device__ __forceinline__ void place(std::uint32_t x, std::uint32_t code, unsigned buffer, int sign_shift) {
  const float v = __uint_as_float(x ^ ((code << sign_shift) & 0x80000000u));
  const unsigned cell = buffer + (code & 0x3ffffu);
  if constexpr (kAdd) {
    store_shared(cell, __fadd_rn(load_shared(cell), v));
    __syncwarp();
  } else {
    store_shared(cell, __fadd_rn(0.0f, v));
  }
}

// The storage precision of the transformed vectors (SketchParams::precision and compute): f32
// keeps every value; f16/bf16 round each bucket sum before the transform and each transformed
// value before the product, as the CPU engine stores its vectors. With compute f32 the transform
// itself is f32; with compute = storage (kEachOp) every butterfly output is rounded as well, the
// CPU's Rounded16 arithmetic (an f32 add or subtract of two 16-bit values, rounded once).
// Values are rounded in pairs: one packing conversion (F2FP) per pair and a widening per value;
// single bf16 conversions compile to F2F, which runs on the slow conversion pipe (bf16 measured
// slower than f32 with single conversions).
struct KeepF32 {
  static constexpr bool kEachOp = false;
  static __device__ __forceinline__ void apply(float&, float&) {}
};
// f32 storage with rounds A and B on tensor cores (tensor_rounds.cuh).
struct TensorF32 : KeepF32 {};

template <bool kEachOp_>
struct RoundF16 {
  static constexpr bool kEachOp = kEachOp_;
  static __device__ __forceinline__ void apply(float& x, float& y) {
    const float2 r = __half22float2(__floats2half2_rn(x, y));
    x = r.x, y = r.y;
  }
};
template <bool kEachOp_>
struct RoundBF16 {
  static constexpr bool kEachOp = kEachOp_;
  static __device__ __forceinline__ void apply(float& x, float& y) {
    const __nv_bfloat162 r = __floats2bfloat162_rn(x, y);  // x in the low half
    const unsigned bits = *reinterpret_cast<const unsigned*>(&r);
    x = __uint_as_float(bits << 16), y = __uint_as_float(bits & 0xffff0000u);
  }
};

// Butterfly stages on register bits [kFirst, kFirst + kCount), rounded per operation if kEachOp.
template <class Storage, int kFirst, int kCount>
__device__ __forceinline__ void stages(float (&v)[kRegs]) {
  if constexpr (!Storage::kEachOp) {
    fused::butterfly_stages<kFirst, kCount>(v);
  } else {
#pragma unroll
    for (int k = kFirst; k < kFirst + kCount; ++k) {
#pragma unroll
      for (int r = 0; r < kRegs; ++r) {
        if ((r & (1 << k)) == 0) {
          float sum = __fadd_rn(v[r], v[r | (1 << k)]), difference = __fsub_rn(v[r], v[r | (1 << k)]);
          Storage::apply(sum, difference);
          v[r] = sum, v[r | (1 << k)] = difference;
        }
      }
    }
  }
}

// Rounds A and B of one buffer, on warp `warp`'s 1024 slots (no barrier needed: warp-local).
template <class Storage>
__device__ __forceinline__ void rounds_a_b(float* buffer, int warp, int lane, const int (&round_b)[8], float (&v)[kRegs]) {
  float* row = buffer + (warp << 10) + (lane << 5);
#pragma unroll
  for (int q = 0; q < kRegs / 4; ++q) {
    const float4 x = *reinterpret_cast<const float4*>(row + ((q ^ (lane & 7)) << 2));
    v[4 * q] = x.x, v[4 * q + 1] = x.y, v[4 * q + 2] = x.z, v[4 * q + 3] = x.w;
    Storage::apply(v[4 * q], v[4 * q + 1]);
    Storage::apply(v[4 * q + 2], v[4 * q + 3]);
  }
  stages<Storage, 0, 5>(v);
#pragma unroll
  for (int q = 0; q < kRegs / 4; ++q)
    *reinterpret_cast<float4*>(row + ((q ^ (lane & 7)) << 2)) = make_float4(v[4 * q], v[4 * q + 1], v[4 * q + 2], v[4 * q + 3]);
  __syncwarp();
#pragma unroll
  for (int r = 0; r < kRegs; ++r) v[r] = buffer[round_b[r & 7] + (r << 5)];
  stages<Storage, 0, 5>(v);
#pragma unroll
  for (int r = 0; r < kRegs; ++r) buffer[round_b[r & 7] + (r << 5)] = v[r];
}

// Round C: slot (r >> 1) << 10 | (r & 1) << 9 | w << 5 | lane, at round_c + that offset. Each
// slot is read by one thread and swapped for 0 (one atom.exch instead of a load here and a store
// when the next k zeroes its buffers).
template <class Storage>
__device__ __forceinline__ void round_c(float* buffer, int round_c_base, float (&v)[kRegs]) {
  const auto base = static_cast<unsigned>(__cvta_generic_to_shared(buffer + round_c_base));
#pragma unroll
  for (int r = 0; r < kRegs; ++r) {
    unsigned bits;
    asm volatile("atom.shared.exch.b32 %0, [%1], 0;" : "=r"(bits) : "r"(base + 4 * (((r >> 1) << 10) + ((r & 1) << 9))) : "memory");
    v[r] = __uint_as_float(bits);
  }
  stages<Storage, 1, 4>(v);
}

// kGather: the lanes' rings carry source words instead of permuted values, and each k's lines are
// staged in shared memory and gathered (no permutation pass). Same sums in the same order.
template <class Storage, int kStagedRing>
__global__ void __launch_bounds__(kThreads, 1) wide_sketch(WideArgs args) {
  constexpr bool kGather = kStagedRing > 0;  // 0: permuted lines
  // Shared memory: a_k and b_k (2^14 floats each), one dummy cell per thread, the lanes' rings;
  // kGather: then the lines' mbarrier (16 bytes) and the two staged lines with their zero cells.
  constexpr int kSlotsInRing = kGather ? kStagedRing : kRing;
  extern __shared__ __align__(16) float buffers[];
  float* buffer_a = buffers;
  float* buffer_b = buffers + kSlots;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int group = blockIdx.x, rep = blockIdx.z;
  const std::uint32_t f_hi = blockIdx.y;
  // Slice f_hi's sign: bit 18 + (f_hi mod 8) of its code plane f_hi / 8 (wide_layout.hpp), moved to bit 31.
  const int sign_shift = 13 - static_cast<int>(f_hi % (1u << kWidePlaneFold));
  const std::int64_t plane = f_hi >> kWidePlaneFold;
  const std::int64_t b = std::int64_t{1} << args.log2b;
  // Round C's slots (and the accumulator's): u(r) = round_c_base + offset(r) before the swizzle,
  // whose XOR term (bits 5-7 = warp bits 0-2) is the same for all r of a thread.
  const int round_c_base = (warp << 5) + (lane ^ ((warp & 7) << 2));
  const int unswizzled_c = (warp << 5) + lane;
  int round_b[8];
#pragma unroll
  for (int q = 0; q < 8; ++q) round_b[q] = (warp << 10) + (lane ^ (q << 2));

  float* partial = args.partials + (static_cast<std::int64_t>(group) * args.repetitions + rep) * b + (static_cast<std::int64_t>(f_hi) << kWideLog);
  float acc[kRegs];
#pragma unroll
  for (int r = 0; r < kRegs; ++r) acc[r] = args.accumulate ? partial[unswizzled_c + ((r >> 1) << 10) + ((r & 1) << 9)] : 0.0f;

  // This warp's parts (wide_layout.hpp): stores [s0, s1) and adds [s1, s2) of each side, one
  // contiguous range per side; chunks are copied and consumed in the order a's range, b's range.
  const int* segment_a = args.segment_a + rep * (2 * kWideWarps + 1) + 2 * warp;
  const int* segment_b = args.segment_b + rep * (2 * kWideWarps + 1) + 2 * warp;
  const int a0 = segment_a[0], a1 = segment_a[1], a2 = segment_a[2];
  const int b0 = segment_b[0], b1 = segment_b[1], b2 = segment_b[2];
  const bool any_chunk = a2 > a0 || b2 > b0;
  const auto shared_a = static_cast<unsigned>(__cvta_generic_to_shared(buffer_a));
  const auto shared_b = static_cast<unsigned>(__cvta_generic_to_shared(buffer_b));
  const unsigned rings = static_cast<unsigned>(__cvta_generic_to_shared(buffers + 2 * kSlots + kThreads));
  const unsigned ring = rings + warp * (kSlotsInRing * 1024) + 16 * lane;
  const unsigned line_bar = rings + kWideWarps * kSlotsInRing * 1024;
  const unsigned staged_a = line_bar + 16, staged_b = staged_a + 4 * ((args.m + 4) & ~3);

  // The first k of this chunk that belongs to this group.
  const std::int64_t first = args.k_first + ((group - args.k_first % args.groups) % args.groups + args.groups) % args.groups;
  const std::int64_t end = args.k_first + args.k_count;
  // The next copy: this lane's 16 bytes at position `at` (< `until`; both include 4 lane) of the
  // line at `from` and of the codes at `codes`: side a or b of k = next_k. Copies go into the ring
  // slot just consumed: after the first kRing, `slot` is both the next slot to read and to fill.
  // Pointers are rebuilt from args when the range changes (twice per k) to spare registers.
  std::int64_t next_k = first;
  bool side_b = a2 == a0, live = first < end && any_chunk;
  int at = (side_b ? b0 : a0) + 4 * lane, until = (side_b ? b2 : a2) + 4 * lane;
  auto line_of = [&](bool b_side, std::int64_t k) {
    if constexpr (kGather) return b_side ? args.source_b + rep * args.ld_b : args.source_a + rep * args.ld_a;
    const std::int64_t line = rep * args.k_count + (k - args.k_first);
    const float* values = b_side ? args.lines_b + line * args.ld_b : args.lines_a + line * args.ld_a;
    return reinterpret_cast<const std::uint32_t*>(values);
  };
  auto codes_of = [&](bool b_side) {
    return b_side ? args.code_b + (plane * args.repetitions + rep) * args.ld_b : args.code_a + (plane * args.repetitions + rep) * args.ld_a;
  };
  const std::uint32_t* from = line_of(side_b, first);
  const std::uint32_t* codes = codes_of(side_b);
  unsigned slot = ring;
  const unsigned ring_end = ring + kSlotsInRing * 1024;
  auto issue = [&] {
    if (live) {
      copy_16(slot, from + at);
      copy_16(slot + 512, codes + at);
      at += kChunk;
      while (at == until) {  // the next range, skipping empty ones (some range is not empty)
        if (!side_b) {
          side_b = true, at = b0 + 4 * lane, until = b2 + 4 * lane;
        } else {
          side_b = false, at = a0 + 4 * lane, until = a2 + 4 * lane;
          next_k += args.groups;
          live = next_k < end;
        }
        from = line_of(side_b, next_k), codes = codes_of(side_b);
      }
    }
    commit_copies();  // possibly empty: one group per chunk keeps wait_oldest_copy exact
  };
  for (int q = 0; q < kSlotsInRing; ++q) {
    issue();
    slot += 1024;
  }
  slot = ring;

  // kGather: the lines of k come while the block works on the k before (one staged copy, refilled
  // after the barrier that ends the previous k's gathers).
  auto stage = [&](std::int64_t k) {
    const std::int64_t line = k - args.k_first;
    stage_lines(line_bar, staged_a, args.a + line * args.lda, 4 * args.m, staged_b, args.bt + line * args.ldbt, 4 * args.p);
  };
  unsigned phase = 0;
  if constexpr (kGather) {
    if (tid == 0) {
      init_line_barrier(line_bar);
      asm volatile("st.shared.u32 [%0], 0;" ::"r"(staged_a + 4 * args.m) : "memory");  // the zero cells
      asm volatile("st.shared.u32 [%0], 0;" ::"r"(staged_b + 4 * args.p) : "memory");
    }
    __syncthreads();
    if (tid == 0 && first < end) stage(first);
  }

  // The chunks of [begin, stop) into `buffer` (add: the adds part), each followed by the copy
  // that refills its ring slot.
  auto consume = [&](auto add, int begin, int stop, unsigned buffer, unsigned staged, unsigned n) {
    for (int c = begin; c < stop; c += kChunk) {
      wait_oldest_copy<kSlotsInRing>();
      std::uint32_t x[4], code[4];
      load_shared_4(slot, x);
      load_shared_4(slot + 512, code);
      if constexpr (kGather) {
#pragma unroll
        for (int q = 0; q < 4; ++q) x[q] = gathered(staged, n, x[q]);
      }
#pragma unroll
      for (int q = 0; q < 4; ++q) place<decltype(add)::value>(x[q], code[q], buffer, sign_shift);
      issue();  // into the slot just read, whose values have been used above
      slot = slot + 1024 == ring_end ? ring : slot + 1024;
    }
  };
  // Zero this warp's slots once; afterwards round C leaves every slot at 0 for the next k.
  const float4 zero = make_float4(0, 0, 0, 0);
#pragma unroll
  for (int q = 0; q < 8; ++q) {
    reinterpret_cast<float4*>(buffer_a + (warp << 10))[lane + 32 * q] = zero;
    reinterpret_cast<float4*>(buffer_b + (warp << 10))[lane + 32 * q] = zero;
  }
  for (std::int64_t k = first; k < end; k += args.groups) {
    __syncwarp();
    if constexpr (kGather) wait_lines(line_bar, phase), phase ^= 1u;
    const auto m = static_cast<unsigned>(args.m), p = static_cast<unsigned>(args.p);
    consume(std::false_type{}, a0, a1, shared_a, staged_a, m);
    __syncwarp();  // every store precedes the first add
    consume(std::true_type{}, a1, a2, shared_a, staged_a, m);
    consume(std::false_type{}, b0, b1, shared_b, staged_b, p);
    __syncwarp();
    consume(std::true_type{}, b1, b2, shared_b, staged_b, p);
    __syncwarp();
    float v[kRegs];
    if constexpr (std::is_same_v<Storage, TensorF32>) {
      const tensor::TensorAddresses at(warp, lane);
      const tensor::Hadamard16 h(lane);
      tensor::tensor_rounds(buffer_a, at, h, v);
      tensor::tensor_rounds(buffer_b, at, h, v);
    } else {
      rounds_a_b<Storage>(buffer_a, warp, lane, round_b, v);
      rounds_a_b<Storage>(buffer_b, warp, lane, round_b, v);
    }
    __syncthreads();
    if constexpr (kGather) {
      if (tid == 0 && k + args.groups < end) stage(k + args.groups);
    }
    float w[kRegs];
    round_c<Storage>(buffer_a, round_c_base, v);
    round_c<Storage>(buffer_b, round_c_base, w);
    // P += Ha . Hb in the storage precision, multiply then add (rounded separately, as the CPU
    // engine does).
#pragma unroll
    for (int r = 0; r < kRegs; r += 2) Storage::apply(v[r], v[r + 1]), Storage::apply(w[r], w[r + 1]);
#pragma unroll
    for (int r = 0; r < kRegs; ++r) acc[r] = __fadd_rn(acc[r], __fmul_rn(v[r], w[r]));
    __syncthreads();
  }
  wait_all_copies();
#pragma unroll
  for (int r = 0; r < kRegs; ++r) partial[unswizzled_c + ((r >> 1) << 10) + ((r & 1) << 9)] = acc[r];
}

// out[(t * count + line) * padded + j] = s(i) x_i for source i of position j (0 on padding), for
// every repetition t: one block per line, which is staged once in shared memory so that reads and
// writes coalesce (16-byte accesses; kVector: the line itself is 16-byte aligned and n % 4 == 0).
constexpr int kPermuteThreads = 512;
__device__ __forceinline__ float permuted(const float* staged, std::uint32_t e) {
  const float x = e == kWidePad ? 0.0f : staged[e & kWidePad];
  return __uint_as_float(__float_as_uint(x) ^ (e & 0x80000000u));
}
template <bool kVector>
__global__ void __launch_bounds__(kPermuteThreads) permute_lines(const float* __restrict__ in, std::int64_t ld_in, int n,
                                                                 const std::uint32_t* __restrict__ source, int padded, int repetitions,
                                                                 std::int64_t count, float* __restrict__ out) {
  extern __shared__ float4 staged4[];
  const auto* staged = reinterpret_cast<const float*>(staged4);
  const std::int64_t line = blockIdx.x;
  const float* from = in + line * ld_in;
  if constexpr (kVector) {
    for (int i = threadIdx.x; i < n / 4; i += kPermuteThreads) staged4[i] = __ldg(reinterpret_cast<const float4*>(from) + i);
  } else {
    for (int i = threadIdx.x; i < n; i += kPermuteThreads) reinterpret_cast<float*>(staged4)[i] = __ldg(from + i);
  }
  __syncthreads();
  for (int t = 0; t < repetitions; ++t) {
    const auto* src = reinterpret_cast<const uint4*>(source + static_cast<std::int64_t>(t) * padded);
    auto* to = reinterpret_cast<float4*>(out + (t * count + line) * padded);
    for (int j = threadIdx.x; j < padded / 4; j += kPermuteThreads) {
      const uint4 e = __ldg(src + j);
      to[j] = make_float4(permuted(staged, e.x), permuted(staged, e.y), permuted(staged, e.z), permuted(staged, e.w));
    }
  }
}

// Shared memory of the wide kernel: both buffers, one dummy cell per thread (padding entries write
// there) and the lanes' rings; kGather adds the mbarrier and the staged lines (gather_shared_bytes).
constexpr std::size_t kWideBase = (2 * kSlots + kThreads) * sizeof(float);
constexpr std::size_t kWideShared = kWideBase + kWideWarps * kRing * 1024;
static_assert(2 * kSlots * sizeof(float) + 4 * kThreads <= (1u << 18), "codes hold byte offsets in 18 bits");
constexpr std::size_t gather_shared_bytes(std::int64_t m, std::int64_t p, int ring) {
  return kWideBase + kWideWarps * ring * 1024 + 16 + 4 * static_cast<std::size_t>(((m + 4) & ~3) + ((p + 4) & ~3));
}
// The largest dynamic shared memory a block may opt into on this device.
std::size_t shared_optin() {
  int device = 0, bytes = 0;
  PAGH_CUDA_CHECK(cudaGetDevice(&device), "pagh::cuda::launch_wide");
  PAGH_CUDA_CHECK(cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device), "pagh::cuda::launch_wide");
  return static_cast<std::size_t>(bytes);
}
template <int kStagedRing>
void allow_wide_shared() {
  static const bool done = [] {
    const std::size_t bytes = kStagedRing > 0 ? shared_optin() : kWideShared;
    for (const void* kernel :
         {reinterpret_cast<const void*>(wide_sketch<KeepF32, kStagedRing>), reinterpret_cast<const void*>(wide_sketch<TensorF32, kStagedRing>),
          reinterpret_cast<const void*>(wide_sketch<RoundF16<false>, kStagedRing>),
          reinterpret_cast<const void*>(wide_sketch<RoundBF16<false>, kStagedRing>),
          reinterpret_cast<const void*>(wide_sketch<RoundF16<true>, kStagedRing>),
          reinterpret_cast<const void*>(wide_sketch<RoundBF16<true>, kStagedRing>)})
      PAGH_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)),
                      "pagh::cuda::launch_wide");
    return true;
  }();
  (void)done;
}
template <int kStagedRing>
void launch_wide_as(const WideArgs& args, dim3 grid, std::size_t shared, cudaStream_t stream) {
  allow_wide_shared<kStagedRing>();
  const bool each_op = args.storage_arithmetic;
  switch (args.storage) {
    case WideStorage::f32:
      if (args.tensor_cores) wide_sketch<TensorF32, kStagedRing><<<grid, kThreads, shared, stream>>>(args);
      else wide_sketch<KeepF32, kStagedRing><<<grid, kThreads, shared, stream>>>(args);
      break;
    case WideStorage::f16:
      if (each_op) wide_sketch<RoundF16<true>, kStagedRing><<<grid, kThreads, shared, stream>>>(args);
      else wide_sketch<RoundF16<false>, kStagedRing><<<grid, kThreads, shared, stream>>>(args);
      break;
    case WideStorage::bf16:
      if (each_op) wide_sketch<RoundBF16<true>, kStagedRing><<<grid, kThreads, shared, stream>>>(args);
      else wide_sketch<RoundBF16<false>, kStagedRing><<<grid, kThreads, shared, stream>>>(args);
      break;
  }
}
// The ring of staged-line launches: the deepest of kGatherRings that fits (0: none fits).
int gather_ring(std::int64_t m, std::int64_t p) {
  if (m <= 0 || p <= 0 || m % 4 != 0 || p % 4 != 0 || m > kWideMaxLine || p > kWideMaxLine) return 0;
  for (const int ring : kGatherRings)
    if (gather_shared_bytes(m, p, ring) <= shared_optin()) return ring;
  return 0;
}

}  // namespace

void launch_permute_lines(const float* in, std::int64_t ld_in, std::int64_t n, const std::uint32_t* source, std::int64_t padded,
                          int repetitions, std::int64_t count, float* out, cudaStream_t stream) {
  if (count <= 0) return;
  if (n > kWideMaxLine || padded % 4 != 0 || padded > INT32_MAX || count > INT32_MAX)
    throw Error("pagh::cuda::launch_permute_lines", "line of " + std::to_string(n) + " entries is longer than the wide kernel's 2^15");
  static const bool configured = [] {
    for (const void* kernel : {reinterpret_cast<const void*>(permute_lines<true>), reinterpret_cast<const void*>(permute_lines<false>)})
      PAGH_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kWideMaxLine * sizeof(float)),
                      "pagh::cuda::launch_permute_lines");
    return true;
  }();
  (void)configured;
  const std::size_t shared = static_cast<std::size_t>((n + 3) / 4) * 16;
  const bool vector = reinterpret_cast<std::uintptr_t>(in) % 16 == 0 && ld_in % 4 == 0 && n % 4 == 0;
  const auto lines = static_cast<unsigned>(count);
  if (vector)
    permute_lines<true><<<lines, kPermuteThreads, shared, stream>>>(in, ld_in, static_cast<int>(n), source, static_cast<int>(padded),
                                                                   repetitions, count, out);
  else
    permute_lines<false><<<lines, kPermuteThreads, shared, stream>>>(in, ld_in, static_cast<int>(n), source, static_cast<int>(padded),
                                                                    repetitions, count, out);
  check_launch("permute_lines", "pagh::cuda::launch_permute_lines");
}

bool wide_gather_fits(std::int64_t m, std::int64_t p) { return gather_ring(m, p) > 0; }

void launch_wide(const WideArgs& args, cudaStream_t stream) {
  if (args.log2b < kWideLog || args.log2b > kWideMaxLog || args.groups < 1 || args.repetitions < 1 || args.repetitions > 65535)
    throw Error("pagh::cuda::launch_wide", "unsupported geometry (needs 2^14 <= b <= 2^18)");
  const dim3 grid(static_cast<unsigned>(args.groups), 1u << (args.log2b - kWideLog), static_cast<unsigned>(args.repetitions));
  if (args.gather) {
    // Bulk copies need 16-byte aligned lines whose lengths are multiples of 16 bytes.
    const bool aligned = reinterpret_cast<std::uintptr_t>(args.a) % 16 == 0 && reinterpret_cast<std::uintptr_t>(args.bt) % 16 == 0 &&
                         args.lda % 4 == 0 && args.ldbt % 4 == 0;
    const int ring = gather_ring(args.m, args.p);
    if (!aligned || ring == 0)
      throw Error("pagh::cuda::launch_wide", "internal: staged lines need 16-byte aligned lines of a multiple of 4 entries that fit");
    const std::size_t shared = gather_shared_bytes(args.m, args.p, ring);
    if (ring == kGatherRings[0]) launch_wide_as<kGatherRings[0]>(args, grid, shared, stream);
    else launch_wide_as<kGatherRings[1]>(args, grid, shared, stream);
  } else {
    launch_wide_as<0>(args, grid, kWideShared, stream);
  }
  check_launch("wide_sketch", "pagh::cuda::launch_wide");
}

int wide_blocks_per_sm() {
  int blocks = 0;
  allow_wide_shared<0>();
  PAGH_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, wide_sketch<KeepF32, 0>, kThreads, kWideShared),
                  "pagh::cuda::wide_blocks_per_sm");
  return blocks;
}

}  // namespace pagh::cuda
