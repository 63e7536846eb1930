// The kernels of the CUDA sketch backend, as the host orchestration (engine.cpp) sees them: raw
// device pointers, no Eigen. Every launcher enqueues on `stream` and throws pagh::Error if the
// launch fails.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace pagh::cuda {

// ---- The fused path (fused_sketch.cu) ---------------------------------------------------------
// Plain folklore FWHT, f32 storage and accumulation, b = 2^L with L >= 12. See fused_sketch.cu.
// (The wide kernel below also takes f16/bf16 storage, with either compute type.)
inline constexpr int kSliceLog = 12;  // a block transforms slices of 2^12 buckets

struct FusedArgs {
  const float* a = nullptr;        // A's columns of this chunk: column k at a + (k - k_first) * lda
  std::int64_t lda = 0;
  const float* bt = nullptr;       // B's rows of this chunk: row k at bt + (k - k_first) * ldbt
  std::int64_t ldbt = 0;
  const std::uint32_t* code_a = nullptr;  // d * m scatter codes (prepare_fused_tables)
  const std::uint32_t* code_b = nullptr;  // d * p
  float* partials = nullptr;       // groups * d * b partial spectra, group-major
  std::int64_t m = 0, p = 0;        // line lengths of A and B
  std::int64_t k_first = 0, k_count = 0;  // this chunk: k in [k_first, k_first + k_count)
  int log2b = 0, repetitions = 0, groups = 0;
  bool accumulate = false;         // add to partials (a later chunk) instead of overwriting them
};
void launch_fused(const FusedArgs& args, cudaStream_t stream);
// The fused kernel's view of one side's tables (n entries per repetition), computed once per plan:
// code[t*n + i] = swizzled slot of h_t(i) | h_t(i) above bit 12 | the rank of i among the entries
// of its scatter instruction (the 32 entries around i) with the same slot << 27 | (s_t(i) < 0) << 31.
// Sets *overflow (device int) if a rank does not fit in 4 bits (then use the general path).
void prepare_fused_tables(const std::uint32_t* buckets, const std::int8_t* signs, std::int64_t n, int repetitions,
                          std::uint32_t* code, int* overflow, cudaStream_t stream);
// The cluster kernel (cluster_sketch.cu): clusters of C = 2^log_cluster blocks share the top
// log_cluster stages through distributed shared memory, so each entry is scattered once per
// cluster; bits above 12 + log_cluster are folded as in the fused kernel. Lists (build_cluster_lists):
// for repetition t and rank r, entries start[t*C + r] .. start[t*C + r + 1] of index/code.
struct ClusterArgs {
  const float* a = nullptr;
  std::int64_t lda = 0;
  const float* bt = nullptr;
  std::int64_t ldbt = 0;
  const std::uint32_t *index_a = nullptr, *code_a = nullptr, *index_b = nullptr, *code_b = nullptr;
  const std::int64_t *start_a = nullptr, *start_b = nullptr;
  float* partials = nullptr;  // groups * d * b, as FusedArgs
  std::int64_t k_first = 0, k_count = 0;
  int log2b = 0, repetitions = 0, groups = 0, log_cluster = 1;
  bool accumulate = false;
};
// log_cluster is 1..kMaxLogCluster (clusters of 16 are non-portable: cluster_resident_blocks is 0
// where the device cannot run them).
constexpr int kMaxLogCluster = 4;
void launch_cluster(const ClusterArgs& args, cudaStream_t stream);
// Blocks of the cluster kernel resident on the whole device at once (clusters must fit in a GPC,
// so this can be less than blocks per SM x SMs).
int cluster_resident_blocks(int log_cluster);

// Blocks of the fused kernel that fit on one SM (occupancy), for choosing the group count.
int fused_blocks_per_sm();

