// The CPU backend: cache-blocked passes over the data, each applying as many stages as fit in L1,
// vector kernels from cpu/stages.hpp, OpenMP threads across transforms and across the tiles of one
// large transform.
//
// Schedule of one transform of n = 2^L elements of compute type C:
//   * small (the whole transform, with its error terms, fits in 256 KiB): load it into a per-thread
//     buffer, apply all stages there, store it. Transforms of a batch run in parallel.
//   * large: pass 1 applies stages [0, c) to contiguous chunks of 2^c elements (128 KiB); each later
//     pass applies up to 8 more stages (6 for Alman-Rao, whose H8 stages come in threes) to tiles of
//     2^g rows x W columns (rows 2^s apart, rows of W elements = 256 bytes) copied into a per-thread
//     buffer, so strided stages never thrash the cache. The last pass normalizes and stores.
//     Chunks and tiles of one pass run in parallel. For n = 2^23 floats that is 2 passes over memory,
//     for 2^26 3 passes.
// Stabilized transforms carry their error vector through all passes (full stabilization).
// Stabilization::wide_onchip / wide_carry take a simple path instead: one whole transform per thread, widened
// into a buffer of the wide type, each stage group (fwht::stage_groups) applied there by the plain
// vector kernels of the wide type and rounded back (slow for large n: one thread per transform, the
// whole wide transform in memory; it exists to define and check the CUDA backend's results).
// Work is split the same way whatever the thread count, and every element sees the same operations
// in the same order, so results do not depend on the number of threads.
#include "cpu/cpu_plan.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "common/arithmetic.hpp"
#include "cpu/kernels.hpp"
#include "pagh/error.hpp"

namespace fwht::cpu {
namespace {

using detail::int128;
using detail::Rounded;
using index = std::int64_t;

constexpr index kSmallBytes = 256 * 1024;  // whole transform in one thread's buffer (L2)
constexpr index kChunkBytes = 128 * 1024;  // pass 1 block (L2)
constexpr index kRowBytes = 256;           // tile row: 4 cache lines
constexpr index kParallelElements = 1 << 15;  // below this much work per execute, one thread is faster
constexpr int kMaxTileStages = 8;          // 256 rows x 256 B = 64 KiB tile

int log2_floor(index v) { return 63 - std::countl_zero(static_cast<std::uint64_t>(v)); }

// The first failing element of a checked integer transform (smallest t*n + i), reported after the
// parallel region: exceptions must not cross an OpenMP region.
class Failure {
 public:
  void record(index position, const char* what) {
    index seen = first_.load(std::memory_order_relaxed);
    while ((seen < 0 || position < seen) && !first_.compare_exchange_weak(seen, position)) {}
    if (first_.load() == position) what_.store(what);
  }
  void rethrow(index n) const {
    const index p = first_.load();
    if (p < 0) return;
    throw pagh::Error("fwht::Plan::execute", std::string(what_.load()) + " at element " + std::to_string(p % n) +
                                                 " of transform " + std::to_string(p / n));
  }

 private:
  std::atomic<index> first_{-1};
  std::atomic<const char*> what_{""};
};

template <class S, class C>
class CpuPlan final : public PlanImpl {
  static constexpr bool kInteger = std::is_integral_v<S>;
  // Storage and compute share their bits (double, float, int32<->uint32, int64<->uint64): a
  // contiguous large transform can then work directly in the output buffer.
  static constexpr bool kSameBits = std::is_same_v<S, C> || (std::is_same_v<S, std::int32_t> && std::is_same_v<C, std::uint32_t>) ||
                                    (std::is_same_v<S, std::int64_t> && std::is_same_v<C, std::uint64_t>);

