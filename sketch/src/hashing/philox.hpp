// Philox4x32-10 (Salmon, Moraes, Dror, Shaw: "Parallel random numbers: as easy as 1, 2, 3", SC 2011)
// laid out as cuRAND's generator CURAND_RNG_PSEUDO_PHILOX4_32_10 lays out its stream (default
// ordering, host and device generators alike): word w of the stream for `seed` is word w % 4 of
// the block j = w / 4, and block j is Philox of the 128-bit counter (j >> 16, subsequence j & 0xFFFF)
// under the key (seed low 32 bits, seed high 32 bits); the generator runs 65536 subsequences side
// by side. Computing the words here costs microseconds where the cuRAND host generator's first
// words after a seed or an offset cost tens of milliseconds; tests/sketch/hash_tables_test.cpp checks
// every word against cuRAND's host generator, offsets past 2^16 blocks included.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pagh::philox {

struct Block {
  std::uint32_t word[4];
};

// One Philox4x32 block: 10 rounds of two 32 x 32 -> 64-bit multiplications, the key bumped by the
// Weyl constants between rounds.
inline Block philox4x32_10(std::uint32_t c0, std::uint32_t c1, std::uint32_t c2, std::uint32_t c3, std::uint64_t seed) {
  std::uint32_t k0 = static_cast<std::uint32_t>(seed), k1 = static_cast<std::uint32_t>(seed >> 32);
  for (int round = 0; round < 10; ++round) {
    const std::uint64_t p0 = std::uint64_t{0xD2511F53u} * c0, p1 = std::uint64_t{0xCD9E8D57u} * c2;
    const auto hi0 = static_cast<std::uint32_t>(p0 >> 32), lo0 = static_cast<std::uint32_t>(p0);
    const auto hi1 = static_cast<std::uint32_t>(p1 >> 32), lo1 = static_cast<std::uint32_t>(p1);
    c0 = hi1 ^ c1 ^ k0, c1 = lo1, c2 = hi0 ^ c3 ^ k1, c3 = lo0;
    k0 += 0x9E3779B9u, k1 += 0xBB67AE85u;
  }
  return {{c0, c1, c2, c3}};
}

// Block j of the stream for `seed`.
inline Block stream_block(std::uint64_t seed, std::uint64_t j) {
  const std::uint64_t counter = j >> 16;
  return philox4x32_10(static_cast<std::uint32_t>(counter), static_cast<std::uint32_t>(counter >> 32),
                       static_cast<std::uint32_t>(j & 0xFFFFu), 0, seed);
}

// Blocks j0 .. j0 + kLanes - 1 of the stream, words in stream order (4 * kLanes of them): the same
// rounds as philox4x32_10 on kLanes independent counters side by side. One block's rounds are a
// chain of dependent multiplications; kLanes of them keep the multipliers busy and vectorize
// (32 x 32 -> 64-bit multiplications of vector lanes).
inline constexpr int kLanes = 8;
inline void stream_blocks(std::uint64_t seed, std::uint64_t j0, std::uint32_t* out) {
  std::uint32_t c0[kLanes], c1[kLanes], c2[kLanes], c3[kLanes];
  for (int l = 0; l < kLanes; ++l) {
    const std::uint64_t j = j0 + static_cast<std::uint64_t>(l), counter = j >> 16;
    c0[l] = static_cast<std::uint32_t>(counter), c1[l] = static_cast<std::uint32_t>(counter >> 32);
    c2[l] = static_cast<std::uint32_t>(j & 0xFFFFu), c3[l] = 0;
  }
  std::uint32_t k0 = static_cast<std::uint32_t>(seed), k1 = static_cast<std::uint32_t>(seed >> 32);
  for (int round = 0; round < 10; ++round) {
    for (int l = 0; l < kLanes; ++l) {
      const std::uint64_t p0 = std::uint64_t{0xD2511F53u} * c0[l], p1 = std::uint64_t{0xCD9E8D57u} * c2[l];
      const auto hi0 = static_cast<std::uint32_t>(p0 >> 32), lo0 = static_cast<std::uint32_t>(p0);
      const auto hi1 = static_cast<std::uint32_t>(p1 >> 32), lo1 = static_cast<std::uint32_t>(p1);
      c0[l] = hi1 ^ c1[l] ^ k0, c1[l] = lo1, c2[l] = hi0 ^ c3[l] ^ k1, c3[l] = lo0;
    }
    k0 += 0x9E3779B9u, k1 += 0xBB67AE85u;
  }
  for (int l = 0; l < kLanes; ++l) out[4 * l] = c0[l], out[4 * l + 1] = c1[l], out[4 * l + 2] = c2[l], out[4 * l + 3] = c3[l];
}

// Words [offset, offset + count) of the stream for `seed`, as curandGenerate returns them after
// curandSetPseudoRandomGeneratorSeed(seed) and curandSetGeneratorOffset(offset): a partial first
// block, whole groups of kLanes blocks, then the rest block by block.
inline void generate(std::uint64_t seed, std::uint64_t offset, std::uint32_t* out, std::size_t count) {
  std::size_t done = 0;
  const auto one_block = [&] {
    const std::uint64_t w = offset + done;
    const Block block = stream_block(seed, w / 4);
    for (std::uint64_t i = w % 4; i < 4 && done < count; ++i) out[done++] = block.word[i];
  };
  if (offset % 4 != 0 && count > 0) one_block();
  for (; count - done >= 4 * kLanes; done += 4 * kLanes) stream_blocks(seed, (offset + done) / 4, out + done);
  while (done < count) one_block();
}

}  // namespace pagh::philox
