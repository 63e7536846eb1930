// The CPU compression engine: for each repetition t and inner index k, sign-scatter line k of A and
// of B, transform both, multiply pointwise and accumulate into P_t; at the end one inverse per
// repetition, c_t = H P_t / b (DESIGN.md §1). A thin k adds its outer product to c_t directly.
//
// Fused per inner index: for f32/f64 storage and plain transforms, fwht::TransformProduct asks for
// each L1-sized block of a k's two vectors just before transforming it; the engine scatters the
// whole line at the vector's first block (line_scatter.hpp: a dense line in position order through
// packed hash words, each bucket's first term stored rather than added) and nothing at the later ones; the last pass multiplies the two transforms
// into P_t instead of storing them, and zeroes the vectors. The clearing and the
// multiply-accumulate take no pass of their own.
// Otherwise (16-bit storage, stabilized or Alman-Rao transforms) a k's two lines are scattered into
// two zero vectors, transformed by a plan and multiplied into P_t, the multiply-accumulate zeroing
// the vectors for the next k (multiply_accumulate.hpp), and a dense line's nonzeros are counted
// while it is scattered the first time (t = 0). The fused path counts them at t = 0 just before the
// first scatter, while the line is read into the cache anyway.
//
// Determinism: k is split into S = kPartitions ranges [K s / S, K (s+1) / S) whatever the thread
// count (S = SketchParams::partitions when set); each range sums its own P_t (and time-domain direct
// part) over its k in order, and the ranges are summed in order (cpu_engine_fold.hpp: folded as they
// finish). Threads take whole ranges, so the result is the same bits for
// every thread count (tests/sketch: engine_reference_test.cpp against a reference written from this
// paragraph, threads_test.cpp).
#pragma once

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "compress/cpu_engine_fold.hpp"
#include "compress/cpu_lines.hpp"
#include "compress/direct_adds.hpp"
#include "fwht/fwht.hpp"
#include "compress/huge_pages.hpp"
#include "compress/hybrid_rule.hpp"
#include "compress/line_scatter.hpp"
#include "compress/multiply_accumulate.hpp"
#include "pagh/error.hpp"
#include "sketch/compressed_product.hpp"
#include "sketch/hashing.hpp"
#include "sketch/params.hpp"

// Products and sums round one operation at a time (no fused multiply-add in -march=native builds):
// the same bits on every machine, and the reference's.
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")

namespace pagh::cpu_sketch {

// Part of the determinism contract above (the reference in tests/sketch splits k the same way).
constexpr index kPartitions = 16;

// The ranges a K-column product is split into under params (SketchParams::partitions, 0: kPartitions).
inline index partitions_for(index K, const SketchParams& params) {
  return std::min<index>(K, params.partitions > 0 ? params.partitions : kPartitions);
}

enum class Path : char { empty, direct, transform };

// 64-byte aligned, zeroed storage for the working vectors (the FWHT kernels' full-width loads).
template <class T>
struct AlignedBuffer {
  explicit AlignedBuffer(std::size_t n)
      : data(static_cast<T*>(std::aligned_alloc(64, std::max<std::size_t>(64, (n * sizeof(T) + 63) / 64 * 64)))) {
    if (data == nullptr) throw std::bad_alloc();
    advise_huge_pages(data, n * sizeof(T));
    std::memset(static_cast<void*>(data), 0, n * sizeof(T));
  }
  ~AlignedBuffer() { std::free(data); }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  T* data;
};

// The engine for one storage type T of the transformed vectors; Acc accumulates (and scatters).
template <class T, class LinesA, class LinesB>
class Engine {
  using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
  static constexpr bool kScatterInStorage = std::is_same_v<T, Acc>;  // else scatter in Acc, convert
  using Product = std::conditional_t<kScatterInStorage, fwht::TransformProduct<Acc>, int>;

 public:
  Engine(const LinesA& a, const LinesB& b, index K, const SketchParams& params, index buckets, const HashTables& tables)
      : a_(a), b_(b), K_(K), params_(params), buckets_(buckets), tables_(tables), d_(params.repetitions) {}