 public:
  CpuPlan(const Shape& shape, const Options& o)
      : n_(shape.n), batch_(shape.batch), stride_(shape.stride), distance_(shape.distance), options_(o),
        kernels_(select_kernels<C>()) {
    L_ = log2_floor(n_);
    threads_ = o.threads > 0 ? o.threads : omp_get_max_threads();
    stabilized_ = o.stabilization != Stabilization::none;
    alman_rao_ = o.algorithm == Algorithm::alman_rao;
    const index planes = stabilized_ ? 2 : 1;
    small_ = n_ * static_cast<index>(sizeof(C)) * planes <= kSmallBytes;
    row_log_ = log2_floor(kRowBytes / static_cast<index>(sizeof(C)));
    max_tile_stages_ = alman_rao_ ? 6 : kMaxTileStages;
    first_pass_end_ = log2_floor(kChunkBytes / static_cast<index>(sizeof(C)));
    if (alman_rao_) first_pass_end_ = L_ % 3 + 3 * ((first_pass_end_ - L_ % 3) / 3);
    direct_ = kSameBits && stride_ == 1;
    plain_ = !alman_rao_ && !stabilized_ && kernels_.plain != nullptr;
    if constexpr (!kInteger) {
      if (o.normalization != Normalization::none) {
        scale_ = detail::scale_in<C>(detail::normalization_factor(o.normalization, n_));
        scaled_ = true;
      }
    }

    if constexpr (detail::has_wide<C>) {
      if (is_wide(o.stabilization)) {
        wide_ = true;
        carry_ = o.stabilization == Stabilization::wide_carry;
        groups_ = stage_groups(L_);
        wide_kernels_ = select_kernels<typename detail::Wide<C>::type>();
        wide_threads_ = n_ * batch_ < kParallelElements ? 1 : static_cast<int>(std::min<index>(threads_, batch_));
        narrow_.resize(static_cast<std::size_t>(n_ * wide_threads_));
        wide_buffer_.resize(static_cast<std::size_t>(n_ * wide_threads_));
        return;
      }
    }
    const index tile = (index{1} << (max_tile_stages_ + row_log_)) * planes;
    const index per_thread = round_up(small_ ? n_ * planes : tile, 64);
    per_thread_ = per_thread;
    scratch_.resize(static_cast<std::size_t>(per_thread * threads_));
    // One plain transform that needs no buffer and no normalization pass: execute() calls the
    // kernel and nothing else (at 2^4..2^8 the surrounding checks cost as much as the transform).
    single_ = small_ && plain_ && direct_ && batch_ == 1 && !scaled_ && !(kInteger && o.normalization == Normalization::inverse);
    if (!small_) {
      if (!direct_) work_.resize(static_cast<std::size_t>(n_));
      if (stabilized_) errors_.resize(static_cast<std::size_t>(n_));
    }
  }

  DirectFn direct() const override { return single_ && L_ < kSmallLogs ? kernels_.small[L_] : nullptr; }

  void execute(const void* in_ptr, void* out_ptr) override {
    const S* in = static_cast<const S*>(in_ptr);
    S* out = static_cast<S*>(out_ptr);
    if (single_) return kernels_.plain(reinterpret_cast<C*>(out), reinterpret_cast<const C*>(in), n_, 0, L_);
    Failure failure;
    if (wide_) {
      execute_wide(in, out, failure);
    } else if (small_ && plain_ && direct_) {
      // Straight from in to out, the copy fused with the first pass: no buffer.
      auto one = [&](index t) {
        kernels_.plain(reinterpret_cast<C*>(out + t * distance_), reinterpret_cast<const C*>(in + t * distance_), n_, 0, L_);
        normalize_in_place(out + t * distance_, t, failure);
      };
      const int threads = n_ * batch_ < kParallelElements ? 1 : static_cast<int>(std::min<index>(threads_, batch_));
      if (threads == 1) {  // not even an inactive parallel region: it costs as much as a 2^10 transform
        for (index t = 0; t < batch_; ++t) one(t);
      } else {
#pragma omp parallel for num_threads(threads) schedule(static)
        for (index t = 0; t < batch_; ++t) one(t);
      }
    } else if (small_) {
      const int threads = n_ * batch_ < kParallelElements ? 1 : static_cast<int>(std::min<index>(threads_, batch_));
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
      for (index t = 0; t < batch_; ++t) {
        C* buf = scratch(omp_get_thread_num());
        C* err = stabilized_ ? buf + n_ : nullptr;
        load(in + t * distance_, buf, 0, n_);
        if (err) std::fill(err, err + n_, C{});
        apply(buf, err, n_, 0, L_, L_ % 3, 0);
        store(buf, out + t * distance_, 0, n_, t, failure);
      }
    } else {
      for (index t = 0; t < batch_; ++t) large(in + t * distance_, out + t * distance_, t, failure);
    }
    failure.rethrow(n_);
  }

