// The wide sketch kernel's warp-local rounds on tensor cores (wide_sketch.cu; bench/NOTES.md
// "sketch CUDA: tensor-core rounds"). They replace rounds A and B (stages on slot bits 0-9 of the
// warp's 1024 slots, two shared-memory round trips and 10 FP32 adds per value) by one round trip:
//
//   warp w's slot s (bits 0-9) = (tile, row, col) of four 16 x 16 tiles [tensor_layout.hpp]:
//     row = s bits 0-3, col = s bits 4, 6, 7, 5, tile = s bits 8-9
//   axis row:  H_16 . X for each tile X (mma m16n8k16, H_16 as the A operand, X as B in two
//              halves of 8 columns);
//   axis col:  (H_16 X) . H_16, the first product's output fragments being the A operand's;
//   axis tile: two butterfly stages in registers (each thread holds the same elements of 4 tiles).
//
// Exactness: the tensor cores multiply 16-bit parts. Each FP32 value x is split into three bf16
// parts by truncation, x = hi + mid + lo exactly: hi keeps the top 8 significant bits (the upper
// half of x's encoding), x - hi is exact in FP32 and has at most 16 significant bits, mid keeps its
// top 8 and the rest (at most 8 bits) is exactly a bf16 (for |x| >= 2^-110; below that the
// residual may fall into subnormals and lose bits under 2^-133). Products with +-1 are exact, so
// the only rounding is the tensor cores' FP32 accumulation (lo, then mid, then hi, into one
// accumulator per output): integer-valued sums below 2^24 come out exactly, like the FP32 path.
// The bit assignment makes both shared-memory passes free of bank conflicts under wide_swizzle:
// the load (8-byte pairs along a column: row bit 0 in slot bit 0) and the scalar store.
#pragma once

#include <cstdint>

#include "compress/paths/tensor_layout.hpp"
#include "compress/paths/wide_layout.hpp"