  // Returns the d sketches c_t (time domain) and fills the path counters of timings.
  std::vector<double> run(CompressTimings& timings, const char* where) {
    const int threads = params_.threads > 0 ? params_.threads : omp_get_max_threads();
    const index partitions = partitions_for(K_, params_);
    build_bucket_orders();
    std::vector<Partition> parts(static_cast<std::size_t>(partitions));
    OrderedFold<Acc> fold(partitions, static_cast<std::size_t>(buckets_) * static_cast<std::size_t>(d_));
    std::vector<std::unique_ptr<Workspace>> workspaces(static_cast<std::size_t>(std::max(threads, 1)));
    paths_.assign(static_cast<std::size_t>(K_), Path::empty);

    const auto start = std::chrono::steady_clock::now();
    std::string failure;
#pragma omp parallel num_threads(threads) if (threads > 1)
    for (index s; (s = fold.claim()) >= 0;) {
      try {
        auto& workspace = workspaces[static_cast<std::size_t>(omp_get_thread_num())];
        if (!workspace) workspace = std::make_unique<Workspace>(buckets_, params_);
        Partition& part = parts[static_cast<std::size_t>(s)];
        part.sums = fold.take();
        sketch_range(K_ * s / partitions, K_ * (s + 1) / partitions, part, *workspace);
        fold.finished(s, std::move(part.sums));
      } catch (const std::exception& e) {
#pragma omp critical(pagh_compress_failure)
        failure = e.what();
      }
    }
    if (!failure.empty()) throw Error(where, failure);
    for (const Partition& part : parts)
      timings.empty_k += part.empty_k, timings.direct_k += part.direct_k, timings.transformed_k += part.transformed_k;
    timings.sketching_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

    const auto inverse_start = std::chrono::steady_clock::now();
    std::vector<double> sketches = invert(fold, threads);
    timings.inverse_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - inverse_start).count();
    return sketches;
  }

 private:
  struct Partition {
    RangeSums<Acc> sums;  // while the range is sketched: P_t allocated with its first transformed k, the direct part with its first direct k
    index empty_k = 0, direct_k = 0, transformed_k = 0;
  };

  // One worker thread's vectors, a and b side by side (one FWHT call for both), zero between k,
  // allocated (and cleared) with the thread's first transformed k on the fused path: a thread
  // whose k all take the direct path never touches them; in 16-bit storage the Acc vectors the
  // lines are scattered into first; the direct path's staged adds.
  struct Workspace {
    Workspace(index b, const SketchParams& params)
        : buckets(b),
          scatter(kScatterInStorage ? 0 : 2 * static_cast<std::size_t>(b)),
          plan({.n = b, .batch = 2}, fwht::dtype_of<T>(),
               {.stabilization = params.stabilization, .algorithm = params.algorithm, .compute = params.compute, .threads = 1}),
          direct(b) {
      if constexpr (kScatterInStorage)
        if (params.stabilization == fwht::Stabilization::none && params.algorithm == fwht::Algorithm::folklore) product.emplace(b);
    }
    // On the fused path y starts kVectorGap elements after x's end (half of 4 KiB): rows of x and of
    // y the same distance into their vectors then fall in different L1 sets in the product pass.
    static constexpr std::size_t kVectorGap = 2048 / sizeof(T);
    T* vectors() {
      if (!vectors_) vectors_.emplace(2 * static_cast<std::size_t>(buckets) + kVectorGap);
      return vectors_->data;
    }
    index buckets;
    std::optional<AlignedBuffer<T>> vectors_;
    AlignedBuffer<Acc> scatter;
    fwht::Plan plan;
    std::optional<Product> product;  // the fused path, where it applies
    DirectAdds direct;
  };