  void execute(const void*, void*, cudaStream_t, void*) override {
    throw pagh::Error("fwht::Plan::execute", "this is a CPU plan: call execute(in, out) with host pointers");
  }
  std::size_t workspace_bytes() const override { return 0; }
  // "cpu plan, <isa> kernels, <route>": which kernels and which schedule this plan runs.
  PlanDescription describe() const override {
    const char* route = wide_                                    ? "wide buffer"
                        : plain_ && direct_                      ? "in the output buffer, cache-oblivious blocks"
                        : small_                                 ? "per-thread buffer"
                                                                 : "chunk and tile passes";
    return {.memory_passes = 0, .text = std::string("cpu plan, ") + kernels_.isa + " kernels, " + route + "\n"};
  }

 private:
  static index round_up(index v, index m) { return (v + m - 1) / m * m; }
  C* scratch(int thread) { return scratch_.data() + per_thread_ * thread; }

  void apply(C* x, C* err, index len, int k0, int k1, int r, index prescale_offset) const {
    if (plain_)
      kernels_.plain(x, x, len, k0, k1);
    else if (alman_rao_)
      kernels_.alman_rao(x, len, k0, k1, r, prescale_offset);
    else
      kernels_.folklore[static_cast<int>(options_.stabilization)](x, err, len, k0, k1);
  }

  void execute_wide(const S* in, S* out, Failure& failure) {
    if constexpr (detail::has_wide<C>) {
      using Wd = detail::Wide<C>;
#pragma omp parallel for num_threads(wide_threads_) schedule(static) if (wide_threads_ > 1)
      for (index t = 0; t < batch_; ++t) {
        const index slot = static_cast<index>(omp_get_thread_num()) * n_;
        C* x = narrow_.data() + slot;
        typename Wd::type* w = wide_buffer_.data() + slot;
        load(in + t * distance_, x, 0, n_);
        int s = 0;
        for (index i = 0; i < n_; ++i) w[i] = Wd::widen(x[i]);
        for (std::size_t k = 0; k < groups_.size(); ++k) {
          wide_kernels_.folklore[static_cast<int>(Stabilization::none)](w, nullptr, n_, s, s + groups_[k]);
          s += groups_[k];
          const bool last = k + 1 == groups_.size();
          // wide_onchip rounds at every boundary; wide_carry resumes from the quantized residual.
          if (last)
            for (index i = 0; i < n_; ++i) x[i] = Wd::narrow(w[i]);
          else if (carry_)
            for (index i = 0; i < n_; ++i) w[i] = Wd::carry(w[i]);
          else
            for (index i = 0; i < n_; ++i) w[i] = Wd::widen(Wd::narrow(w[i]));
        }
        store(x, out + t * distance_, 0, n_, t, failure);
      }
    }
  }

  // buf[i] <- element (offset + i) of the transform at src, converted to the compute type.
  void load(const S* src, C* buf, index offset, index count) const {
    if constexpr (std::is_same_v<S, C>) {
      if (stride_ == 1) {
        std::memcpy(buf, src + offset, static_cast<std::size_t>(count) * sizeof(C));
        return;
      }
    }
    for (index i = 0; i < count; ++i) buf[i] = to_compute(src[(offset + i) * stride_]);
  }

