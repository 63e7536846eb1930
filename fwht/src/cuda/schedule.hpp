// Pass schedule of the CUDA backend: which stages each pass over device memory applies, and the
// tile geometry of each pass. Host-only, no CUDA headers.
//
// A pass applies stages [s, s+g) to tiles of 2^g rows x W columns: row r, column c of a tile is
// element base + r*2^s + c of one transform (W = 2^w_log <= 2^s, so columns are contiguous in
// memory). The first pass has s = 0 and W = 1: a tile is 2^g consecutive elements. One thread block
// holds 2^tpb_log tiles (several small transforms share a block) in shared memory, so the block
// reads and writes device memory exactly once per element and applies all g stages on chip.
//
// Tile sizes come from one table (kTileTable) keyed by the bytes of the compute type and the number
// of planes (2 when error terms travel with the values); anything outside it is an explicit error.
#pragma once

#include <cstdint>
#include <vector>

namespace fwht::cuda {

struct TileConfig {
  int compute_bytes;  // sizeof of the compute type held in shared memory
  int planes;         // 1 = values, 2 = values + error terms
  int block_log;      // log2 elements per block (64 KiB of shared memory per block)
  int column_log;     // log2 W for strided passes: 64-byte rows of the compute type
};

inline constexpr TileConfig kTileTable[] = {
    {4, 1, 14, 4},  // float, uint32, 16-bit values held in float: 16 Ki elements
    {4, 2, 13, 4},  // float + errors
    {8, 1, 13, 3},  // double, uint64
    {8, 2, 12, 3},  // double + errors
};

// Throws pagh::Error when the table has no entry.
const TileConfig& tile_config(int compute_bytes, int planes);

struct PassGeometry {
  int s = 0;            // first stage of the pass (rows are 2^s elements apart)
  int g = 0;            // stages in the pass (2^g rows)
  int column_log = 0;   // log2 W
  int tiles_per_transform_log = 0;
  int column_blocks_log = 0;  // log2(2^s / W): tiles side by side in one row band
  int tiles_per_block_log = 0;
  std::int64_t total_tiles = 0;  // batch * tiles per transform
  std::int64_t blocks = 0;
  int block_elements_log() const { return g + column_log + tiles_per_block_log; }
};

struct Schedule {
  int log2n = 0;
  std::vector<PassGeometry> passes;
};

// Alman-Rao passes end on stage r + 3k (H8 kernels are never split between passes).
Schedule make_schedule(std::int64_t n, std::int64_t batch, int compute_bytes, bool stabilized, bool alman_rao);

}  // namespace fwht::cuda
