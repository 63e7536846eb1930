// The CUDA planner (fwht/src/cuda/planner.hpp) as the pure function it is: layouts for given
// device capabilities and tuning, without a device. The kernels' results under every layout are
// checked against the CPU on a GPU (cuda_test.cpp); here: which layout the rules and tables pick.
#include <gtest/gtest.h>

#include "cuda/planner.hpp"
#include "pagh/error.hpp"

namespace fwht::cuda {
namespace {

constexpr DeviceCaps kSlowMemory{.sms = 132, .max_cluster_log = 3, .slow_memory = true, .dependent_launch = true};
constexpr DeviceCaps kFastMemory{.sms = 132, .max_cluster_log = 3, .slow_memory = false, .dependent_launch = true};
constexpr DeviceCaps kNoClusters{.sms = 108, .max_cluster_log = 0, .slow_memory = false, .dependent_launch = false};
constexpr PlanTypes kF32{.storage_bytes = 4, .compute_bytes = 4, .work_bytes = 4};
constexpr PlanTypes kF16InF32{.storage_bytes = 2, .compute_bytes = 4, .work_bytes = 4};
constexpr PlanTypes kBF16Storage{.storage_bytes = 2, .compute_bytes = 4, .work_bytes = 2, .bf16_storage = true};
constexpr PlanTypes kF64{.storage_bytes = 8, .compute_bytes = 8, .work_bytes = 8};

Shape packed_shape(int log2n, std::int64_t batch = 1) {
  const std::int64_t n = std::int64_t{1} << log2n;
  return {.n = n, .batch = batch, .stride = 1, .distance = n};
}

bool any_cluster(const PlanLayout& l) {
  for (const FastPass& p : l.fast)
    if (p.cluster_log > 0) return true;
  return false;
}

// f32 at 2^28: the slow memory class takes the table's two cluster passes (17 stages in clusters
// of 8, then 11 on 128-byte rows in clusters of 4); the fast class keeps three register-tile passes
// with the last two fused: two passes over memory either way.
TEST(CudaPlanner, MemoryClassPicksTheTableShape) {
  const PlanLayout slow = plan_layout(packed_shape(28), kF32, {}, kSlowMemory);
  ASSERT_EQ(slow.route, Route::fast);
  ASSERT_EQ(slow.fast.size(), 2u);
  EXPECT_EQ(slow.fast[0].g, 17);
  EXPECT_EQ(slow.fast[0].cluster_log, 3);
  EXPECT_EQ(slow.fast[1].w, 5);
  EXPECT_EQ(slow.fast[1].cluster_log, 2);
  EXPECT_FALSE(slow.fused.fused);
  EXPECT_EQ(slow.memory_passes(), 2);

  const PlanLayout fast = plan_layout(packed_shape(28), kF32, {}, kFastMemory);
  ASSERT_EQ(fast.fast.size(), 3u);
  EXPECT_FALSE(any_cluster(fast));
  EXPECT_TRUE(fast.fused.fused);
  EXPECT_EQ(fast.memory_passes(), 2);

  // Tuning::slow_memory overrides the device's class.
  const PlanLayout forced = plan_layout(packed_shape(28), kF32, {.tuning = {.slow_memory = true}}, kFastMemory);
  EXPECT_EQ(forced.fast.size(), 2u);
  EXPECT_TRUE(any_cluster(forced));
}

// The universal entry (16-bit storage computed in f32 at 2^28) applies to both classes.
TEST(CudaPlanner, UniversalTableEntry) {
  for (const DeviceCaps& caps : {kSlowMemory, kFastMemory}) {
    const PlanLayout l = plan_layout(packed_shape(28), kF16InF32, {}, caps);
    ASSERT_EQ(l.fast.size(), 2u);
    EXPECT_EQ(l.fast[0].cluster_log, 3);
    EXPECT_EQ(l.fast[1].w, 5);
  }
}

// No cluster passes for bf16 computed in storage precision, on devices without clusters, or with
// Tuning::max_cluster_log = 0; a single cluster pass from 2^21 elements in all at 2^15.
TEST(CudaPlanner, ClusterPassesWhereTheyApply) {
  EXPECT_FALSE(any_cluster(plan_layout(packed_shape(26), kBF16Storage, {.compute = Compute::storage}, kFastMemory)));
  EXPECT_FALSE(any_cluster(plan_layout(packed_shape(26), kF32, {}, kNoClusters)));
  const PlanLayout off = plan_layout(packed_shape(26), kF32, {.tuning = {.max_cluster_log = 0}}, kFastMemory);
  EXPECT_FALSE(any_cluster(off));
  EXPECT_EQ(off.fast.size(), 3u);
  EXPECT_TRUE(off.fused.fused);
  const PlanLayout single = plan_layout(packed_shape(15, 64), kF32, {}, kFastMemory);
  ASSERT_EQ(single.fast.size(), 1u);
  EXPECT_EQ(single.fast[0].cluster_log, 1);
  const PlanLayout few = plan_layout(packed_shape(15, 16), kF32, {}, kFastMemory);  // 2^19 elements: two plain passes
  EXPECT_EQ(few.fast.size(), 2u);
  EXPECT_FALSE(any_cluster(few));
}

// Routes: the tile pass for f64 and with register_tile = false; wide plans on strided layouts
// gather and scatter (two more passes); dependent launches only where the device has them.
TEST(CudaPlanner, RoutesAndPassCounts) {
  const PlanLayout f64 = plan_layout(packed_shape(20), kF64, {}, kFastMemory);
  EXPECT_EQ(f64.route, Route::tile);
  EXPECT_EQ(f64.memory_passes(), 2);
  EXPECT_EQ(plan_layout(packed_shape(20), kF32, {.tuning = {.register_tile = false}}, kFastMemory).route, Route::tile);
  const Shape strided{.n = 1 << 20, .batch = 1, .stride = 2, .distance = 1 << 21};
  const PlanLayout wide = plan_layout(strided, kF32, {.stabilization = Stabilization::wide_onchip}, kFastMemory);
  EXPECT_EQ(wide.route, Route::wide);
  EXPECT_TRUE(wide.gathered);
  EXPECT_EQ(wide.memory_passes(), static_cast<int>(wide.fast.size()) - (wide.fused.fused ? 1 : 0) + 2);
  EXPECT_TRUE(plan_layout(packed_shape(20), kF32, {}, kFastMemory).dependent_launch);
  EXPECT_FALSE(plan_layout(packed_shape(20), kF32, {}, kNoClusters).dependent_launch);
  EXPECT_FALSE(plan_layout(packed_shape(20), kF32, {.tuning = {.dependent_launch = false}}, kFastMemory).dependent_launch);
  EXPECT_THROW(plan_layout(packed_shape(20), kF64, {.stabilization = Stabilization::wide_onchip}, kFastMemory), pagh::Error);
}

TEST(CudaPlanner, DescribeNamesEveryPass) {
  const PlanLayout l = plan_layout(packed_shape(26), kF32, {.tuning = {.max_cluster_log = 0}}, kFastMemory);
  const std::string text = describe(l, packed_shape(26));
  EXPECT_NE(text.find("register tile, n = 2^26 x 1: 2 pass(es) over memory"), std::string::npos) << text;
  EXPECT_NE(text.find("stages 0+14"), std::string::npos) << text;
  EXPECT_NE(text.find("fused:"), std::string::npos) << text;
}

TEST(CudaPlanner, TuningOutsideItsRangeIsAnError) {
  const Tuning bad[] = {{.tile_block_log = 16, .tile_column_log = 4}, {.tile_block_log = 12}, {.single_block_log = 11},
                        {.first_pass_stages = 15},  {.max_cluster_log = 4},  {.cluster_first = -1},
                        {.cluster_column_log = 9},  {.fuse_strip_mib = 0},   {.fuse_lag = 65},
                        {.stage_mode = 3}};
  for (const Tuning& t : bad) EXPECT_THROW(validate(t), pagh::Error);
  EXPECT_NO_THROW(validate({.tile_block_log = 12, .tile_column_log = 4, .fuse_lag = 64, .stage_mode = 0}));
}

}  // namespace
}  // namespace fwht::cuda