// The wide kernel (wide_sketch.cu): slices of 2^14 buckets, 512 threads, lines permuted into the
// order of wide_layout.hpp first. For 2^14 <= b <= 2^18 and lines of at most 2^15 entries.
inline constexpr int kWideMaxLog = 18;
inline constexpr std::int64_t kWideMaxLine = std::int64_t{1} << 15;
// The storage precision of the wide kernel's transformed vectors (SketchParams::precision): 16-bit
// rounds each bucket sum and each transformed value; the transform is f32 unless
// storage_arithmetic (SketchParams::compute = storage) rounds every butterfly too.
enum class WideStorage { f32, f16, bf16 };
struct WideArgs {
  const float* lines_a = nullptr;  // permuted lines: line (t, k) at lines_a + (t * k_count + k - k_first) * ld_a
  const float* lines_b = nullptr;
  // gather: no permuted lines; each k's column of A (a + (k - k_first) * lda, m entries) and row of B
  // (bt + (k - k_first) * ldbt, p entries) are staged in shared memory and read through the
  // layouts' source words (repetitions * ld each). Needs wide_gather_fits(m, p) and 16-byte
  // aligned lines (a, bt, lda, ldbt multiples of 4 floats).
  bool gather = false;
  const float* a = nullptr;
  std::int64_t lda = 0;
  const float* bt = nullptr;
  std::int64_t ldbt = 0;
  const std::uint32_t *source_a = nullptr, *source_b = nullptr;
  int m = 0, p = 0;
  std::int64_t ld_a = 0, ld_b = 0;  // the layouts' padded lengths
  const std::uint32_t *code_a = nullptr, *code_b = nullptr;  // planes * repetitions * ld codes (wide_layout.hpp)
  const int *segment_a = nullptr, *segment_b = nullptr;      // repetitions * 17 warp segments
  float* partials = nullptr;  // groups * d * b, as FusedArgs
  std::int64_t k_first = 0, k_count = 0;
  int log2b = 0, repetitions = 0, groups = 0;
  WideStorage storage = WideStorage::f32;
  bool storage_arithmetic = false;  // 16-bit compute = storage: every butterfly rounded as well
  bool tensor_cores = false;        // f32 storage: rounds A and B on tensor cores (tensor_rounds.cuh)
  bool accumulate = false;
};
void launch_wide(const WideArgs& args, cudaStream_t stream);
// out[(t * count + l) * padded + j] = s(i) in[l * ld_in + i] for i = source[t * padded + j]
// (0 where source is kWidePad): lines l = 0..count-1 of length n <= kWideMaxLine.
void launch_permute_lines(const float* in, std::int64_t ld_in, std::int64_t n, const std::uint32_t* source, std::int64_t padded,
                          int repetitions, std::int64_t count, float* out, cudaStream_t stream);
int wide_blocks_per_sm();
// Whether lines of m and p entries can be staged (gather): multiples of 4 entries whose staged
// copies fit in shared memory beside the buffers (m + p up to about 16600 on an H100/H200, with
// shallower rings above about 8400).
bool wide_gather_fits(std::int64_t m, std::int64_t p);

// ---- The general path (general_sketch.cu) -----------------------------------------------------
// Lines k of a chunk, dense (line k at values + (k - k_first) * ld, `length` entries) or sparse
// (entries start[k - k_first] .. start[k - k_first + 1] of index/values; start is chunk-relative).
struct Lines {
  const float* values_f32 = nullptr;   // dense f32 or sparse values (one of the two value arrays)
  const double* values_f64 = nullptr;
  std::int64_t ld = 0, length = 0;     // dense
  const std::int64_t* start = nullptr;  // sparse
  const std::int32_t* index = nullptr;
};

// Scatters lines [first, first + count) of the chunk (chunk-relative) of a and b into `vectors`
// (2 * count vectors of b buckets, zeroed by the caller: a_k at 2j, b_k at 2j + 1) in the
// accumulation type of `acc_bytes` (4 = float, 8 = double), one warp per vector, summing entries
// that collide in one warp instruction in index order (deterministic, no atomics). Tables of
// repetition t: bucket_a/sign_a + t * m, bucket_b/sign_b + t * p.
void launch_scatter(const Lines& a, const Lines& b, const std::uint32_t* bucket_a, const std::int8_t* sign_a,
                    const std::uint32_t* bucket_b, const std::int8_t* sign_b, std::int64_t first, std::int64_t count,
                    std::int64_t buckets, void* vectors, int acc_bytes, cudaStream_t stream);
// Rounds `count` float values to the 16-bit storage type (dtype 2 = f16, 3 = bf16), to nearest
// even like fwht::f16/bf16: out[i] = T(in[i]).
void launch_round_to_16bit(const float* in, void* out, std::int64_t count, int dtype, cudaStream_t stream);
// spectrum[h] += sum_j Ha_j[h] * Hb_j[h] over pairs j = 0..pairs-1 in order, in Acc; `vectors` in
// storage type of `storage_bytes`/dtype (0 = f64, 1 = f32, 2 = f16, 3 = bf16).
void launch_multiply_accumulate(const void* vectors, std::int64_t pairs, std::int64_t b, int dtype, void* spectrum,
                                cudaStream_t stream);

// ---- Finishing ---------------------------------------------------------------------------------
// spectrum[t * b + h] = sum_g partials[(g * d + t) * b + h], g in increasing order.
void launch_reduce_partials(const float* partials, int groups, std::int64_t db, float* spectrum, cudaStream_t stream);
// sketches[i] = double(spectrum[i]) for float or double spectra (acc_bytes 4 or 8).
void launch_widen(const void* spectrum, int acc_bytes, std::int64_t count, double* sketches, cudaStream_t stream);
// *out = sqrt(sum_i x[i]^2 / repetitions) in one fixed order (one block): the Frobenius estimate.
void launch_frobenius(const double* sketches, std::int64_t count, int repetitions, double* out, cudaStream_t stream);
// out (rows x cols, row-major, ld_out) = in (rows x cols col-major... i.e. in^T): B's rows made contiguous.
void launch_transpose(const float* in, std::int64_t ld_in, std::int64_t rows, std::int64_t cols, float* out,
                      std::int64_t ld_out, cudaStream_t stream);

}  // namespace pagh::cuda
