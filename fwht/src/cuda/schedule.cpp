#include "cuda/schedule.hpp"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstdlib>
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

namespace {

int env_int(const char* name, int fallback, int lo, int hi) {
  const char* env = std::getenv(name);
  if (env == nullptr) return fallback;
  int v = 0;
  if (std::sscanf(env, "%d", &v) != 1 || v < lo || v > hi) return fallback;
  return v;
}

}  // namespace

// Tuning knobs for benchmarks (results do not depend on them: stages still run in increasing
// order): PAGH_FWHT_CUDA_FAST_FIRST = most stages of the first pass of a multi-pass plan (8..14),
// PAGH_FWHT_CUDA_FAST_SINGLE = block_log of single-pass plans of n <= 2^12 (12..14).
namespace {

// Default two-pass cluster shapes (c1, w) that differ from the rule of cluster_schedule (w = 4,
// c1 = L - 24 for 2^25..2^27), each measured faster in two rounds on the devices it applies to
// (bench/RESULTS.md, twelfth session; ms before -> after). slow_memory_only: H100-class devices
// (ClusterContext::slow_memory); the H200 keeps the rule there (these shapes measured 4-13%
// slower on it for f32 at 2^27..2^29, and the paired ones 2-7% slower).
struct TwoPassShape {
  bool slow_memory_only;
  int storage_bytes;
  bool paired;
  int log2n;  // of the transform the schedule is made for (words, for the paired plans)
  int c1, w;
};
constexpr TwoPassShape kTwoPassShapes[] = {
    {false, 2, false, 28, 3, 5},  // f16/bf16 computed in f32: H200 1.53 -> 1.38, H100 1.86 -> 1.45
    {true, 4, false, 26, 3, 5},   // f32 (and i32) on the H100: 0.439 -> 0.426
    {true, 4, false, 27, 2, 5},   // 0.887 -> 0.863
    {true, 4, false, 28, 3, 5},   // 2.010 -> 1.757
    {true, 4, false, 29, 3, 5},   // 3.689 -> 3.634
    {true, 2, false, 27, 2, 5},   // f16/bf16 computed in f32 on the H100: 0.708 -> 0.692
    {true, 4, true, 27, 2, 5},    // paired words of 2^28 f16/bf16 elements on the H100: 0.993 -> 0.906
    {true, 4, true, 28, 2, 5},    // 2^29 elements: 2.006 -> 1.870
};

const TwoPassShape* two_pass_shape(int L, int storage_bytes, const ClusterContext& cc) {
  for (const TwoPassShape& t : kTwoPassShapes)
    if ((!t.slow_memory_only || cc.slow_memory) && t.storage_bytes == storage_bytes && t.paired == cc.paired &&
        t.log2n == L)
      return &t;
  return nullptr;
}

// The cluster schedules of make_fast_schedule (schedule.hpp); empty where the plain ones apply.
std::vector<FastPass> cluster_schedule(int L, std::int64_t total, int storage_bytes, const ClusterContext& cc) {
  const int cmax = env_int("PAGH_FWHT_CUDA_CLUSTER", cc.max_cluster_log, 0, cc.max_cluster_log);
  const int first_cluster_max = cc.paired ? 2 : 3;
  constexpr int kBlock = 14;
  // Measured on an H200 (bench/NOTES.md "Cluster passes"): one cluster pass beats two plain passes
  // from 2^21 elements in all (2^15 x 64: 0.0153 vs 0.0170 ms) and loses below (2^15 x 16: 0.0125
  // vs 0.0108: too few blocks). Two passes (tenth session, knob sweep over w and c1 at 2^24..2^30,
  // bench/NOTES.md "Cluster first passes with 64-byte rows"): 14 + c1 stages in clusters of 2^c1,
  // then 10 stages on rows of 2^4 columns (64 bytes of f32), win at 2^25..2^27 (c1 = 1, 2, 3:
  // 0.170 / 0.352 / 0.741 ms against 0.185 / 0.384 / 0.785 for the schedules before: 14 + 11 on
  // 32-byte rows, 15c2 + 11, three fused groups); 2^24 keeps 14 + 10, and from 2^28 (c1 would be
  // 4, or clusters on the second pass too) the three fused groups stay faster (1.56 against
  // 1.61-1.84 ms at 2^28).
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
  const int forced = env_int("PAGH_FWHT_CUDA_CLUSTER_FIRST", -1, 0, 3);
  const TwoPassShape* shape = forced < 0 ? two_pass_shape(L, storage_bytes, cc) : nullptr;
  if (L <= kBlock + 10 && forced < 0 && shape == nullptr) return {};  // two passes without clusters
  const int w = env_int("PAGH_FWHT_CUDA_CLUSTER_W", shape ? shape->w : 4, 2, 8);
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

std::vector<FastPass> make_fast_schedule(std::int64_t n, std::int64_t batch, int storage_bytes, ClusterContext cc) {
  const int L = std::countr_zero(static_cast<std::uint64_t>(n));
  if (L < 4) throw pagh::Error("fwht::Plan (cuda)", "the fast pass needs n >= 16");
  const std::int64_t total = n * batch;
  if (auto clustered = cluster_schedule(L, total, storage_bytes, cc); !clustered.empty()) return clustered;
  std::vector<FastPass> out;
  if (L <= 14) {
    FastPass p;
    p.g = L;
    // 2^13-element blocks measured fastest for n = 2^9..2^12 (fewer barriers per element than 2^12);
    // 2^12 for n <= 2^8 with 4-byte storage; 2^14 for n = 2^11, 2^12 with 2-byte storage (H200,
    // f16/bf16 at 2^12: 0.73 against 0.83-0.86 ms per GiB; bench/NOTES.md).
    const int single = storage_bytes == 2 ? (L == 11 || L == 12 ? 14 : 13) : (L > 8 ? 13 : 12);
    p.block_log = std::max(L, env_int("PAGH_FWHT_CUDA_FAST_SINGLE", single, 12, 14));
    p.blocks = (total + (std::int64_t{1} << p.block_log) - 1) >> p.block_log;
    out.push_back(p);
    return out;
  }
  // First passes of 2^14-element blocks leave SMs idle at 2^20..2^22 (64..256 blocks for 132 SMs):
  // there a first pass of L - 9 stages (>= 12: at least 256 blocks of 2^12..2^13) measured 8-13%
  // faster on an H200 (bench/RESULTS.md).
  const int first_default = L >= 20 && L <= 22 ? std::max(12, L - 9) : 14;
  const int first_max = env_int("PAGH_FWHT_CUDA_FAST_FIRST", first_default, 8, 14);
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

// Tuning knobs: PAGH_FWHT_CUDA_FUSE=0 turns fusion off, PAGH_FWHT_CUDA_FUSE_MB = strip size in MiB
// (1..32, default 4; the L2 is 50 MB on an H100, 60 MB on an H200).
FusedGeometry make_fused(std::vector<FastPass>& passes, std::int64_t n, std::int64_t batch, int work_bytes,
                         Stabilization st) {
  FusedGeometry f;
  if (passes.size() != 3 || st == Stabilization::wide_carry) return f;
  if (const char* env = std::getenv("PAGH_FWHT_CUDA_FUSE"); env && env[0] == '0') return f;
  FastPass& a = passes[1];
  FastPass& b = passes[2];
  const int block_log = std::max(a.block_log, b.block_log);
  const int wa = block_log - a.g, wb = block_log - b.g;
  if (block_log > 13 || wa < 4 || wa > 8 || wb < 4 || wb > 8 || wa > a.s || wb > b.s) return f;
  const int L = std::countr_zero(static_cast<std::uint64_t>(n));
  const int mib = env_int("PAGH_FWHT_CUDA_FUSE_MB", 4, 1, 32);
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
  // Plain transforms from 2^29: a lag of one strip measured 7-9% faster (H200, two runs: 2^29 2.96
  // against 3.18 ms, 2^30 5.89 against 6.43); at 2^27/2^28 it is slower (bench/NOTES.md).
  f.one_strip_lag = st == Stabilization::none && L >= 29;
  f.block_log = block_log;
  f.strip_columns = columns;
  f.strips_per_transform = (std::int64_t{1} << a.s) / columns;
  f.strips = batch * f.strips_per_transform;
  f.tiles_a = (std::int64_t{1} << b.g) * (columns >> wa);
  f.tiles_b = (std::int64_t{1} << a.g) * (columns >> wb);
  return f;
}

std::int64_t fused_lag(const FusedGeometry& f, std::int64_t resident_blocks) {
  if (f.one_strip_lag) return env_int("PAGH_FWHT_CUDA_FUSE_LAG", 1, 1, 64);
  const std::int64_t lag = (3 * resident_blocks + 2 * f.tiles_a - 1) / (2 * f.tiles_a);
  const int fallback = static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(lag, 64)));
  return env_int("PAGH_FWHT_CUDA_FUSE_LAG", fallback, 1, 64);
}

}  // namespace fwht::cuda
