#include "cuda/schedule.hpp"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "pagh/error.hpp"

namespace fwht::cuda {

const TileConfig& tile_config(int compute_bytes, int planes) {
  for (const TileConfig& c : kTileTable)
    if (c.compute_bytes == compute_bytes && c.planes == planes) return c;
  throw pagh::Error("fwht::Plan (cuda)", "no tile configuration for a " + std::to_string(compute_bytes) +
                                             "-byte compute type with " + std::to_string(planes) + " plane(s)");
}

// Tuning knob for benchmarks: PAGH_FWHT_CUDA_TILE="B,W" replaces block_log and column_log of the
// 4-byte, one-plane entry. Results do not depend on it (stages still run in increasing order).
TileConfig tuned(const TileConfig& c) {
  TileConfig t = c;
  if (c.compute_bytes != 4 || c.planes != 1) return t;
  if (const char* env = std::getenv("PAGH_FWHT_CUDA_TILE")) {
    int b = 0, w = 0;
    if (std::sscanf(env, "%d,%d", &b, &w) == 2 && b >= 8 && b <= 15 && w >= 2 && w <= 6) t.block_log = b, t.column_log = w;
  }
  return t;
}

namespace {

Schedule schedule_with(const TileConfig& cfg, std::int64_t n, std::int64_t batch, bool alman_rao) {
  Schedule out;
  const int L = std::countr_zero(static_cast<std::uint64_t>(n));
  out.log2n = L;
  const int r = L % 3;
  int s = 0;
  do {
    PassGeometry p;
    p.s = s;
    p.column_log = s == 0 ? 0 : cfg.column_log;
    const int room = cfg.block_log - p.column_log;  // stages that fit on chip in this pass
    int g = std::min(room, L - s);
    if (alman_rao && s + g < L) {
      // Stop on an H8 boundary: stage r + 3k. The first pass always reaches r (room >= 10).
      g = r + 3 * ((s + g - r) / 3) - s;
    }
    if (g <= 0 && L > 0) throw pagh::Error("fwht::Plan (cuda)", "tile too small for one stage group");
    p.g = g;
    p.column_blocks_log = s - p.column_log;
    p.tiles_per_transform_log = L - g - p.column_log;
    p.total_tiles = batch << p.tiles_per_transform_log;
    // Fill the block with tiles, but no more tiles than exist.
    int tpb = cfg.block_log - g - p.column_log;
    while (tpb > 0 && (std::int64_t{1} << (tpb - 1)) >= p.total_tiles) --tpb;
    p.tiles_per_block_log = tpb;
    p.blocks = (p.total_tiles + (std::int64_t{1} << tpb) - 1) >> tpb;
    out.passes.push_back(p);
    s += g;
  } while (s < L);
  return out;
}

}  // namespace

// The table's tile is the largest; smaller tiles (down to 1/4) give more blocks and more resident
// blocks per SM, which measured faster on an H200 whenever they need no extra pass (bench/NOTES.md:
// 2^20 f32 0.031 -> 0.017 ms). So: fewest passes first, then the smallest tile.
Schedule make_schedule(std::int64_t n, std::int64_t batch, int compute_bytes, bool stabilized, bool alman_rao) {
  const TileConfig largest = tuned(tile_config(compute_bytes, stabilized ? 2 : 1));
  Schedule best = schedule_with(largest, n, batch, alman_rao);
  for (int shrink = 1; shrink <= 2; ++shrink) {
    TileConfig smaller = largest;
    smaller.block_log -= shrink;
    Schedule s = schedule_with(smaller, n, batch, alman_rao);
    if (s.passes.size() <= best.passes.size()) best = std::move(s);
  }
  return best;
}

}  // namespace fwht::cuda
