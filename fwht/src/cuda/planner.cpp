#include "cuda/planner.hpp"

#include <bit>
#include <string>

#include "pagh/error.hpp"

namespace fwht::cuda {
namespace {

constexpr const char* kWhere = "fwht::Plan (cuda)";

void check_range(const std::optional<int>& v, int lo, int hi, const char* name) {
  if (v && (*v < lo || *v > hi))
    throw pagh::Error(kWhere, std::string("Tuning::") + name + " = " + std::to_string(*v) + " is outside " + std::to_string(lo) +
                                  ".." + std::to_string(hi));
}

std::string log2_text(std::int64_t v) { return "2^" + std::to_string(std::countr_zero(static_cast<std::uint64_t>(v))); }

}  // namespace

void validate(const Tuning& t) {
  check_range(t.tile_block_log, 8, 15, "tile_block_log");
  check_range(t.tile_column_log, 2, 6, "tile_column_log");
  if (t.tile_block_log.has_value() != t.tile_column_log.has_value())
    throw pagh::Error(kWhere, "Tuning::tile_block_log and tile_column_log go together");
  check_range(t.single_block_log, 12, 14, "single_block_log");
  check_range(t.first_pass_stages, 8, 14, "first_pass_stages");
  check_range(t.max_cluster_log, 0, 3, "max_cluster_log");
  check_range(t.cluster_first, 0, 3, "cluster_first");
  check_range(t.cluster_column_log, 2, 8, "cluster_column_log");
  check_range(t.fuse_strip_mib, 1, 32, "fuse_strip_mib");
  check_range(t.fuse_lag, 1, 64, "fuse_lag");
  check_range(t.stage_mode, 0, 2, "stage_mode");
}

Route route_of(const Shape& shape, int compute_bytes, const Options& o) {
  if (is_wide(o.stabilization)) return Route::wide;
  if (!o.tuning.register_tile.value_or(true)) return Route::tile;
  const bool fits = compute_bytes == 4 && o.algorithm == Algorithm::folklore && packed(shape) && shape.n >= 16 &&
                    shape.n <= (std::int64_t{1} << 31);
  if (!fits) return Route::tile;
  if (o.stabilization == Stabilization::none) return Route::fast;
  return shape.n <= (std::int64_t{1} << 13) ? Route::fast : Route::tile;
}

bool paired_words(const Shape& shape, DType dtype, const Options& o) {
  if (!o.tuning.paired_words.value_or(true)) return false;
  const bool sixteen = dtype == DType::f16 || dtype == DType::bf16;
  return sixteen && o.compute == Compute::storage && o.stabilization == Stabilization::none && shape.n >= 32 &&
         route_of(shape, 4, o) == Route::fast;
}

int PlanLayout::memory_passes() const {
  if (route == Route::tile) return static_cast<int>(tile.passes.size());
  if (small) return 1;
  return static_cast<int>(fast.size()) - (fused.fused ? 1 : 0) + (gathered ? 2 : 0);
}

PlanLayout plan_layout(const Shape& shape, const PlanTypes& types, const Options& o, const DeviceCaps& caps) {
  const Tuning& t = o.tuning;
  const Stabilization st = o.stabilization;
  PlanLayout out;
  out.route = route_of(shape, types.compute_bytes, o);
  out.stage_mode = t.stage_mode.value_or(1);
  out.dependent_launch = caps.dependent_launch && t.dependent_launch.value_or(true);
  out.fuse_hints = t.fuse_hints.value_or(true);
  if (types.paired && out.route != Route::fast) throw pagh::Error(kWhere, "paired 16-bit words need the register-tile path");
  if (out.route == Route::wide) {
    const bool wide_capable = !types.integer && !types.paired && types.compute_bytes == 4;
    if (!wide_capable) throw pagh::Error(kWhere, std::string(to_string(st)) + " needs a floating 4-byte compute type");
    if (shape.n > (std::int64_t{1} << 31))
      throw pagh::Error(kWhere, std::string(to_string(st)) + ": n > 2^31 is not supported on cuda");
    out.small = shape.n < 16;
    out.gathered = !out.small && !packed(shape);
  }
  if (out.route == Route::tile) {
    out.tile = make_schedule(shape.n, shape.batch, types.compute_bytes, st != Stabilization::none,
                             o.algorithm == Algorithm::alman_rao, t);
    return out;
  }
  if (out.small) return out;
  if (st == Stabilization::none) {
    const ClusterContext cc{.max_cluster_log = types.bf16_storage ? 0 : caps.max_cluster_log,
                            .paired = types.paired,
                            .slow_memory = t.slow_memory.value_or(caps.slow_memory)};
    out.fast = make_fast_schedule(shape.n, shape.batch, types.storage_bytes, cc, t);
  } else if (is_wide(st)) {
    out.fast = make_wide_schedule(shape.n, shape.batch);
  } else {
    out.fast = make_stabilized_single(shape.n, shape.batch);
  }
  if (st == Stabilization::none || is_wide(st)) out.fused = make_fused(out.fast, shape.n, shape.batch, types.work_bytes, st, t);
  return out;
}

std::string describe(const PlanLayout& layout, const Shape& shape) {
  std::string text;
  const auto line = [&text](const std::string& s) { text += s + "\n"; };
  const char* route = layout.route == Route::tile ? "general tile pass" : layout.route == Route::wide ? "register tile, wide" : "register tile";
  line(std::string("cuda ") + route + ", n = " + log2_text(shape.n) + " x " + std::to_string(shape.batch) + ": " +
       std::to_string(layout.memory_passes()) + " pass(es) over memory");
  if (layout.route == Route::tile) {
    for (const PassGeometry& p : layout.tile.passes)
      line("  stages " + std::to_string(p.s) + "+" + std::to_string(p.g) + ", tiles of 2^" + std::to_string(p.g) + " x 2^" +
           std::to_string(p.column_log) + ", 2^" + std::to_string(p.tiles_per_block_log) + " per block, " +
           std::to_string(p.blocks) + " blocks");
    return text;
  }
  if (layout.small) {
    line("  one thread per transform");
    return text;
  }
  if (layout.gathered) line("  gather into a packed buffer");
  for (std::size_t k = 0; k < layout.fast.size(); ++k) {
    const FastPass& p = layout.fast[k];
    const bool fused = layout.fused.fused && k + 2 >= layout.fast.size();
    std::string s = "  stages " + std::to_string(p.s) + "+" + std::to_string(p.g) + ", blocks of 2^" + std::to_string(p.block_log) +
                    (p.w > 0 ? " (2^" + std::to_string(p.w) + " columns)" : std::string()) + ", " + std::to_string(p.blocks) + " blocks";
    if (p.cluster_log > 0) s += ", clusters of " + std::to_string(1 << p.cluster_log);
    if (fused) s += ", fused";
    line(s);
  }
  if (layout.fused.fused)
    line("  fused: " + std::to_string(layout.fused.strips) + " strips of " + std::to_string(layout.fused.strip_columns) +
         " columns, lag " + std::to_string(layout.fused.lag) + (layout.fuse_hints ? ", L2 hints" : ""));
  if (layout.gathered) line("  scatter back to the layout");
  return text;
}

}  // namespace fwht::cuda
