// Plain folklore stages (no stabilization) of the native types, register-blocked and cache-blocked;
// included by stages.hpp inside the instruction-set namespace (FWHT_ISA), after VectorOps.
//
// Schedule of stages [k0, k1) on a block of 2^k1 elements:
//   * a block larger than kL1Bytes is split (cache-oblivious recursion, as in FFHT): its 2^(k1-r)-element
//     sub-blocks first take all their own stages, then one radix-2^r pass applies the top r stages to
//     the whole block; r is at most kMaxRadixLog (the data vectors must stay in registers) and the
//     stages above L1 are spread evenly over the fewest such passes.
//   * within L1, the first pass (k0 = 0) loads 2^kBaseCross vectors, applies the stages below the
//     vector width inside each register (one shuffle, one sign flip, one add per stage) and
//     kBaseCross more stages across the registers, and stores them; it is also where an
//     out-of-place transform reads its input, so the copy costs no pass of its own. The remaining
//     stages take radix-2^r passes as above.
// Every butterfly is the reference's (a + b, a - b) on the same operands, and every element sees its
// stages in the reference's order, so results agree with it bit for bit whatever the blocking.
#pragma once

namespace fwht::cpu::FWHT_ISA {

template <class T>
struct PlainStages {
  using O = VectorOps<T>;
  using V = typename O::V;
  using M = typename O::M;
  static constexpr int lanes = O::lanes;
  static constexpr int lane_log = __builtin_ctz(lanes);
  // 16 data vectors need 32 registers (AVX-512); 8 fit the 16 of SSE/AVX2 with room for temporaries.
  static constexpr int kMaxRadixLog = FWHT_VECTOR_BYTES >= 64 ? 4 : 3;
  // Rows 4 KiB or more apart share one set of an 8-way L1 (64 sets of 64 bytes): more than 8 of
  // them would evict each other, so wide strides take at most radix 8.
  static constexpr index kSameSetBytes = 4096;
  static constexpr int max_radix_log(int s) {
    return (index{1} << s) * static_cast<index>(sizeof(T)) >= kSameSetBytes / 2 ? 3 : kMaxRadixLog;
  }
  static constexpr int kBaseCross = 3;
  static constexpr index kL1Bytes = 16 * 1024;  // half of a 32 KiB L1: the block and what streams past it
  static constexpr int l1_log = __builtin_ctzll(kL1Bytes / sizeof(T));

  // Where the instruction set has fused multiply-add (FWHT_FMA: the AVX2 kernels), an in-register
  // stage's signed add p + (+-v) is one fused v * (+-1) + p: the product is exact, so its single
  // rounding gives the bits of p + v and p - v, signed zeros included. It replaces a sign flip and
  // an add, and on cores whose adders and multipliers are separate pipes (AMD Zen) it runs beside
  // the cross-register stages' adds. (Subtractions in the cross stages as fused operations too were
  // no faster: bench/NOTES.md.)
#if defined(FWHT_FMA)
  static constexpr bool kFmaStages = std::is_floating_point_v<T>;
  [[gnu::always_inline]] static V fused_multiply_add(V a, V b, V c) {
    if constexpr (sizeof(T) == 8) return __builtin_ia32_vfmaddpd256(a, b, c);
    else return __builtin_ia32_vfmaddps256(a, b, c);
  }
#else
  static constexpr bool kFmaStages = false;
#endif

  // A stage of stride H < lanes inside one register. Low lanes (i & H == 0) hold A and need A + B,
  // high lanes hold B and need A - B = A + (-B); with p the partner lane, both are p + (+-v). For
  // floating types the sign flip is exact, so the sum rounds exactly as the reference's butterfly
  // (IEEE addition is commutative); integers take the blend of both results.
  // Inlined by force, as are register_stages and cross_stages: GCC otherwise calls them (per
  // vector, with every live vector of the caller spilled around the call) from the first pass.
  template <int H>
  [[gnu::always_inline]] static V register_stage(V v) {
    const V p = __builtin_shuffle(v, O::template partner<H>());
#if defined(FWHT_FMA)
    if constexpr (kFmaStages) {
      V sign;
      for (int i = 0; i < lanes; ++i) sign[i] = (i & H) ? T(-1) : T(1);
      return fused_multiply_add(v, sign, p);
    } else
#endif
    if constexpr (std::is_floating_point_v<T>) {
      M flip;
      for (int i = 0; i < lanes; ++i) flip[i] = (i & H) ? static_cast<typename O::S>(std::uint64_t{1} << (8 * sizeof(T) - 1)) : 0;
      return p + reinterpret_cast<V>(reinterpret_cast<M>(v) ^ flip);
    } else {
      return O::template low<H>() ? v + p : p - v;
    }
  }

