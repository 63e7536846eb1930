#include "cuda/schedule.hpp"

#include <algorithm>
#include <bit>
#include <string>

#include "fwht/options.hpp"
#include "pagh/error.hpp"

namespace fwht::cuda {

const TileConfig& tile_config(int compute_bytes, int planes) {
  for (const TileConfig& c : kTileTable)
    if (c.compute_bytes == compute_bytes && c.planes == planes) return c;
  throw pagh::Error("fwht::Plan (cuda)", "no tile configuration for a " + std::to_string(compute_bytes) +
                                             "-byte compute type with " + std::to_string(planes) + " plane(s)");
}

namespace {

// Tuning::tile_block_log / tile_column_log replace the 4-byte, one-plane entry.
TileConfig tuned(const TileConfig& c, const Tuning& tuning) {
  TileConfig t = c;
  if (c.compute_bytes == 4 && c.planes == 1 && tuning.tile_block_log && tuning.tile_column_log)
    t.block_log = *tuning.tile_block_log, t.column_log = *tuning.tile_column_log;
  return t;
}

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
// blocks per SM, which measured faster whenever they need no extra pass. So: fewest passes first,
// then the smallest tile.
Schedule make_schedule(std::int64_t n, std::int64_t batch, int compute_bytes, bool stabilized, bool alman_rao,
                       const Tuning& tuning) {
  const TileConfig largest = tuned(tile_config(compute_bytes, stabilized ? 2 : 1), tuning);
  Schedule best = schedule_with(largest, n, batch, alman_rao);
  for (int shrink = 1; shrink <= 2; ++shrink) {
    TileConfig smaller = largest;
    smaller.block_log -= shrink;
    Schedule s = schedule_with(smaller, n, batch, alman_rao);
    if (s.passes.size() <= best.passes.size()) best = std::move(s);
  }
  return best;
}

namespace {

const TwoPassShape* two_pass_shape(int L, int storage_bytes, const ClusterContext& cc) {
  for (const TwoPassShape& t : kTwoPassShapes)
    if ((!t.slow_memory_only || cc.slow_memory) && t.storage_bytes == storage_bytes && t.paired == cc.paired &&
        t.log2n == L)
      return &t;
  return nullptr;
}

// The cluster schedules of make_fast_schedule (schedule.hpp); empty where the plain ones apply.
std::vector<FastPass> cluster_schedule(int L, std::int64_t total, int storage_bytes, const ClusterContext& cc,
                                       const Tuning& tuning) {
  const int cmax = std::min(tuning.max_cluster_log.value_or(cc.max_cluster_log), cc.max_cluster_log);
  const int first_cluster_max = cc.paired ? 2 : 3;
  constexpr int kBlock = 14;
  // One cluster pass beats two plain passes from 2^21 elements in all and loses below (too few
  // blocks). Two passes of 14 + c1 stages in clusters of 2^c1, then 10 stages on rows of 2^4
  // columns (64 bytes of f32), win at 2^25..2^27 (c1 = 1, 2, 3); 2^24 keeps 14 + 10, and from 2^28
  // (c1 would be 4, or clusters on the second pass too) the three fused groups stay faster
  // (bench/NOTES.md, "cluster passes").
  constexpr int kSingleMinLog = 21;  // one cluster pass for >= 2^21 elements in all
  if (cmax == 0 || L <= kBlock) return {};
  FastPass first;
  first.block_log = kBlock;
  first.blocks = total >> kBlock;
  if (L <= kBlock + cmax) {
    if (total < (std::int64_t{1} << kSingleMinLog)) return {};
    first.g = L;
    first.cluster_log = L - kBlock;
    return {first};
  }
  const int forced = tuning.cluster_first.value_or(-1);
  const TwoPassShape* shape = forced < 0 ? two_pass_shape(L, storage_bytes, cc) : nullptr;
  if (L <= kBlock + 10 && forced < 0 && shape == nullptr) return {};  // two passes without clusters
  const int w = tuning.cluster_column_log.value_or(shape ? shape->w : 4);
  const int local = kBlock - w;  // stages of a strided block
  int c1 = L - kBlock - local, c2 = 0;  // the rule: the clusters on the first pass
  if (shape || forced >= 0) {
    c1 = shape ? shape->c1 : forced;
    c2 = L - kBlock - c1 - local;
  } else if (c1 > first_cluster_max) {
    return {};  // the rule: clusters of up to 2^first_cluster_max
  }
  if (c1 < 0 || c1 > cmax || c2 < 0 || c2 > cmax) return {};  // these shapes do not fit: the plain schedule
  first.g = kBlock + c1;
  first.cluster_log = c1;
  FastPass second;
  second.s = first.g;
  second.g = L - first.g;
  second.w = w;
  second.block_log = kBlock;
  second.cluster_log = c2;
  second.blocks = total >> kBlock;
  return {first, second};
}

}  // namespace

std::vector<FastPass> make_fast_schedule(std::int64_t n, std::int64_t batch, int storage_bytes, const ClusterContext& cc,
                                         const Tuning& tuning) {
  const int L = std::countr_zero(static_cast<std::uint64_t>(n));
  if (L < 4) throw pagh::Error("fwht::Plan (cuda)", "the fast pass needs n >= 16");
  const std::int64_t total = n * batch;
  if (auto clustered = cluster_schedule(L, total, storage_bytes, cc, tuning); !clustered.empty()) return clustered;
  std::vector<FastPass> out;
  if (L <= 14) {
    FastPass p;
    p.g = L;
    // 2^13-element blocks measured fastest for n = 2^9..2^12 (fewer barriers per element than 2^12);
    // 2^12 for n <= 2^8 with 4-byte storage; 2^14 for n = 2^11, 2^12 with 2-byte storage.
    const int single = storage_bytes == 2 ? (L == 11 || L == 12 ? 14 : 13) : (L > 8 ? 13 : 12);
    p.block_log = std::max(L, tuning.single_block_log.value_or(single));
    p.blocks = (total + (std::int64_t{1} << p.block_log) - 1) >> p.block_log;
    out.push_back(p);
    return out;
  }
  // First passes of 2^14-element blocks leave SMs idle at 2^20..2^22 (64..256 blocks for 132 SMs):
  // there a first pass of L - 9 stages (>= 12: at least 256 blocks of 2^12..2^13) measured faster.
  const int first_default = L >= 20 && L <= 22 ? std::max(12, L - 9) : 14;
  const int first_max = tuning.first_pass_stages.value_or(first_default);
  // Later passes: one of up to 10 stages, else two balanced ones; at least 4 stages each.
  std::vector<int> later;
  const int rest = L - first_max;
  if (rest <= 10) {
    later.push_back(std::max(4, rest));
  } else {
    int left = rest;
    const int count = (rest + 9) / 10;
    for (int k = count; k > 0; --k) {
      const int g = (left + k - 1) / k;
      later.push_back(g);
      left -= g;
    }
  }
  int g1 = L;
  for (int g : later) g1 -= g;
  FastPass first;
  first.g = g1;
  first.block_log = std::max(12, g1);
  first.blocks = (total + (std::int64_t{1} << first.block_log) - 1) >> first.block_log;
  out.push_back(first);
  int s = g1;
  for (int g : later) {
    FastPass p;
    p.s = s;
    p.g = g;
    p.block_log = std::min(14, std::max(12, g + 5));  // rows of >= 32 columns where the tile allows
    p.w = p.block_log - g;
    if (p.w > 8) p.w = 8, p.block_log = g + 8;
    if (g < 4 || g > 10 || p.w < 4 || p.w > s || p.block_log < 12 || p.block_log > 14)
      throw pagh::Error("fwht::Plan (cuda)", "fast schedule: no tile for stages " + std::to_string(s) + "+" +
                                                 std::to_string(g) + " of 2^" + std::to_string(L));
    p.blocks = batch << (L - g - p.w);
    out.push_back(p);
    s += g;
  }
  return out;
}

std::vector<FastPass> make_stabilized_single(std::int64_t n, std::int64_t batch) {
  const int L = std::countr_zero(static_cast<std::uint64_t>(n));
  if (L < 4 || L > 13) throw pagh::Error("fwht::Plan (cuda)", "stabilized fast pass: needs 2^4 <= n <= 2^13");
  FastPass p;
  p.g = L;
  p.block_log = std::max(12, L);
  p.blocks = (n * batch + (std::int64_t{1} << p.block_log) - 1) >> p.block_log;
  return {p};
}

std::vector<FastPass> make_wide_schedule(std::int64_t n, std::int64_t batch) {
  const int L = std::countr_zero(static_cast<std::uint64_t>(n));
  if (L < 4) throw pagh::Error("fwht::Plan (cuda)", "the fast pass needs n >= 16");
  std::vector<FastPass> out;
  int s = 0;
  for (int g : stage_groups(L)) {
    FastPass p;
    p.s = s;
    p.g = g;
    if (s == 0) {
      p.block_log = std::max(12, g);
      p.blocks = (n * batch + (std::int64_t{1} << p.block_log) - 1) >> p.block_log;
    } else {
      p.block_log = std::min(13, std::max(12, g + 5));  // rows of >= 32 columns where the tile allows
      p.w = p.block_log - g;
      if (g < 4 || g > 9 || p.w < 4 || p.w > 8 || p.w > s)
        throw pagh::Error("fwht::Plan (cuda)", "wide schedule: no tile for stages " + std::to_string(s) + "+" +
                                                   std::to_string(g) + " of 2^" + std::to_string(L));
      p.blocks = batch << (L - g - p.w);
    }
    out.push_back(p);
    s += g;
  }
  return out;
}

FusedGeometry make_fused(std::vector<FastPass>& passes, std::int64_t n, std::int64_t batch, int work_bytes,
                         Stabilization st, const Tuning& tuning) {
  FusedGeometry f;
  if (passes.size() != 3 || st == Stabilization::wide_carry || !tuning.fuse.value_or(true)) return f;
  FastPass& a = passes[1];
  FastPass& b = passes[2];
  const int block_log = std::max(a.block_log, b.block_log);
  const int wa = block_log - a.g, wb = block_log - b.g;
  if (block_log > 13 || wa < 4 || wa > 8 || wb < 4 || wb > 8 || wa > a.s || wb > b.s) return f;
  const int L = std::countr_zero(static_cast<std::uint64_t>(n));
  const int mib = tuning.fuse_strip_mib.value_or(4);
  // Strip: strip_columns x 2^(L - a.s) rows of work_bytes each, a power of two near mib MiB.
  const std::int64_t row_bytes = (std::int64_t{1} << (L - a.s)) * work_bytes;
  std::int64_t columns = 1;
  while (columns * 2 * row_bytes <= (std::int64_t{mib} << 20)) columns *= 2;
  columns = std::max(columns, std::int64_t{1} << std::max(wa, wb));
  columns = std::min(columns, std::int64_t{1} << a.s);
  if (columns < (std::int64_t{1} << std::max(wa, wb))) return f;
  a.w = wa, b.w = wb;
  a.block_log = b.block_log = block_log;
  f.fused = true;
  // Plain transforms from 2^29: a lag of one strip measured faster; at 2^27/2^28 it is slower.
  f.one_strip_lag = st == Stabilization::none && L >= 29;
  f.block_log = block_log;
  f.strip_columns = columns;
  f.strips_per_transform = (std::int64_t{1} << a.s) / columns;
  f.strips = batch * f.strips_per_transform;
  f.tiles_a = (std::int64_t{1} << b.g) * (columns >> wa);
  f.tiles_b = (std::int64_t{1} << a.g) * (columns >> wb);
  return f;
}

std::int64_t fused_lag(const FusedGeometry& f, std::int64_t resident_blocks, const Tuning& tuning) {
  if (tuning.fuse_lag) return *tuning.fuse_lag;
  if (f.one_strip_lag) return 1;
  const std::int64_t lag = (3 * resident_blocks + 2 * f.tiles_a - 1) / (2 * f.tiles_a);
  return std::max<std::int64_t>(1, std::min<std::int64_t>(lag, 64));
}

}  // namespace fwht::cuda
