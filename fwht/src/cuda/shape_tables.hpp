// The CUDA planner's shape tables, one line per entry. Host-only. Their measurements are in
// bench/RESULTS.md (fwht CUDA), the reasons in bench/NOTES.md (cluster passes and two-pass shapes);
// the rules that consult them are in schedule.cpp.
#pragma once

namespace fwht::cuda {

// Tiles of the general tile pass, keyed by the bytes of the compute type and the planes of state
// (2 when error terms travel with the values): 64 KiB of shared memory per block, 64-byte rows of
// the compute type for strided passes. A type without an entry is an explicit error.
struct TileConfig {
  int compute_bytes;  // sizeof of the compute type held in shared memory
  int planes;         // 1 = values, 2 = values + error terms
  int block_log;      // log2 elements per block
  int column_log;     // log2 W for strided passes
};
inline constexpr TileConfig kTileTable[] = {
    {4, 1, 14, 4},  // float, uint32, 16-bit values held in float
    {4, 2, 13, 4},  // float + errors
    {8, 1, 13, 3},  // double, uint64
    {8, 2, 12, 3},  // double + errors
};

// Two-pass cluster shapes (c1: clusters of the first pass, log2; w: log2 columns of the strided
// pass) that replace the rule of the cluster schedule (w = 4, c1 = log2 n - 24 at 2^25..2^27).
// slow_memory_only: devices of the slow memory class (DeviceCaps::slow_memory: the H100 SXM); the
// others keep the rule there. log2n: of the transform the schedule is made for (32-bit words for
// the paired 16-bit plans).
struct TwoPassShape {
  bool slow_memory_only;
  int storage_bytes;
  bool paired;
  int log2n;
  int c1, w;
};
inline constexpr TwoPassShape kTwoPassShapes[] = {
    {false, 2, false, 28, 3, 5},  // f16/bf16 computed in f32
    {true, 4, false, 26, 3, 5},   // f32 and i32
    {true, 4, false, 27, 2, 5},
    {true, 4, false, 28, 3, 5},
    {true, 4, false, 29, 3, 5},
    {true, 2, false, 27, 2, 5},   // f16/bf16 computed in f32
    {true, 4, true, 27, 2, 5},    // paired words of 2^28 f16/bf16 elements
    {true, 4, true, 28, 2, 5},    // paired words of 2^29 elements
};

}  // namespace fwht::cuda