  // Stages of strides 1, 2, 4, ... inside each register, Count of them.
  template <int Count>
  [[gnu::always_inline]] static V register_stages(V v) {
    if constexpr (Count >= 1) v = register_stage<1>(v);
    if constexpr (Count >= 2) v = register_stage<2>(v);
    if constexpr (Count >= 3) v = register_stage<4>(v);
    if constexpr (Count >= 4) v = register_stage<8>(v);
    static_assert(Count <= 4, "more in-register stages than any vector has lanes");
    return v;
  }

  // Count stages across registers v[0..2^Count): register a pairs with a + 2^t at stage t.
  template <int Count, int N>
  [[gnu::always_inline]] static void cross_stages(V (&v)[N]) {
    for (int t = 0; t < Count; ++t) {
      const int h = 1 << t;
      for (int a = 0; a < N; ++a) {
        if (a & h) continue;
        const V x = v[a];
        v[a] = x + v[a + h];
        v[a + h] = x - v[a + h];
      }
    }
  }

  // The first pass: stages [0, lane_log + Cross) on groups of 2^Cross contiguous vectors, read from
  // src and written to dst (src == dst in place).
  template <int Cross>
  static void base_pass(T* dst, const T* src, index len) {
    constexpr int R = 1 << Cross;
    for (index i = 0; i < len; i += R * lanes) {
      V v[R];
      for (int r = 0; r < R; ++r) v[r] = register_stages<lane_log>(O::load(src + i + r * lanes));
      cross_stages<Cross>(v);
      for (int r = 0; r < R; ++r) O::store(dst + i + r * lanes, v[r]);
    }
  }

  // Stages [s, s + RLog) (stride 2^s >= lanes) on columns [0, columns) of the 2^(s + RLog)-element
  // block at x (rows 2^s apart).
  template <int RLog>
  static void radix_columns(T* x, index columns, int s) {
    constexpr int R = 1 << RLog;
    const index h = index{1} << s;
    for (index j = 0; j < columns; j += lanes) {
      V v[R];
      for (int r = 0; r < R; ++r) v[r] = O::load(x + j + r * h);
      cross_stages<RLog>(v);
      for (int r = 0; r < R; ++r) O::store(x + j + r * h, v[r]);
    }
  }

  // Stages [K, L) of a 2^L-element transform within L1, the radix of each pass fixed at compile
  // time (small_transform below).
  template <int L, int K>
  static void small_stages(T* x) {
    if constexpr (K < L) {
      constexpr int cap = max_radix_log(L - 1), left = L - K, passes = (left + cap - 1) / cap, r = (left + passes - 1) / passes;
      radix_pass<r>(x, index{1} << L, K);
      small_stages<L, K + r>(x);
    }
  }

  // Stages [s, s + RLog) on every block of 2^(s + RLog) elements of x[0, len).
  template <int RLog>
  static void radix_pass(T* x, index len, int s) {
    const index h = index{1} << s;
    for (index b = 0; b < len; b += (index{1} << RLog) * h) radix_columns<RLog>(x + b, h, s);
  }

  static void columns(T* x, index count, int s, int r) {
    with_radix(r, [&]<int RLog>() { radix_columns<RLog>(x, count, s); });
  }

  // Calls f.template operator()<r>() for a run-time r in 1..kMaxRadixLog.
  template <class F>
  static void with_radix(int r, F&& f) {
    if constexpr (kMaxRadixLog >= 4)
      if (r == 4) return f.template operator()<4>();
    if (r == 3) return f.template operator()<3>();
    if (r == 2) return f.template operator()<2>();
    f.template operator()<1>();
  }

  static void radix(T* x, index len, int s, int r) {
    with_radix(r, [&]<int RLog>() { radix_pass<RLog>(x, len, s); });
  }

  // The largest group of at most max_log stages that splits `count` stages into the fewest passes as
  // evenly as possible.
  static int group(int count, int max_log) {
    const int passes = (count + max_log - 1) / max_log;
    return (count + passes - 1) / passes;
  }

  // The radix of the pass that joins a 2^k1-element block's sub-blocks, `above` stages above L1.
  // A block many times the last-level cache is streamed from memory by that pass, 2^r rows read
  // and written at once: the AVX2 kernels then give it the smallest radix of the split (FFHT's
  // order), the fewest streams. Measured on Zen 3 (32 MiB L3; bench/NOTES.md): faster at 1-2 GiB,
  // slower or the same at 128-256 MiB, where it can add a pass over a block beyond the L3.
  // Elsewhere the radix is spread evenly (group).
  static constexpr index kMemoryBlockBytes = index{512} << 20;
  static int top_radix_log(int above, int k1) {
    const int cap = max_radix_log(k1 - 1);
    if (FWHT_VECTOR_BYTES == 32 && (index{1} << k1) * static_cast<index>(sizeof(T)) > kMemoryBlockBytes) {
      const int passes = (above + cap - 1) / cap;
      return above - (passes - 1) * cap;
    }
    return group(above, cap);
  }

