// The fused pair of strided passes (fused_pass): two passes of the register-tile kernel in one
// persistent launch, the second reading the first's output from L2 (schedule.hpp, make_fused; the
// tile itself is fast_pass.cuh's run_tile).
#pragma once

#include "cuda/fast_pass.cuh"

namespace fwht::cuda {

// Two strided passes in one persistent launch, through L2 (see fast_pass.hpp, FusedArgs). Tickets
// are taken in order from an atomic counter (one ticket ahead, so that its latency overlaps the
// current tile): group j holds strip j's A tiles (j < strips) and then strip (j - lag)'s B tiles
// (j >= lag), and a B tile waits, spinning on its strip's counter, until all A tiles of its strip
// are stored. A ticket is only taken by a running block and A tiles never wait, so the wait always
// ends, whatever the grid size.
template <class Tr, int Eps, bool Last, Stabilization St>
__global__ void __launch_bounds__(kFastThreads, fast_min_blocks<Tr, St, Eps, false>())
    fused_pass(const FusedArgs f) {
  pass_prologue<false>();
  using C = typename Tr::C;
  C* sm = tile_shared<Eps, C, kWords64<Tr, St>, fast_padded(Eps + 8, false)>();
  __shared__ int ticket_shared[2];
  const std::int64_t n2 = f.tiles_a, n3 = f.tiles_b, group = n2 + n3;
  const std::int64_t lag = f.lag < f.strips ? f.lag : f.strips;
  const std::int64_t total = f.strips * group;
  const std::int64_t head = lag * n2, middle = (f.strips - lag) * group;
  if (threadIdx.x == 0) ticket_shared[0] = static_cast<int>(atomicAdd(f.counters, 1u));
  for (int slot = 0;; slot ^= 1) {
    __syncthreads();  // ticket_shared[slot] is written; the previous tile is done with shared memory
    const std::int64_t ticket = ticket_shared[slot];
    if (ticket >= total) break;
    if (threadIdx.x == 0) ticket_shared[slot ^ 1] = static_cast<int>(atomicAdd(f.counters, 1u));
    std::int64_t strip, index;
    bool second;
    if (ticket < head) {  // strips [0, lag): A only
      strip = ticket / n2, index = ticket - strip * n2, second = false;
    } else if (ticket < head + middle) {  // A(j), then B(j - lag)
      const std::int64_t r = ticket - head;
      const std::int64_t j = r / group + lag;
      index = r - (j - lag) * group;
      second = index >= n2;
      strip = second ? j - lag : j;
      if (second) index -= n2;
    } else {  // B only
      const std::int64_t r = ticket - head - middle;
      strip = f.strips - lag + r / n3, index = r % n3, second = true;
    }
    const std::int64_t tr = strip / f.strips_per_transform;
    const std::int64_t column0 = (strip - tr * f.strips_per_transform) * f.strip_columns;
    if (!second) {
      const FastArgs& a = f.a;
      const std::int64_t per_band = f.strip_columns >> a.w;
      const std::int64_t band = index / per_band, cb = index - band * per_band;
      const std::int64_t base = tr * a.n + (band << (a.s + a.g)) + column0 + (cb << a.w);
      if (f.hints) run_tile<Tr, Eps, false, false, 1, St>(a, base, sm);
      else run_tile<Tr, Eps, false, false, 0, St>(a, base, sm);
      __syncthreads();  // every thread's stores are issued
      if (threadIdx.x == 0) {
        __threadfence();
        atomicAdd(f.counters + 1 + strip, 1u);
      }
    } else {
      const FastArgs& b = f.b;
      if (threadIdx.x == 0) {
        const unsigned* done = f.counters + 1 + strip;
        unsigned seen;
        for (;;) {
          asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(seen) : "l"(done) : "memory");
          if (seen >= static_cast<unsigned>(n2)) break;
          __nanosleep(256);
        }
        __threadfence();
      }
      __syncthreads();
      const std::int64_t per_row = f.strip_columns >> b.w;  // column blocks per value of the A rows
      const std::int64_t rows_a = index / per_row, cb = index - rows_a * per_row;
      const std::int64_t base = tr * b.n + (rows_a << f.a.s) + column0 + (cb << b.w);
      if (f.hints) run_tile<Tr, Eps, false, Last, 2, St>(b, base, sm);
      else run_tile<Tr, Eps, false, Last, 3, St>(b, base, sm);
    }
  }
}

}  // namespace fwht::cuda