  static C to_compute(S v) {
    if constexpr (std::is_same_v<C, Rounded<S>>)
      return C{static_cast<float>(v)};
    else if constexpr (std::is_same_v<S, f16> || std::is_same_v<S, bf16>)
      return static_cast<float>(v);
    else
      return static_cast<C>(v);
  }

  // Element (offset + i) of the transform at dst <- normalized buf[i].
  void store(const C* buf, S* dst, index offset, index count, index t, Failure& failure) const {
    S* d = dst + offset * stride_;
    if constexpr (kInteger) {
      const bool inverse = options_.normalization == Normalization::inverse;
      if constexpr (std::is_same_v<C, int128>) {
        for (index i = 0; i < count; ++i) {
          int128 v = buf[i];
          if (inverse) {
            if (v % n_ != 0) failure.record(t * n_ + offset + i, "inverse normalization is inexact");
            v /= n_;
          }
          if (v < std::numeric_limits<S>::min() || v > std::numeric_limits<S>::max())
            failure.record(t * n_ + offset + i, "integer overflow");
          d[i * stride_] = static_cast<S>(v);
        }
      } else {
        for (index i = 0; i < count; ++i) {
          const S v = static_cast<S>(buf[i]);  // two's complement: exact modulo 2^w
          d[i * stride_] = inverse ? static_cast<S>(v / n_) : v;
        }
      }
    } else {
      for (index i = 0; i < count; ++i) {
        const C v = scaled_ ? buf[i] * scale_ : buf[i];
        d[i * stride_] = from_compute(v);
      }
    }
  }

  static S from_compute(C v) {
    if constexpr (std::is_same_v<C, Rounded<S>>)
      return S(v.v);  // already representable: exact
    else if constexpr (std::is_same_v<S, f16> || std::is_same_v<S, bf16>)
      return S(v);
    else
      return static_cast<S>(v);
  }

  // A large plain transform in its output buffer, with the kernels' own cache-oblivious blocking
  // (the input read in the first pass). On several threads: the top kTopStages stages split the
  // transform into 2^kTopStages blocks, which threads transform whole, then one pass applies the
  // top stages with the columns split across threads.
  void plain_large(const C* src, C* x) const {
    constexpr int kTopStages = 3;
    if (threads_ == 1 || L_ < kTopStages + row_log_) {
      kernels_.plain(x, src, n_, 0, L_);
      return;
    }
    const int sub = L_ - kTopStages;
    const index block = index{1} << sub, column_chunk = std::min<index>(block, index{1} << row_log_ << 4);
#pragma omp parallel num_threads(threads_)
    {
#pragma omp for schedule(static)
      for (index b = 0; b < n_; b += block) kernels_.plain(x + b, src + b, block, 0, sub);
#pragma omp for schedule(static)
      for (index c = 0; c < block; c += column_chunk) kernels_.plain_columns(x + c, column_chunk, sub, kTopStages);
    }
  }

  // The normalization of a transform computed in its output buffer (direct_ plans).
  void normalize_in_place(S* dst, index t, Failure& failure) const {
    if (!scaled_ && !(kInteger && options_.normalization == Normalization::inverse)) return;
    store(reinterpret_cast<const C*>(dst), dst, 0, n_, t, failure);  // element-wise: safe in place
  }

  void large(const S* src, S* dst, index t, Failure& failure) {
    if (plain_ && direct_) {
      plain_large(reinterpret_cast<const C*>(src), reinterpret_cast<C*>(dst));
      normalize_in_place(dst, t, failure);
      return;
    }
    C* w = direct_ ? reinterpret_cast<C*>(dst) : work_.data();
    C* err = stabilized_ ? errors_.data() : nullptr;
    const index chunk = index{1} << first_pass_end_;
    const bool copy_in = !(direct_ && static_cast<const void*>(src) == static_cast<const void*>(dst));
    const int threads = threads_;

#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (index c = 0; c < n_ / chunk; ++c) {
      C* x = w + c * chunk;
      if (copy_in) load(src, x, c * chunk, chunk);
      if (err) std::fill(err + c * chunk, err + (c + 1) * chunk, C{});
      apply(x, err ? err + c * chunk : nullptr, chunk, 0, first_pass_end_, L_ % 3, c * chunk);
    }