  // Stages [k0, k1) of the 2^k1-element block at x; when k0 == 0 the block is read from src.
  static void block(T* x, const T* src, int k0, int k1) {
    const int above = k1 - (k0 > l1_log ? k0 : l1_log);
    if (above > 0 && k1 - k0 > kMaxRadixLog) {
      const int r = top_radix_log(above, k1), sub = k1 - r;
      const index size = index{1} << k1, step = index{1} << sub;
      for (index i = 0; i < size; i += step) block(x + i, src + i, k0, sub);
      radix(x, size, sub, r);
      return;
    }
    const index size = index{1} << k1;
    int k = k0;
    if (k0 == 0) {
      const int cross = k1 - lane_log < kBaseCross ? k1 - lane_log : kBaseCross;
      if (cross == 3) base_pass<3>(x, src, size);
      if (cross == 2) base_pass<2>(x, src, size);
      if (cross == 1) base_pass<1>(x, src, size);
      if (cross == 0) base_pass<0>(x, src, size);
      k = lane_log + cross;
    }
    for (int r; k < k1; k += r) {
      r = group(k1 - k, max_radix_log(k1 - 1));
      radix(x, size, k, r);
    }
  }

  // The transform-product kernel (fwht/transform_product.hpp). Stages [0, k1) of the 2^k1-element
  // block at x (element `offset` of vector `which`) whose values fill writes one L1 block at a time,
  // right before that block's own stages: the same blocking as block(), so the values are written
  // where the first pass reads them.
  static void filled_block(T* x, index offset, int k1, int which, const BlockFill<T>& fill) {
    const int above = k1 - l1_log;
    if (above > 0 && k1 > kMaxRadixLog) {
      const int r = group(above, max_radix_log(k1 - 1)), sub = k1 - r;
      const index size = index{1} << k1, step = index{1} << sub;
      for (index i = 0; i < size; i += step) filled_block(x + i, offset + i, sub, which, fill);
      radix(x, size, sub, r);
      return;
    }
    fill.fn(fill.context, which, x, offset, index{1} << k1);
    block(x, x, 0, k1);
  }

  // The last RLog stages (stride 2^s) of x and of y, column by column, multiplied and added to P;
  // H x and H y are never stored: x and y are zeroed instead, while their lines are in L1, for the
  // caller's next fills.
  template <int RLog>
  static void product_columns(T* P, T* x, T* y, int s) {
    constexpr int R = 1 << RLog;
    const index h = index{1} << s;
    const V zero{};
    for (index j = 0; j < h; j += lanes) {
      V a[R], b[R];
      for (int r = 0; r < R; ++r) a[r] = O::load(x + j + r * h), O::store(x + j + r * h, zero);
      cross_stages<RLog>(a);
      for (int r = 0; r < R; ++r) b[r] = O::load(y + j + r * h), O::store(y + j + r * h, zero);
      cross_stages<RLog>(b);
      for (int r = 0; r < R; ++r) O::store(P + j + r * h, O::load(P + j + r * h) + a[r] * b[r]);
    }
  }

  // The product pass touches 2^r rows each of x, y and P; rows 4 KiB or more apart share one L1
  // set (8 ways) where x, y and P lie a multiple of 4 KiB apart, so at such strides it takes a
  // single stage (6 rows), the rest going to the passes before it, except where at most
  // kProductRadixLog stages lie above the L1 blocks: it then takes them all, the blocks below it
  // are whole L1 blocks and the pass that would join them is not needed (measured on Zen 3 with y
  // offset from x by half of 4 KiB: -7..-10% sketch time at b = 2^13 f64; three stages, 24 rows,
  // lost to set conflicts).
  static constexpr int kProductRadixLog = 2;

