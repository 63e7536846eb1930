// The layout of one side's entries for the wide sketch kernel (wide_sketch.cu), built on the host
// once per plan from the hash tables. A block of that kernel owns 2^14 buckets (a "wide slice");
// its warp w owns the slots [1024 w, 1024 (w + 1)) of the folded vector (slot = h mod 2^14).
// Per repetition, warp w's entries form two parts, each padded to a multiple of kWideBatch warp
// instructions:
//   - stores [segment[2w], segment[2w + 1]): the first entry (lowest index) of each of its slots,
//     grouped so that the 32 entries of an instruction rarely share a shared-memory bank (of the
//     cell, and of the staged element they gather): all slots distinct, so each lane stores 0 + x
//     without reading;
//   - adds [segment[2w + 1], segment[2w + 2]): the other entries, by their rank within their slot
//     and then by slot: one instruction never holds a slot twice, and a slot's entries are added
//     in index order (as on the CPU) because instructions run in order.
// Within each chunk of 32 kWideBatch positions, the entry of instruction q and lane l is stored at
// kWideBatch l + q ("lane-major", wide_stored_offset), so that each lane's kWideBatch entries are
// one 16-byte copy into its own shared-memory ring (wide_sketch.cu).
// Position j of repetition t holds:
//   source[t * padded + j] = i | (s(i) < 0) << 31 (kWidePad for padding): the permutation pass
//     copies s(i) A_ik there, so the kernel reads every line coalesced, or the kernel gathers
//     s(i) A_ik from the line staged in shared memory (short lines);
//   code[(plane * repetitions + t) * padded + j] = the byte offset of the entry's shared-memory cell
//     from the side's buffer (bits 0-17: 4 x the swizzled slot; padding: a private dummy cell of its
//     warp and lane at pad_offset + 4 (32 w + lane)) | for each slice f = 8 plane + q of the fold
//     (q < 8), popcount(f & (h >> 14)) mod 2 at bit 18 + q (the sign of the entry in slice f).
// A fold of more than 8 slices (b >= 2^18) has one code plane per 8 slices, so that a block reads
// its slice's sign from one bit as at b <= 2^17: the planes differ only in those bits.
#pragma once

#include <cstdint>
#include <vector>

namespace pagh::cuda {

inline constexpr int kWideLog = 14;                     // buckets per wide slice: 2^14
inline constexpr int kWideWarps = 16;                   // 512 threads; warp w owns 1024 slots
inline constexpr int kWideBatch = 4;                    // warp instructions whose loads the kernel issues together
inline constexpr int kWideMaxFold = 4;                  // at most 2^4 slices (b <= 2^18)
inline constexpr int kWidePlaneFold = 3;                // 2^3 slices' parity bits per code plane
inline constexpr std::uint32_t kWidePad = 0x7fffffffu;  // source of a padding position

struct WideLayout {
  std::vector<std::uint32_t> source;        // repetitions * padded
  std::vector<std::uint32_t> code;          // planes * repetitions * padded
  std::vector<std::int32_t> segment;        // repetitions * (2 * kWideWarps + 1)
  std::int64_t padded = 0;                  // positions per repetition
};

// Stored offset, within its chunk, of the entry at offset e = 32 q + l in instruction order.
constexpr int wide_stored_offset(int e) { return kWideBatch * (e % 32) + e / 32; }

// The swizzled position of slot u in the kernel's shared buffer: bits [5, 8) XORed into [2, 5)
// (every round of the transform is then free of bank conflicts; wide_sketch.cu).
constexpr std::uint32_t wide_swizzle(std::uint32_t u) { return u ^ (((u >> 5) & 7u) << 2); }

// Code planes of a sketch of b = 2^log2b buckets: one per 2^kWidePlaneFold slices of the fold.
constexpr int wide_code_planes(int log2b) {
  return log2b <= kWideLog + kWidePlaneFold ? 1 : 1 << (log2b - kWideLog - kWidePlaneFold);
}

// buckets/signs: repetitions * n entries (hashing.hpp layout), buckets below 2^log2b with
// log2b <= 14 + kWideMaxFold. pad_offset: the byte offset of the dummy cells from this side's buffer.
void build_wide_layout(const std::uint32_t* buckets, const std::int8_t* signs, std::int64_t n, int repetitions, int log2b,
                       std::uint32_t pad_offset, WideLayout& out);

}  // namespace pagh::cuda
