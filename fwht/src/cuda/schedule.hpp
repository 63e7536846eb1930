// Pass schedule of the CUDA backend: which stages each pass over device memory applies, and the
// tile geometry of each pass. Host-only, no CUDA headers.
//
// A pass applies stages [s, s+g) to tiles of 2^g rows x W columns: row r, column c of a tile is
// element base + r*2^s + c of one transform (W = 2^w_log <= 2^s, so columns are contiguous in
// memory). The first pass has s = 0 and W = 1: a tile is 2^g consecutive elements. One thread block
// holds 2^tpb_log tiles (several small transforms share a block) in shared memory, so the block
// reads and writes device memory exactly once per element and applies all g stages on chip.
//
// Tile sizes come from one table (kTileTable, shape_tables.hpp). Every function here is pure: the
// device enters through ClusterContext, the knobs through fwht::Tuning (fwht/tuning.hpp), whose
// ranges the planner has checked (planner.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "cuda/shape_tables.hpp"
#include "fwht/options.hpp"

namespace fwht::cuda {

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
// Tuning::tile_block_log / tile_column_log replace the table's 4-byte, one-plane entry.
Schedule make_schedule(std::int64_t n, std::int64_t batch, int compute_bytes, bool stabilized, bool alman_rao,
                       const Tuning& tuning);

// Passes of the register-tile kernel (fast_pass.cuh): plain folklore, 4-byte compute types, packed
// layouts, n >= 16. The first pass applies stages [0, g) to blocks of 2^block_log consecutive
// elements (several transforms per block when n is small); each later pass applies stages
// [s, s+g) to tiles of 2^g rows x 2^w columns (w = block_log - g, 4 <= w <= 8, 2^w <= 2^s).
// block_log is 12..14; g <= 14 on the first pass, 4 <= g <= 10 on later ones: one pass up to
// 2^14, two up to 2^24, three up to 2^34. Single-pass plans of n <= 2^12 use 2^13-element blocks,
// except 2^12 for n <= 2^8 with 4-byte storage and 2^14 for n = 2^11, 2^12 with 2-byte storage.
// Two-pass plans take 14 stages in the first pass, except max(12, L - 9) at
// 2^20..2^22, so that the first pass has at least 256 blocks.
//
// With max_cluster_log > 0 (plain modes on a device with thread-block clusters) passes may also be
// cluster passes (cluster_pass.cuh: cluster_log > 0, blocks of 2^14 elements, g counting the
// cluster_log stages applied across the cluster). Two passes of these shapes reach 2^31; the
// defaults take them only where they measured faster (bench/NOTES.md, "cluster passes"):
// - 2^15..2^(14 + max_cluster_log) with >= 2^21 elements in all: one cluster pass, 2^(L - 14)
//   blocks per tile (smaller batches: the two plain passes);
// - 2^18..2^24: the two plain passes (14 stages + a strided pass of up to 10);
// - 2^25..2^27: 14 + c1 stages in clusters of 2^c1 (c1 = L - 24: 2, 4, 8 blocks), then a strided
//   pass of 2^10 rows x 2^w columns (w = 4: 64-byte rows of f32) per block;
// - from 2^28: the plain three stage groups (the last two fused): clusters of 8 on the first pass
//   with clusters on the strided pass too, or 32- and 128-byte rows, measured slower;
// - except the shapes of kTwoPassShapes (shape_tables.hpp): 128-byte rows of f32 (w = 5) with
//   clusters on both passes where device memory is slow next to the SMs
//   (ClusterContext::slow_memory), and for 16-bit storage computed in f32 at 2^28 on both classes.
// Knobs (Tuning): max_cluster_log caps the clusters (0: none); cluster_first = c1 (the second pass
// then takes clusters of 2^(L - 14 - c1 - (14 - w)), at most 2^max_cluster_log; also below 2^25);
// cluster_column_log = w; single_block_log and first_pass_stages as named. Shapes that do not fit
// two passes fall back to the plain schedule.
struct FastPass {
  int s = 0, g = 0, w = 0, block_log = 12;
  int cluster_log = 0;
  std::int64_t blocks = 0;
};
// What the default cluster shapes depend on besides n, batch and the storage size.
struct ClusterContext {
  int max_cluster_log = 0;  // DeviceCaps::max_cluster_log (0: no cluster passes), capped by Tuning
  // Paired 16-bit words: their 2^14-element blocks run 2 per SM instead of 3, so the default first
  // pass before a strided one takes clusters of at most 4 (clusters of 8 measured slower than the
  // three fused groups); otherwise at most 8.
  bool paired = false;
  // DeviceCaps::slow_memory (or Tuning::slow_memory): selects entries of kTwoPassShapes.
  bool slow_memory = false;
};
std::vector<FastPass> make_fast_schedule(std::int64_t n, std::int64_t batch, int storage_bytes, const ClusterContext& cc,
                                         const Tuning& tuning);

// Register-tile passes of the modes with two planes of state (schedule of fast_pass.cuh with
// Stabilization St != none):
// - kahan / neumaier, single-pass plans only (16 <= n <= 2^13): one pass, blocks of 2^12 elements
//   (2^13 for n = 2^13): values and error terms both in registers (2 x 16 per thread) and in shared
//   memory, error terms zero at the start and dropped at the end, so nothing extra goes to memory.
// - wide_onchip (n >= 16): one pass per stage group of fwht::stage_groups(n) (a pure function of n:
//   the rounding points of the mode), blocks of at most 2^13 elements: first pass 2^max(12, g)
//   consecutive elements, strided passes 2^g rows x 2^w columns, w = block_log - g in 4..8.
std::vector<FastPass> make_stabilized_single(std::int64_t n, std::int64_t batch);
std::vector<FastPass> make_wide_schedule(std::int64_t n, std::int64_t batch);

// Fusing the last two passes of a three-pass fast schedule into one launch (fused_pass in
// fast_pass.cuh): strips of strip_columns columns (all rows of the strip: about 8 MiB) are
// processed by the first of the two passes and then by the second while they are still in L2, so
// the two passes cost about one pass of device-memory traffic when L2 keeps them. Both use one
// block_log; the schedule's w of the two passes is adjusted to it. fused == false when the schedule
// has no three passes, for wide_carry (its fused kernel needs 118 registers, 2 blocks per SM, and
// measured slower than three launches) or with Tuning::fuse false. Strips of about
// Tuning::fuse_strip_mib MiB (default 4; the L2 holds 50 MB on an H100, 60 MB on an H200).
struct FusedGeometry {
  bool fused = false;
  bool one_strip_lag = false;  // the default lag is 1 (fused_lag)
  int block_log = 12;
  std::int64_t strip_columns = 0, strips_per_transform = 0, strips = 0, tiles_a = 0, tiles_b = 0;
  std::int64_t lag = 1;  // set by the plan from the resident blocks (fused_lag)
};
// Strips between a strip's A tiles and its B tiles: enough A tiles (1.5x the resident blocks) for
// the B tiles rarely to wait; one for plain transforms from 2^29 (one_strip_lag: measured faster).
// Tuning::fuse_lag overrides.
std::int64_t fused_lag(const FusedGeometry& f, std::int64_t resident_blocks, const Tuning& tuning);
FusedGeometry make_fused(std::vector<FastPass>& passes, std::int64_t n, std::int64_t batch, int work_bytes,
                         Stabilization st, const Tuning& tuning);

}  // namespace fwht::cuda
