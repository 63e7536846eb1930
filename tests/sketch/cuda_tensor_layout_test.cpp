// The tile layout of the wide kernel's tensor-core rounds (compress/paths/tensor_layout.hpp), on
// the host: a bijection onto the warp's slots, every slot loaded and stored once per tile, and no
// shared-memory bank conflicts under wide_swizzle. The rounds themselves: cuda_tensor_test.cpp.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <vector>

#include "compress/paths/tensor_layout.hpp"
#include "compress/paths/wide_layout.hpp"

namespace {

// Host-side (runs without a GPU): the tiles hold each of a warp's 1024 slots once; per tile the
// lanes' load pairs and stored values cover its 256 slots once each; and under wide_swizzle every
// load instruction (8-byte pairs, served 16 lanes at a time) and every store instruction (32
// words) touches each bank once.
TEST(SketchCudaHost, TensorTileLayoutCoversEverySlotWithoutBankConflicts) {
  using namespace pagh::cuda::tensor;
  std::vector<int> slots(1024, 0), loaded(256, 0), stored(256, 0);
  for (int tile = 0; tile < 4; ++tile)
    for (int row = 0; row < 16; ++row)
      for (int col = 0; col < 16; ++col) ++slots[static_cast<std::size_t>(slot_of(tile, row, col))];
  for (int lane = 0; lane < 32; ++lane)
    for (int pair = 0; pair < 4; ++pair) {
      const int s = load_slot(lane, pair);
      ASSERT_EQ(s % 2, 0) << "a load pair starts at an even slot";
      ++loaded[static_cast<std::size_t>(s)], ++loaded[static_cast<std::size_t>(s + 1)];
      for (int e = 0; e < 2; ++e) ++stored[static_cast<std::size_t>(store_slot(lane, pair, e))];
    }
  for (int s = 0; s < 1024; ++s) ASSERT_EQ(slots[static_cast<std::size_t>(s)], 1) << "slot " << s;
  for (int s = 0; s < 256; ++s) {
    ASSERT_EQ(loaded[static_cast<std::size_t>(s)], 1) << "tile slot " << s << " loaded";
    ASSERT_EQ(stored[static_cast<std::size_t>(s)], 1) << "tile slot " << s << " stored";
  }
  const auto swizzled = [](int warp, int tile, int slot) {
    return static_cast<int>(pagh::cuda::wide_swizzle(static_cast<std::uint32_t>((warp << 10) + (tile << 8) + slot)));
  };
  for (const int warp : {0, 7, 15})
    for (int tile = 0; tile < 4; ++tile)
      for (int pair = 0; pair < 4; ++pair) {
        for (int half = 0; half < 2; ++half) {
          std::set<int> bank_pairs;
          for (int lane = 16 * half; lane < 16 * half + 16; ++lane) {
            const int at = swizzled(warp, tile, load_slot(lane, pair));
            ASSERT_EQ(swizzled(warp, tile, load_slot(lane, pair) + 1), at + 1) << "the swizzle keeps a load pair together";
            ASSERT_EQ(at % 2, 0) << "8-byte aligned";
            bank_pairs.insert(at % 32 / 2);
          }
          EXPECT_EQ(bank_pairs.size(), 16u) << "load pair " << pair << ", lanes " << 16 * half << "..";
        }
        for (int e = 0; e < 2; ++e) {
          std::set<int> banks;
          for (int lane = 0; lane < 32; ++lane) banks.insert(swizzled(warp, tile, store_slot(lane, pair, e)) % 32);
          EXPECT_EQ(banks.size(), 32u) << "store " << pair << ", " << e;
        }
      }
}

}  // namespace
