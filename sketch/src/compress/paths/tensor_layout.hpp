// Where the wide kernel's tensor-core rounds (tensor_rounds.cuh) keep their values: the 16 x 16
// tiles of a warp's 1024 slots and each lane's fragment positions in them. Plain constexpr
// functions, so that the host tests can check the layout's invariants (a bijection; every slot
// loaded and stored once per tile; no shared-memory bank conflicts under wide_swizzle).
#pragma once

namespace pagh::cuda::tensor {

// Slot (bits 0-9 of a wide slot u) of element (row, col) of tile `tile`: row = slot bits 0-3, col
// = bits 4, 6, 7, 5, tile = bits 8-9. Row bit 0 in slot bit 0 makes the loads' row pairs 8-byte
// vectors; the other bits are placed so that wide_swizzle spreads both passes over all banks.
constexpr int slot_of(int tile, int row, int col) {
  return (row & 15) | (col & 1) << 4 | ((col >> 3) & 1) << 5 | ((col >> 1) & 1) << 6 | ((col >> 2) & 1) << 7 | tile << 8;
}

// Lane (g, t) = (lane / 4, lane % 4) loads, as the B operand of H_16 . X, the pair `pair` of tile 0:
// rows 2t + 8 (pair & 1) + 0, 1 of column 8 (pair >> 1) + g; the first of the two slots.
constexpr int load_slot(int lane, int pair) { return slot_of(0, 2 * (lane & 3) + 8 * (pair & 1), 8 * (pair >> 1) + (lane >> 2)); }

// After both axes it holds the output fragments of (H_16 X) . H_16 and stores element e of pair
// `pair` to row g + 8 (pair & 1), column 2t + 8 (pair >> 1) + e of tile 0.
constexpr int store_slot(int lane, int pair, int e) {
  return slot_of(0, (lane >> 2) + 8 * (pair & 1), 2 * (lane & 3) + 8 * (pair >> 1) + e);
}

}  // namespace pagh::cuda::tensor