    const index width = index{1} << row_log_;
    for (int s = first_pass_end_; s < L_; s += max_tile_stages_) {
      const int g = std::min(max_tile_stages_, L_ - s);
      const bool last = s + g == L_;
      const index rows = index{1} << g, row_stride = index{1} << s;
      const index column_blocks = row_stride / width, tiles = n_ / (rows * width);
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
      for (index q = 0; q < tiles; ++q) {
        const index base = (q / column_blocks) * rows * row_stride + (q % column_blocks) * width;
        C* tile = scratch(omp_get_thread_num());
        C* tile_err = err ? tile + rows * width : nullptr;
        for (index r = 0; r < rows; ++r) {
          std::copy_n(w + base + r * row_stride, width, tile + r * width);
          if (err) std::copy_n(err + base + r * row_stride, width, tile_err + r * width);
        }
        apply(tile, tile_err, rows * width, row_log_, row_log_ + g, row_log_, -1);
        for (index r = 0; r < rows; ++r) {
          if (last) {
            store(tile + r * width, dst, base + r * row_stride, width, t, failure);
          } else {
            std::copy_n(tile + r * width, width, w + base + r * row_stride);
            if (err) std::copy_n(tile_err + r * width, width, err + base + r * row_stride);
          }
        }
      }
    }
  }

  index n_, batch_, stride_, distance_;
  Options options_;
  Kernels<C> kernels_;
  int L_ = 0, threads_ = 1, row_log_ = 0, max_tile_stages_ = 0, first_pass_end_ = 0;
  bool stabilized_ = false, alman_rao_ = false, small_ = true, direct_ = false, scaled_ = false;
  bool plain_ = false;  // folklore without stabilization on a native type: Kernels::plain
  bool single_ = false;  // one plain small transform, unnormalized, in a contiguous buffer
  C scale_{};
  index per_thread_ = 0;
  std::vector<C> scratch_, work_, errors_;
  // Stabilization::wide_onchip (compute types with a wide type only).
  struct NoWide {
    using type = C;
  };
  using WideType = typename std::conditional_t<detail::has_wide<C>, detail::Wide<C>, NoWide>::type;
  bool wide_ = false, carry_ = false;
  std::vector<int> groups_;  // fwht::stage_groups(log2 n)
  int wide_threads_ = 1;
  Kernels<WideType> wide_kernels_{};
  std::vector<C> narrow_;
  std::vector<WideType> wide_buffer_;
};

template <class S, class C>
std::unique_ptr<PlanImpl> make(const Shape& shape, const Options& o) {
  return std::make_unique<CpuPlan<S, C>>(shape, o);
}

template <class S>
std::unique_ptr<PlanImpl> make_sixteen_bit(const Shape& shape, const Options& o) {
  if (o.compute == Compute::storage) return make<S, Rounded<S>>(shape, o);
  return make<S, float>(shape, o);
}

template <class S>
std::unique_ptr<PlanImpl> make_integer(const Shape& shape, const Options& o) {
  if (o.check_overflow) return make<S, int128>(shape, o);
  return make<S, std::make_unsigned_t<S>>(shape, o);
}

}  // namespace

std::unique_ptr<PlanImpl> make_cpu_plan(const Shape& shape, DType dtype, const Options& options) {
  switch (dtype) {
    case DType::f64: return make<double, double>(shape, options);
    case DType::f32: return make<float, float>(shape, options);
    case DType::f16: return make_sixteen_bit<f16>(shape, options);
    case DType::bf16: return make_sixteen_bit<bf16>(shape, options);
    case DType::i32: return make_integer<std::int32_t>(shape, options);
    case DType::i64: return make_integer<std::int64_t>(shape, options);
  }
  throw pagh::Error("fwht::Plan", "unknown dtype");
}

}  // namespace fwht::cpu
