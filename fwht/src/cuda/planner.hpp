// The CUDA planner: pure functions of (Shape, types, Options with their Tuning, DeviceCaps) that
// decide which kernels run a transform and with which geometry, returning one PlanLayout that
// CudaPlan (cuda_plan.cu) executes. Host-only, no CUDA headers: the decisions can be read and
// tested without a device.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cuda/device_caps.hpp"
#include "cuda/schedule.hpp"
#include "fwht/options.hpp"

namespace fwht::cuda {

// Which kernels run a plan. The register-tile kernel (fast_pass.cuh) takes folklore transforms of
// 4-byte compute types on packed layouts with 16 <= n <= 2^31 (32-bit element offsets inside a
// tile): plain ones, and Kahan/Neumaier ones that fit one pass (n <= 2^13); everything else runs
// the general tile pass (tile_pass.cuh). Tuning::register_tile = false sends plain and
// Kahan/Neumaier plans to the tile pass. wide_onchip and wide_carry exist only on the
// register-tile kernel (route wide; wide_small.cuh for n <= 8).
enum class Route { fast, tile, wide };

inline bool packed(const Shape& shape) { return shape.stride == 1 && shape.distance == shape.n; }
Route route_of(const Shape& shape, int compute_bytes, const Options& o);

// The paired path (Pair16 words, arithmetic.cuh) applies: plain folklore f16/bf16 computed in
// storage precision, on the register-tile path, packed layout, n >= 32 (16 words), unless
// Tuning::paired_words is false.
bool paired_words(const Shape& shape, DType dtype, const Options& o);
// The shape of the word plan: n/2 words per transform.
inline Shape word_shape(const Shape& shape) { return Shape{.n = shape.n / 2, .batch = shape.batch, .stride = 1, .distance = shape.n / 2}; }

// The element types of one plan (CudaPlan's traits).
struct PlanTypes {
  int storage_bytes = 4;  // sizeof S (4 for paired words)
  int compute_bytes = 4;  // sizeof C, held in shared memory by the tile pass
  int work_bytes = 4;     // sizeof W, the type between passes
  // bf16 computed in storage precision (integer rounding after every operation) is
  // instruction-bound and measured slower with cluster passes: none for it.
  bool bf16_storage = false;
  bool paired = false;   // 16-bit elements as 32-bit words of two
  bool integer = false;  // i32 / i64
};

struct PlanLayout {
  Route route = Route::tile;
  bool small = false;     // wide, n < 16: one thread per transform (wide_small.cuh)
  bool gathered = false;  // wide, not packed: gathered into a packed buffer, transformed, scattered back
  Schedule tile;          // Route::tile
  std::vector<FastPass> fast;  // Route::fast and Route::wide (unless small)
  FusedGeometry fused;         // the last two fast passes in one launch; lag set by the plan
  int stage_mode = 1;          // Tuning::stage_mode
  bool dependent_launch = false;
  bool fuse_hints = true;
  // Passes over the data in device memory: a fused pair is one launch and, through L2, about one
  // pass; the gather and scatter of a wide plan count as one each.
  int memory_passes() const;
};

// Throws pagh::Error naming the knob when a Tuning value is outside its range (fwht/tuning.hpp).
void validate(const Tuning& tuning);

// Throws pagh::Error for a combination the kernels do not support (as the plan would).
PlanLayout plan_layout(const Shape& shape, const PlanTypes& types, const Options& o, const DeviceCaps& caps);

// One line per launch of a layout, for Plan::describe.
std::string describe(const PlanLayout& layout, const Shape& shape);

}  // namespace fwht::cuda