namespace pagh::cuda::tensor {

// The bf16 pair (x0 low, x1 high) of the upper halves of two FP32 encodings: truncation.
__device__ __forceinline__ std::uint32_t upper_halves(float x0, float x1) {
  return __byte_perm(__float_as_uint(x0), __float_as_uint(x1), 0x7632);
}
__device__ __forceinline__ float without_upper_half(float x) {
  return __fsub_rn(x, __uint_as_float(__float_as_uint(x) & 0xffff0000u));  // exact
}

// x0 = hi + mid + lo (and x1), as three bf16x2 registers (x0 in the low halves).
__device__ __forceinline__ void split3(float x0, float x1, std::uint32_t& hi, std::uint32_t& mid, std::uint32_t& lo) {
  hi = upper_halves(x0, x1);
  x0 = without_upper_half(x0), x1 = without_upper_half(x1);
  mid = upper_halves(x0, x1);
  x0 = without_upper_half(x0), x1 = without_upper_half(x1);
  lo = upper_halves(x0, x1);
}

// d += A . B for one m16n8k16 tile: bf16 inputs, FP32 accumulation.
__device__ __forceinline__ void mma_bf16(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0, std::uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
// The same with B as one 64-bit register (low word first): a constant B operand then stays in an
// aligned register pair instead of being copied into one before every mma.
__device__ __forceinline__ void mma_bf16(float (&d)[4], const std::uint32_t (&a)[4], std::uint64_t b) {
  asm volatile(
      "{ .reg .b32 b0, b1;\n"
      "  mov.b64 {b0, b1}, %8;\n"
      "  mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {b0, b1}, {%0, %1, %2, %3}; }"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
}

// The +-1 entries of H_16 in bf16, two to a register (the lower index in the low half).
__device__ __forceinline__ std::uint32_t hadamard_pair(int row, int col0) {
  std::uint32_t pair = 0;
#pragma unroll
  for (int e = 0; e < 2; ++e) pair |= ((__popc(row & (col0 + e)) & 1) ? 0xbf80u : 0x3f80u) << (16 * e);
  return pair;
}

// A copy of x that the compiler cannot prove equal to x: H_16's fragments repeat values, and
// merged registers would cost copies into a register quad before every mma.
__device__ __forceinline__ int opaque(int x) {
  int y;
  asm volatile("mov.b32 %0, %1;" : "=r"(y) : "r"(x));
  return y;
}

// H_16 as the A operand (16 x 16, "row": lane (g, t) holds rows g, g + 8 and columns 2t + 0, 1,
// 2t + 8, 9) and as the B operand in halves h of its columns (16 x 8, "col": lane (g, t) holds
// H[k][8h + g] for k = 2t + 0, 1 and 2t + 8, 9). H_16 is symmetric.
struct Hadamard16 {
  std::uint32_t a[4];
  std::uint64_t b[2];  // half h: rows 2t + 0, 1 in the low word, 2t + 8, 9 in the high word
  __device__ explicit Hadamard16(int lane) {
#pragma unroll
    for (int p = 0; p < 4; ++p) {
      const int l = opaque(lane), g = l >> 2, t = l & 3;
      a[p] = hadamard_pair(g + 8 * (p & 1), 2 * t + 8 * (p >> 1));
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int l = opaque(lane), g = l >> 2, t = l & 3;
      b[h] = hadamard_pair(8 * h + g, 2 * t) | std::uint64_t{hadamard_pair(8 * h + g, 2 * t + 8)} << 32;
    }
  }
};

// One tile X, on entry as the B operand of H_16 . X in two column halves: x[4 nh + 2 r + e] =
// X[2t + 8r + e][8 nh + g]. Both axes: on exit x[2p + e] = (H_16 X H_16)[g + 8 (p & 1)][2t + 8 (p >>
// 1) + e], the output fragments of the second product. The first product's output fragments (two
// m16n8 halves) are in the A operand's layout for the second, so no value moves between lanes.
__device__ __forceinline__ void tile_both_axes(float (&x)[8], const Hadamard16& h) {
  std::uint32_t part[3][4];
#pragma unroll
  for (int p = 0; p < 4; ++p) split3(x[2 * p], x[2 * p + 1], part[0][p], part[1][p], part[2][p]);
  float d[2][4] = {};
#pragma unroll
  for (int q = 2; q >= 0; --q)  // lo, mid, hi: the small parts first
#pragma unroll
    for (int nh = 0; nh < 2; ++nh) mma_bf16(d[nh], h.a, part[q][2 * nh], part[q][2 * nh + 1]);
  // d[nh][i] = (H X)[g + 8 (i >> 1)][8 nh + 2t + (i & 1)]: pair p = 2 nh + (i >> 1) is A register p.
#pragma unroll
  for (int p = 0; p < 4; ++p) split3(d[p >> 1][2 * (p & 1)], d[p >> 1][2 * (p & 1) + 1], part[0][p], part[1][p], part[2][p]);
  float e[2][4] = {};
#pragma unroll
  for (int q = 2; q >= 0; --q)
#pragma unroll
    for (int nh = 0; nh < 2; ++nh) mma_bf16(e[nh], part[q], h.b[nh]);
#pragma unroll
  for (int i = 0; i < 4; ++i) x[i] = e[0][i], x[4 + i] = e[1][i];
}

// The shared-memory offsets (floats, wide_swizzle applied) of a lane's elements in tile 0: the
// load's pairs and the store's values (load_slot, store_slot). Tile j adds j << 8 (the swizzle
// leaves bits 8 and up alone).
struct TensorAddresses {
  int load[4], store[8];
  __device__ TensorAddresses(int warp, int lane) {
    const auto swizzled = [base = warp << 10](int slot) { return static_cast<int>(wide_swizzle(static_cast<std::uint32_t>(base + slot))); };
#pragma unroll
    for (int p = 0; p < 4; ++p) {
      load[p] = swizzled(load_slot(lane, p));
#pragma unroll
      for (int e = 0; e < 2; ++e) store[2 * p + e] = swizzled(store_slot(lane, p, e));
    }
  }
};

// H_1024 on warp `warp`'s slots of `buffer` (2^14 floats, wide_swizzle layout), in place; v is
// scratch. No barrier: the warp touches only its own slots (a __syncwarp orders the caller's
// writes before the loads).
__device__ __forceinline__ void tensor_rounds(float* buffer, const TensorAddresses& at, const Hadamard16& h, float (&v)[32]) {
#pragma unroll
  for (int tile = 0; tile < 4; ++tile) {
    float x[8];
#pragma unroll
    for (int p = 0; p < 4; ++p) {
      const float2 pair = *reinterpret_cast<const float2*>(buffer + (tile << 8) + at.load[p]);
      x[2 * p] = pair.x, x[2 * p + 1] = pair.y;
    }
    tile_both_axes(x, h);
#pragma unroll
    for (int e = 0; e < 8; ++e) v[8 * tile + e] = x[e];
  }
  // Tile bits: register bits 3 and 4 (v[8 tile + e]).
#pragma unroll
  for (int k = 3; k < 5; ++k)
#pragma unroll
    for (int r = 0; r < 32; ++r)
      if ((r & (1 << k)) == 0) {
        const float a = v[r], b = v[r | (1 << k)];
        v[r] = __fadd_rn(a, b);
        v[r | (1 << k)] = __fsub_rn(a, b);
      }
  // Lanes store to slots other lanes loaded. The mma data flow already orders those loads first;
  // the barrier states it (and lets racecheck see it).
  __syncwarp();
#pragma unroll
  for (int tile = 0; tile < 4; ++tile)
#pragma unroll
    for (int e = 0; e < 8; ++e) buffer[(tile << 8) + at.store[e]] = v[8 * tile + e];
}

}  // namespace pagh::cuda::tensor