  // The fused path's fill (fwht::BlockFill): block [offset, offset + count) of line k's vector at
  // repetition t, x from A and y from B.
  // When k's path is still open (t = 0), the fills count its lines' nonzeros and decide() takes
  // the path before anything is added: a k that is not transformed costs its fills and stages.
  struct FillContext {
    const Engine& engine;
    int t;
    index k, next;
    Path* path;           // null: decided already
    Partition* part;
    index nonzeros[2] = {0, 0};   // counted while deciding
    static void fill(void* context, int which, Acc* block, index offset, index) {
      auto& c = *static_cast<FillContext*>(context);
      const Engine& e = c.engine;
      if (which == 0)
        e.fill_block(e.a_, e.words_a_, e.tables_.bucket_a.data() + c.t * e.tables_.m, e.tables_.sign_a.data() + c.t * e.tables_.m, c, 0,
                     block, offset);
      else
        e.fill_block(e.b_, e.words_b_, e.tables_.bucket_b.data() + c.t * e.tables_.p, e.tables_.sign_b.data() + c.t * e.tables_.p, c, 1,
                     block, offset);
    }
    static bool decide(void* context) {
      auto& c = *static_cast<FillContext*>(context);
      *c.path = c.engine.choose(c.nonzeros[0], c.nonzeros[1], *c.part);
      return *c.path == Path::transform;
    }
  };
  // The whole vector at its first block (offset 0), nothing later: a dense line in position order
  // through the packed hash words (line_scatter.hpp), a sparse one in its own order.
  template <class Lines>
  void fill_block(const Lines& lines, const std::vector<std::vector<std::uint32_t>>& words, const std::uint32_t* bucket,
                  const std::int8_t* sign, FillContext& c, int which, Acc* block, index offset) const {
    if (offset != 0) return;
    index counted = 0;
    if constexpr (Lines::kCountsKnown) {
      if (const std::uint32_t* w = words_of(words, c.t)) scatter_sparse_words(lines, c.k, w, block);
      else scatter_sparse(lines, c.k, bucket, sign, block);
      counted = lines.nnz(c.k);
    } else {
      const std::vector<std::uint32_t>& w = words[static_cast<std::size_t>(c.t)];
      const auto* next = c.next < 0 ? nullptr : lines.line(c.next);
      const std::vector<std::uint32_t>& marked = (which == 0 ? marked_a_ : marked_b_)[static_cast<std::size_t>(c.t)];
      if (!marked.empty()) {
        counted = c.path != nullptr ? scatter_dense_words<true, true>(lines.line(c.k), next, marked.data(), lines.length, block)
                                    : scatter_dense_words<false, true>(lines.line(c.k), next, marked.data(), lines.length, block);
      } else if (w.empty()) {
        counted = scatter_dense(lines.line(c.k), next, BucketOrder{}, bucket, sign, lines.length, block);
      } else if (c.path != nullptr) {
        counted = scatter_dense_words<true>(lines.line(c.k), next, w.data(), lines.length, block);
      } else {
        scatter_dense_words<false>(lines.line(c.k), next, w.data(), lines.length, block);
      }
    }
    if (c.path != nullptr) c.nonzeros[which] = counted;
  }

  // Whether a k's transforms take fwht::TransformProduct (the fused path).
  bool fused() const {
    return kScatterInStorage && params_.stabilization == fwht::Stabilization::none && params_.algorithm == fwht::Algorithm::folklore;
  }

  // A dense line's scatter stores each bucket's first term (first_marked_words) where a vector
  // takes at least this much: its lines then miss L2 often on Zen 3 (x, y and P take 384 KiB of
  // its 512 KiB L2 from 2^14 f64), where a store saves the read. On vectors of 64 KiB it lost
  // (its ~6% mispredicted branches against an L2 hit; bench/NOTES.md, "CPU sketch").
  static constexpr index kStoreFirstBytes = index{128} << 10;

