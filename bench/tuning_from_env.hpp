// The benchmarks' environment knobs, mapped onto the libraries' typed tuning structs (the
// libraries themselves read no environment). For A/B sweeps in one build: results do not depend
// on them, only the speed does.
//
// fwht::Tuning (fwht/tuning.hpp):
//   PAGH_FWHT_CUDA_FAST=0          register_tile = false       PAGH_FWHT_CUDA_PAIRS=0     paired_words = false
//   PAGH_FWHT_CUDA_TILE=B,W        tile_block_log, tile_column_log
//   PAGH_FWHT_CUDA_FAST_SINGLE=n   single_block_log            PAGH_FWHT_CUDA_FAST_FIRST=n  first_pass_stages
//   PAGH_FWHT_CUDA_CLUSTER=c       max_cluster_log             PAGH_FWHT_CUDA_CLUSTER_FIRST=c  cluster_first
//   PAGH_FWHT_CUDA_CLUSTER_W=w     cluster_column_log          PAGH_FWHT_CUDA_SLOW_MEMORY=0|1  slow_memory
//   PAGH_FWHT_CUDA_FUSE=0          fuse = false                PAGH_FWHT_CUDA_FUSE_MB=n   fuse_strip_mib
//   PAGH_FWHT_CUDA_FUSE_LAG=n      fuse_lag                    PAGH_FWHT_CUDA_FUSE_HINTS=0  fuse_hints = false
//   PAGH_FWHT_CUDA_FAST_STAGE=0|1|2  stage_mode                PAGH_FWHT_CUDA_PDL=0       dependent_launch = false
// pagh::cuda::PathTuning (sketch/path_tuning.hpp):
//   PAGH_SKETCH_WIDE=0|1  wide     PAGH_SKETCH_CLUSTER=c  cluster_log
//   PAGH_SKETCH_WIDE_GATHER=0|1  wide_staged_lines     PAGH_SKETCH_WIDE_PIECE=k  wide_piece
//   PAGH_SKETCH_TENSOR=0|1  tensor_cores
// A value that does not parse throws pagh::Error naming the variable; ranges are checked by the
// plans, which name the field.
#pragma once

#include "fwht/tuning.hpp"
#include "sketch/path_tuning.hpp"

namespace pagh::bench {

fwht::Tuning fwht_tuning_from_env();
pagh::cuda::PathTuning path_tuning_from_env();

}  // namespace pagh::bench
