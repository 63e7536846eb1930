// Host storage types for the 16-bit formats.
//
// fwht::f16 is IEEE 754 binary16 and fwht::bf16 is bfloat16 (the top half of a binary32). Both are
// plain 16-bit values, bit-compatible with CUDA's __half and __nv_bfloat16, so a buffer of either may
// be reinterpreted as the other. We use our own types so that the CPU library needs no CUDA headers.
//
// Conversions round to nearest, ties to even; overflow gives ±inf, NaN stays NaN. Because binary32
// has at least 2p+2 significand bits for both formats (24 >= 2*11+2), adding, subtracting or
// multiplying two such values in float and rounding once gives the correctly rounded result of the
// 16-bit operation (double rounding is innocuous); fwht's "compute in the storage type" mode relies
// on that.
#pragma once

#include <bit>
#include <cstdint>

namespace fwht {

struct f16 {
  std::uint16_t bits = 0;

  f16() = default;
  explicit f16(float v) : bits(from_float(v)) {}
  explicit operator float() const { return to_float(bits); }
  static f16 from_bits(std::uint16_t b) {
    f16 h;
    h.bits = b;
    return h;
  }

  static std::uint16_t from_float(float v) {
    const std::uint32_t x = std::bit_cast<std::uint32_t>(v);
    const std::uint32_t sign = (x >> 16) & 0x8000u;
    const std::uint32_t ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) return static_cast<std::uint16_t>(sign | (ax > 0x7f800000u ? 0x7e00u : 0x7c00u));
    if (ax >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // rounds past 65504
    if (ax < 0x38800000u) {
      // Result is subnormal (or zero): scale so that the fp16 subnormal grid is the integer grid.
      // 0.5f * 2^-23 ... the exact value is |v| * 2^24; round half to even on that integer.
      if (ax < 0x33000000u) return static_cast<std::uint16_t>(sign);  // below half the smallest subnormal
      const int exp = static_cast<int>(ax >> 23);                      // 102..112
      const std::uint32_t mant = (ax & 0x7fffffu) | 0x800000u;
      const int shift = 126 - exp;  // value = mant * 2^(exp-150); want units of 2^-24
      const std::uint32_t q = mant >> shift;
      const std::uint32_t rem = mant & ((1u << shift) - 1u);
      const std::uint32_t half = 1u << (shift - 1);
      const std::uint32_t r = q + ((rem > half || (rem == half && (q & 1u))) ? 1u : 0u);
      return static_cast<std::uint16_t>(sign | r);
    }
    // Normal: rebias the exponent, round the 13 dropped bits to nearest even (a carry into the
    // exponent field is correct, including the carry to infinity).
    const std::uint32_t rebased = ax - ((127u - 15u) << 23);
    const std::uint32_t r = rebased + 0x0fffu + ((rebased >> 13) & 1u);
    return static_cast<std::uint16_t>(sign | (r >> 13));
  }

  static float to_float(std::uint16_t h) {
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
    const std::uint32_t exp = (h >> 10) & 0x1fu;
    const std::uint32_t mant = h & 0x3ffu;
    if (exp == 0x1fu) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
    if (exp != 0) return std::bit_cast<float>(sign | ((exp + 112u) << 23) | (mant << 13));
    // zero or subnormal: mant * 2^-24, exact in float
    const float v = static_cast<float>(mant) * 0x1p-24f;
    return sign ? -v : v;
  }
};

struct bf16 {
  std::uint16_t bits = 0;

  bf16() = default;
  explicit bf16(float v) : bits(from_float(v)) {}
  explicit operator float() const { return to_float(bits); }
  static bf16 from_bits(std::uint16_t b) {
    bf16 h;
    h.bits = b;
    return h;
  }

  static std::uint16_t from_float(float v) {
    const std::uint32_t x = std::bit_cast<std::uint32_t>(v);
    if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);  // quiet NaN
    return static_cast<std::uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
  }
  static float to_float(std::uint16_t b) { return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16); }
};

static_assert(sizeof(f16) == 2 && sizeof(bf16) == 2);

}  // namespace fwht