  // Dense lines: the fused path's packed hash words, the other path's bucket orders. Sparse lines:
  // the packed words on either path (their scatter and the direct path's terms read one word per
  // position, one cache miss where a bucket table and a sign table were two).
  void build_bucket_orders() {
    for (int t = 0; t < d_; ++t) {
      const std::uint32_t* ba = tables_.bucket_a.data() + t * tables_.m;
      const std::uint32_t* bb = tables_.bucket_b.data() + t * tables_.p;
      const std::int8_t* sa = tables_.sign_a.data() + t * tables_.m;
      const std::int8_t* sb = tables_.sign_b.data() + t * tables_.p;
      if (LinesA::kCountsKnown || fused()) words_a_.push_back(hash_words(ba, sa, tables_.m, buckets_));
      else order_a_.push_back(bucket_order(ba, sa, tables_.m, K_));
      if (LinesB::kCountsKnown || fused()) words_b_.push_back(hash_words(bb, sb, tables_.p, buckets_));
      else order_b_.push_back(bucket_order(bb, sb, tables_.p, K_));
      const bool store_first = fused() && buckets_ * static_cast<index>(sizeof(T)) >= kStoreFirstBytes;
      marked_a_.push_back(!LinesA::kCountsKnown && store_first ? first_marked_words(words_a_.back(), buckets_) : std::vector<std::uint32_t>{});
      marked_b_.push_back(!LinesB::kCountsKnown && store_first ? first_marked_words(words_b_.back(), buckets_) : std::vector<std::uint32_t>{});
    }
  }

  // Scatters line k of A into xa and of B into xb at repetition t; returns their nonzeros. `next`:
  // the k scattered next (-1: none), whose dense lines are prefetched meanwhile.
  std::pair<index, index> scatter_pair(int t, index k, index next, Acc* xa, Acc* xb) const {
    return {scatter_line(a_, order_a_, words_a_, tables_.bucket_a.data() + t * tables_.m, tables_.sign_a.data() + t * tables_.m, t, k, next, xa),
            scatter_line(b_, order_b_, words_b_, tables_.bucket_b.data() + t * tables_.p, tables_.sign_b.data() + t * tables_.p, t, k, next, xb)};
  }
  template <class Lines>
  static index scatter_line(const Lines& lines, const std::vector<BucketOrder>& orders, const std::vector<std::vector<std::uint32_t>>& words,
                            const std::uint32_t* bucket, const std::int8_t* sign, int t, index k, index next, Acc* out) {
    if constexpr (Lines::kCountsKnown) {
      if (const std::uint32_t* w = words_of(words, t)) scatter_sparse_words(lines, k, w, out);
      else scatter_sparse(lines, k, bucket, sign, out);
      return lines.nnz(k);
    } else {
      return scatter_dense(lines.line(k), next < 0 ? nullptr : lines.line(next), orders[static_cast<std::size_t>(t)], bucket, sign,
                           lines.length, out);
    }
  }

  // k's path from its lines' nonzeros, counted in part.
  Path choose(index na, index nb, Partition& part) const {
    const Path path = na == 0 || nb == 0 ? Path::empty : take_direct_path(na, nb, buckets_, params_.hybrid) ? Path::direct : Path::transform;
    ++(path == Path::empty ? part.empty_k : path == Path::direct ? part.direct_k : part.transformed_k);
    return path;
  }
  double* direct_of(Partition& part, int t) const {
    const auto b = static_cast<std::size_t>(buckets_);
    return part.sums.direct_at(static_cast<std::size_t>(t) * b, b * static_cast<std::size_t>(d_));
  }
  Acc* spectrum_of(Partition& part, int t) const {
    const auto b = static_cast<std::size_t>(buckets_);
    return part.sums.spectrum_at(static_cast<std::size_t>(t) * b, b * static_cast<std::size_t>(d_));
  }