  // Needs 2^L > lanes (the last group of stages has a stride of at least one vector).
  static void product(T* P, T* x, T* y, int L, const BlockFill<T>& fill) {
    const int above_l1 = L - l1_log;
    const int wide = (index{1} << (L - 1)) * static_cast<index>(sizeof(T)) < kSameSetBytes ? max_radix_log(L - 1)
                     : above_l1 >= 1 && above_l1 <= kProductRadixLog                     ? above_l1
                                                                                         : 1;
    // What the base pass leaves (all of it within L1), at least one stage and at most one radix pass.
    const int left = L - lane_log - kBaseCross, most = wide < L - lane_log ? wide : L - lane_log;
    const int r = left < 1 ? 1 : left > most ? most : left;
    const int sub = L - r;
    const index size = index{1} << L, step = index{1} << sub;
    for (index i = 0; i < size; i += step) filled_block(x + i, i, sub, 0, fill);
    for (index i = 0; i < size; i += step) filled_block(y + i, i, sub, 1, fill);
    if (fill.wanted != nullptr && !fill.wanted(fill.context)) {
      __builtin_memset(x, 0, static_cast<std::size_t>(size) * sizeof(T));
      __builtin_memset(y, 0, static_cast<std::size_t>(size) * sizeof(T));
      return;
    }
    with_radix(r, [&]<int RLog>() { product_columns<RLog>(P, x, y, sub); });
  }

  // Requires k0 == 0 (then x may differ from src) or 2^k0 >= lanes (then src == x), and
  // 2^k1 >= lanes (smaller transforms take folklore_stages).
  static void run(T* x, const T* src, index len, int k0, int k1) {
    const index size = index{1} << k1;
    for (index b = 0; b < len; b += size) block(x + b, src + b, k0, k1);
  }
};

// The entry point of Kernels::plain: stages [k0, k1) on every 2^k1 block of len elements, reading
// from src (which may equal x) when k0 == 0.
template <class T>
void plain_stages(T* x, const T* src, index len, int k0, int k1) {
  using P = PlainStages<T>;
  if ((index{1} << k1) < P::lanes) {
    if (src != x) __builtin_memcpy(x, src, static_cast<std::size_t>(len) * sizeof(T));
    folklore_stages<T, Stabilization::none>(x, nullptr, len, k0, k1);
    return;
  }
  // Blocks that the first pass transforms whole (up to 2^kBaseCross vectors): straight to it.
  if (k0 == 0 && k1 <= P::lane_log + P::kBaseCross) {
    switch (k1 - P::lane_log) {
      case 0: return P::template base_pass<0>(x, src, len);
      case 1: return P::template base_pass<1>(x, src, len);
      case 2: return P::template base_pass<2>(x, src, len);
      default: return P::template base_pass<3>(x, src, len);
    }
  }
  P::run(x, src, len, k0, k1);
}

// Kernels::small[L]: the whole transform of 2^L elements, from in to out (Kernels::SmallFn). The
// same butterflies in the same order per element as plain_stages, so the same bits.
template <class T, int L>
void small_transform(const void* in, void* out) {
  using P = PlainStages<T>;
  constexpr index n = index{1} << L;
  T* x = static_cast<T*>(out);
  const T* src = static_cast<const T*>(in);
  if constexpr (n < P::lanes) {
    if (src != x) __builtin_memcpy(x, src, static_cast<std::size_t>(n) * sizeof(T));
    folklore_stages<T, Stabilization::none>(x, nullptr, n, 0, L);
  } else {
    constexpr int cross = L - P::lane_log < P::kBaseCross ? L - P::lane_log : P::kBaseCross;
    P::template base_pass<cross>(x, src, n);
    P::template small_stages<L, P::lane_log + cross>(x);
  }
}

template <class T>
void small_transforms(SmallFn* table) {
  [table]<int... L>(std::integer_sequence<int, L...>) {
    ((table[L] = &small_transform<T, L>), ...);
  }(std::make_integer_sequence<int, kSmallLogs>{});
}

// The entry point of Kernels::plain_product: P += (H x) . (H y), x and y written through fill.
template <class T>
void plain_product(T* P, T* x, T* y, int L, const BlockFill<T>& fill) {
  using P_ = PlainStages<T>;
  if (L > P_::lane_log) return P_::product(P, x, y, L, fill);
  const index n = index{1} << L;  // shorter than two vectors: whole vectors, one lane at a time
  fill.fn(fill.context, 0, x, 0, n);
  fill.fn(fill.context, 1, y, 0, n);
  if (fill.wanted == nullptr || fill.wanted(fill.context)) {
    folklore_stages<T, Stabilization::none>(x, nullptr, n, 0, L);
    folklore_stages<T, Stabilization::none>(y, nullptr, n, 0, L);
    for (index i = 0; i < n; ++i) P[i] = P[i] + x[i] * y[i];
  }
  for (index i = 0; i < n; ++i) x[i] = T(0), y[i] = T(0);
}

// The entry point of Kernels::plain_columns: stages [s, s + r) on columns [0, columns) of the
// 2^(s+r)-element block at x (2^s >= lanes, columns a multiple of the lanes, r <= 3).
template <class T>
void plain_columns(T* x, index columns, int s, int r) {
  PlainStages<T>::columns(x, columns, s, r);
}

}  // namespace fwht::cpu::FWHT_ISA