  // sketch_range on the fused path (TransformProduct leaves the workspace's vectors zero, too).
  void sketch_range_fused(index k_begin, index k_end, Partition& part, Workspace& w) {
    const auto b = static_cast<std::size_t>(buckets_);
    for (int t = 0; t < d_; ++t) {
      for (index k = k_begin; k < k_end; ++k) {
        Path& path = paths_[static_cast<std::size_t>(k)];
        bool deciding = t == 0;
        if constexpr (LinesA::kCountsKnown && LinesB::kCountsKnown)
          if (deciding) path = choose(a_.nnz(k), b_.nnz(k), part), deciding = false;
        if (!deciding && path == Path::empty) continue;
        if (!deciding && path == Path::direct) {
          add_outer_product(t, k, ahead(k, k_end), direct_of(part, t), w.direct);
          continue;
        }
        Acc* P = spectrum_of(part, t);
        FillContext context{*this, t, k, next_k(t, k, k_begin, k_end), deciding ? &path : nullptr, &part};
        if constexpr (LinesA::kCountsKnown) context.nonzeros[0] = a_.nnz(k);
        if constexpr (LinesB::kCountsKnown) context.nonzeros[1] = b_.nnz(k);
        if constexpr (kScatterInStorage)
          w.product->accumulate(P, reinterpret_cast<Acc*>(w.vectors()),
                                reinterpret_cast<Acc*>(w.vectors()) + b + Workspace::kVectorGap,
                                {&FillContext::fill, &context, deciding ? &FillContext::decide : nullptr});
        if (deciding && path == Path::direct) add_outer_product(t, k, ahead(k, k_end), direct_of(part, t), w.direct);
      }
    }
    w.direct.target(nullptr);  // the range's staged adds, before its buffers are summed
  }

  // Inner indices [k_begin, k_end): part.spectrum += sum_k (H a_k) . (H b_k), part.direct += thin
  // outer products. Leaves the workspace's vectors zero (off the fused path).
  void sketch_range(index k_begin, index k_end, Partition& part, Workspace& w) {
    if (w.product) return sketch_range_fused(k_begin, k_end, part, w);
    const auto b = static_cast<std::size_t>(buckets_);
    T* va = w.vectors();
    T* vb = va + b;
    Acc* xa = kScatterInStorage ? reinterpret_cast<Acc*>(va) : w.scatter.data;
    Acc* xb = xa + b;
    for (int t = 0; t < d_; ++t) {
      for (index k = k_begin; k < k_end; ++k) {
        Path& path = paths_[static_cast<std::size_t>(k)];
        bool scattered = false;
        if (t == 0) {
          index na = 0, nb = 0;
          if constexpr (LinesA::kCountsKnown && LinesB::kCountsKnown) {
            na = a_.nnz(k), nb = b_.nnz(k);
          } else {
            std::tie(na, nb) = scatter_pair(t, k, next_k(t, k, k_begin, k_end), xa, xb);
            scattered = true;
          }
          path = choose(na, nb, part);
          if (scattered && path != Path::transform) std::fill(xa, xa + 2 * b, Acc{0});
        }
        if (path == Path::empty) continue;
        if (path == Path::direct) {
          add_outer_product(t, k, ahead(k, k_end), direct_of(part, t), w.direct);
          continue;
        }
        if (!scattered) scatter_pair(t, k, next_k(t, k, k_begin, k_end), xa, xb);
        Acc* P = spectrum_of(part, t);
        if constexpr (kScatterInStorage) {
          w.plan.execute(std::span<T>(va, 2 * b));
          multiply_accumulate_clear(P, va, vb, buckets_);
        } else {
          for (std::size_t h = 0; h < 2 * b; ++h) va[h] = T(xa[h]), xa[h] = Acc{0};
          w.plan.execute(std::span<T>(va, 2 * b));
          for (std::size_t h = 0; h < b; ++h) P[h] += static_cast<float>(va[h]) * static_cast<float>(vb[h]);
        }
      }
    }
    w.direct.target(nullptr);
  }

  // The k scattered after k at repetition t in [k_begin, k_end) (a guess: it may take another path).
  index next_k(int t, index k, index k_begin, index k_end) const {
    if (k + 1 < k_end) return k + 1;
    return t + 1 < d_ ? k_begin : -1;
  }

  // Repetition t's packed hash words of one side, or null where there are none.
  static const std::uint32_t* words_of(const std::vector<std::vector<std::uint32_t>>& words, int t) {
    return static_cast<std::size_t>(t) < words.size() && !words[static_cast<std::size_t>(t)].empty()
               ? words[static_cast<std::size_t>(t)].data() : nullptr;
  }

  // The k whose hash words a direct k prefetches (-1: none): far enough ahead that the misses of a
  // dozen k are in flight at once (a thin k's terms take less time than one miss; 16 ahead was
  // faster than 4 or 1 on Zen 3, bench/NOTES.md).
  static constexpr index kWordsAhead = 16;
  static index ahead(index k, index k_end) { return k + kWordsAhead < k_end ? k + kWordsAhead : -1; }

  // c_t[h1(i) XOR h2(j)] += s1(i) s2(j) A_ik B_kj for the nonzeros of column k of A and row k of B,
  // in this order through adds (direct_adds.hpp: the same bits as adding them here). Through the
  // packed hash words where both sides have them (one miss per index; the words of sparse line
  // `ahead` prefetched meanwhile), else through the tables.
  void add_outer_product(int t, index k, index ahead, double* c, DirectAdds& adds) const {
    adds.target(c);
    const std::uint32_t* wa = words_of(words_a_, t);
    const std::uint32_t* wb = words_of(words_b_, t);
    if (wa != nullptr && wb != nullptr) {
      if (ahead >= 0) {
        if constexpr (LinesA::kCountsKnown) prefetch_words(a_, ahead, wa);
        if constexpr (LinesB::kCountsKnown) prefetch_words(b_, ahead, wb);
      }
      a_.for_each(k, [&](index i, double a) {
        const std::uint32_t wi = wa[i];
        const double ai = sign_value(wi) * a;
        const std::uint32_t hi = wi & 0x7FFFFFFFu;
        b_.for_each(k, [&](index j, double b) {
          const std::uint32_t wj = wb[j];
          adds.add(hi ^ (wj & 0x7FFFFFFFu), ai * (sign_value(wj) * b));
        });
      });
      return;
    }
    a_.for_each(k, [&](index i, double a) {
      const double ai = tables_.s1(t, i) * a;
      const std::uint32_t hi = tables_.h1(t, i);
      b_.for_each(k, [&](index j, double b) { adds.add(hi ^ tables_.h2(t, j), ai * (tables_.s2(t, j) * b)); });
    });
  }

  // The ranges' sums (folded in order by the ranges' threads, the last wave here), then one inverse transform per
  // repetition: c_t = H P_t / b plus the direct parts. No transformed k: the spectrum is zero and its
  // inverse adds +0.0 (the same bits), so both are skipped.
  std::vector<double> invert(OrderedFold<Acc>& fold, int threads) const {
    fold.fold_rest(threads);
    const std::size_t total = static_cast<std::size_t>(buckets_) * static_cast<std::size_t>(d_);
    std::vector<double> sketches = std::move(fold.direct());
    if (sketches.empty()) assign_zeroed(sketches, total);
    if (!fold.transformed()) return sketches;
    auto& spectrum = fold.spectrum();
    fwht::Plan inverse({.n = buckets_, .batch = d_}, fwht::dtype_of<Acc>(),
                       {.normalization = fwht::Normalization::inverse, .stabilization = params_.stabilization,
                        .algorithm = params_.algorithm, .threads = threads});
    inverse.execute(std::span<Acc>(spectrum.data(), total));
    for (std::size_t h = 0; h < total; ++h) sketches[h] += static_cast<double>(spectrum[h]);
    return sketches;
  }

  const LinesA& a_;
  const LinesB& b_;
  index K_;
  SketchParams params_;
  index buckets_;
  const HashTables& tables_;
  int d_;
  std::vector<BucketOrder> order_a_, order_b_;              // per repetition, off the fused path
  std::vector<std::vector<std::uint32_t>> words_a_, words_b_;  // per repetition: dense lines on it, sparse lines always
  std::vector<std::vector<std::uint32_t>> marked_a_, marked_b_;  // per repetition: dense lines on it (first_marked_words)
  std::vector<Path> paths_;  // per k, decided at t = 0 by the range that owns k
};

}  // namespace pagh::cpu_sketch

#pragma GCC pop_options
