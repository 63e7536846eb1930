// pass_floor: the copy floors of the access patterns of the CUDA FWHT's passes. Each kernel moves
// one f32 transform of 2^L elements in the tiles and at the occupancy of a pass of fast_pass.cuh -
// blocks of 256 threads holding 2^14 elements, 64 loads in flight per thread, then 64 stores - but
// computes nothing (and loads with plain warp-coalesced loads where first passes use cp.async): "contiguous" is a first pass's tile (2^14 consecutive elements), "rows of 2^w" a
// strided pass's tile (2^(14-w) rows of 2^w columns, rows 2^(L-14+w) elements apart). Dynamic
// shared memory (unused) sets the blocks per SM as the passes' register and shared-memory needs
// do: 64 KiB gives 3, 100 KiB gives 2. Prints the median of 20 timings (CUDA events) next to
// cudaMemcpy of the same bytes; two buffer pairs rotate (each 2^L x 4 bytes, above L2 from 2^24).
// Three more rows take a first pass's contiguous tiles through a cluster of two blocks as the
// cluster passes do (cluster_copy): where the cluster pass's time over the contiguous floor goes.
//   pass_floor [L]   (22 <= L <= 30, default 25)
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "pass_floor: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(70);
  }
}

template <int W>
__global__ void __launch_bounds__(256) strided_copy(const float* __restrict__ in, float* __restrict__ out, int s) {
  // Block = column block (2^(s - W) of them span the rows of 2^s elements; the 2^(14 - W) rows of
  // a tile span the transform). Thread t: column t mod 2^W, rows 64 (t >> W) + m, as in round 1.
  const int t = threadIdx.x;
  const long long first = (static_cast<long long>(blockIdx.x) << W) + (t & ((1 << W) - 1)) +
                          (static_cast<long long>((t >> W) << 6) << s);
  float v[64];
#pragma unroll
  for (int m = 0; m < 64; ++m) v[m] = in[first + (static_cast<long long>(m) << s)];
#pragma unroll
  for (int m = 0; m < 64; ++m) out[first + (static_cast<long long>(m) << s)] = v[m];
}

__global__ void __launch_bounds__(256) contiguous_copy(const float* __restrict__ in, float* __restrict__ out) {
  const long long base = static_cast<long long>(blockIdx.x) << 14;
  float v[64];
#pragma unroll
  for (int m = 0; m < 64; ++m) v[m] = in[base + m * 256 + threadIdx.x];
#pragma unroll
  for (int m = 0; m < 64; ++m) out[base + m * 256 + threadIdx.x] = v[m];
}

// A first-pass tile of 2^14 elements finished across a cluster of two blocks, as cluster_pass.cuh
// does it (without arithmetic): registers -> own shared memory, then block `rank` reads the local
// indices [rank 2^13, (rank + 1) 2^13) of both blocks with 16-byte loads and writes 2^14 outputs.
// Mode 1: reads through distributed shared memory after a cluster barrier, as the pass does;
// mode 2: the same barriers, every read from the block's own shared memory; mode 3: no cluster
// barrier, own shared memory (a block barrier only).
template <int Mode>
__global__ void __launch_bounds__(256) cluster_copy(const float* __restrict__ in, float* __restrict__ out) {
  extern __shared__ float sm[];
  const long long base = static_cast<long long>(blockIdx.x >> 1) << 15;  // the cluster's 2^15 elements
  const int rank = static_cast<int>(blockIdx.x & 1), t = threadIdx.x;
  float v[64];
#pragma unroll
  for (int m = 0; m < 64; ++m) v[m] = in[base + (rank << 14) + m * 256 + t];
#pragma unroll
  for (int m = 0; m < 64; ++m) sm[t + (m << 8)] = v[m];
  if (Mode == 3) __syncthreads();
  else asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
  const unsigned local = static_cast<unsigned>(__cvta_generic_to_shared(sm));
  const int e0 = (rank << 13) + (t << 2);
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    unsigned from = local;
    if (Mode == 1) asm("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(from) : "r"(local), "r"(r));
#pragma unroll
    for (int q = 0; q < 8; ++q) {
      float4 x;
      const unsigned address = from + static_cast<unsigned>((e0 + q * 1024) * 4);
      if (Mode == 1)
        asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(x.x), "=f"(x.y), "=f"(x.z), "=f"(x.w) : "r"(address) : "memory");
      else
        asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(x.x), "=f"(x.y), "=f"(x.z), "=f"(x.w) : "r"(address) : "memory");
      *reinterpret_cast<float4*>(out + base + (r << 14) + e0 + q * 1024) = x;
    }
  }
  if (Mode != 3) asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// The same tile exchanged by pushing instead: once both blocks are done with their shared memory
// (a cluster barrier), each thread stores every element into the shared memory of the block that
// finishes it (word r 2^13 + e mod 2^13 of block e >> 13, r = the writer's rank; remote stores to
// the partner), a second barrier publishes them, and each block reads only its own shared memory
// and may exit at once.
__global__ void __launch_bounds__(256) cluster_push_copy(const float* __restrict__ in, float* __restrict__ out) {
  extern __shared__ float sm[];
  const long long base = static_cast<long long>(blockIdx.x >> 1) << 15;
  const int rank = static_cast<int>(blockIdx.x & 1), t = threadIdx.x;
  float v[64];
#pragma unroll
  for (int m = 0; m < 64; ++m) v[m] = in[base + (rank << 14) + m * 256 + t];
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
  const unsigned local = static_cast<unsigned>(__cvta_generic_to_shared(sm));
  unsigned remote;
  asm("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"(rank ^ 1));
#pragma unroll
  for (int m = 0; m < 64; ++m) {
    const int e = t + (m << 8);  // element e of this block's tile goes to block e >> 13
    const unsigned word = static_cast<unsigned>((rank << 13) + (e & 8191)) * 4;
    if ((m >> 5) == rank) asm volatile("st.shared.f32 [%0], %1;" ::"r"(local + word), "f"(v[m]) : "memory");
    else asm volatile("st.shared::cluster.f32 [%0], %1;" ::"r"(remote + word), "f"(v[m]) : "memory");
  }
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
  const int e0 = t << 2;
#pragma unroll
  for (int r = 0; r < 2; ++r)
#pragma unroll
    for (int q = 0; q < 8; ++q) {
      float4 x;
      const unsigned address = local + static_cast<unsigned>(((r << 13) + e0 + q * 1024) * 4);
      asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(x.x), "=f"(x.y), "=f"(x.z), "=f"(x.w) : "r"(address) : "memory");
      *reinterpret_cast<float4*>(out + base + (r << 14) + (rank << 13) + e0 + q * 1024) = x;
    }
}

template <class F>
float median_ms(F&& f) {
  cudaEvent_t a, b;
  check(cudaEventCreate(&a), "cudaEventCreate");
  check(cudaEventCreate(&b), "cudaEventCreate");
  std::vector<float> ms;
  for (int i = 0; i < 23; ++i) {
    check(cudaEventRecord(a), "cudaEventRecord");
    f(i);
    check(cudaEventRecord(b), "cudaEventRecord");
    check(cudaEventSynchronize(b), "cudaEventSynchronize");
    float x = 0;
    check(cudaEventElapsedTime(&x, a, b), "cudaEventElapsedTime");
    if (i >= 3) ms.push_back(x);  // three warm-up calls
  }
  std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return ms[ms.size() / 2];
}

template <int W>
void strided_row(float* const* in, float* const* out, int L, unsigned blocks, int smem, double memcpy_ms) {
  check(cudaFuncSetAttribute(strided_copy<W>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem), "cudaFuncSetAttribute");
  const int s = L - 14 + W;  // the stride of a pass that applies the top 14 - W stages
  const float ms = median_ms([&](int i) { strided_copy<W><<<blocks, 256, smem>>>(in[i & 1], out[i & 1], s); });
  check(cudaGetLastError(), "strided_copy");
  std::printf("rows of %3d B   %3d KiB  %8.4f  %5.2f\n", 4 << W, smem >> 10, ms, ms / memcpy_ms);
}

template <class Kernel>
void cluster_row(Kernel kernel, float* const* in, float* const* out, unsigned blocks, double memcpy_ms, const char* name) {
  constexpr int kSmem = 64 << 10;
  check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem), "cudaFuncSetAttribute");
  cudaLaunchConfig_t config{};
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim.x = 2, attribute.val.clusterDim.y = 1, attribute.val.clusterDim.z = 1;
  config.gridDim = dim3(blocks), config.blockDim = dim3(256), config.dynamicSmemBytes = kSmem;
  config.attrs = &attribute, config.numAttrs = 1;
  const float ms = median_ms([&](int i) {
    check(cudaLaunchKernelEx(&config, kernel, static_cast<const float*>(in[i & 1]), out[i & 1]), "cluster_copy");
  });
  std::printf("%-22s 64 KiB  %8.4f  %5.2f\n", name, ms, ms / memcpy_ms);
}

}  // namespace

int main(int argc, char** argv) {
  const int L = argc > 1 ? std::atoi(argv[1]) : 25;
  if (L < 22 || L > 30) {
    std::fprintf(stderr, "pass_floor: log2 n must be 22..30, got '%s'\n", argv[1]);
    return 64;
  }
  const std::size_t n = std::size_t{1} << L, bytes = n * sizeof(float);
  float *in[2], *out[2];
  for (int k = 0; k < 2; ++k) {
    check(cudaMalloc(&in[k], bytes), "cudaMalloc");
    check(cudaMalloc(&out[k], bytes), "cudaMalloc");
    check(cudaMemset(in[k], 0, bytes), "cudaMemset");
  }
  const unsigned blocks = static_cast<unsigned>(n >> 14);
  const double copy = median_ms([&](int i) {
    check(cudaMemcpyAsync(out[i & 1], in[i & 1], bytes, cudaMemcpyDeviceToDevice), "cudaMemcpyAsync");
  });
  std::printf("f32 2^%d: pattern, shared memory per block (blocks per SM), ms, x cudaMemcpy\n", L);
  std::printf("cudaMemcpy               %8.4f  1.00\n", copy);
  for (int smem : {64 << 10, 100 << 10}) {
    check(cudaFuncSetAttribute(contiguous_copy, cudaFuncAttributeMaxDynamicSharedMemorySize, smem), "cudaFuncSetAttribute");
    const float ms = median_ms([&](int i) { contiguous_copy<<<blocks, 256, smem>>>(in[i & 1], out[i & 1]); });
    check(cudaGetLastError(), "contiguous_copy");
    std::printf("contiguous      %3d KiB  %8.4f  %5.2f\n", smem >> 10, ms, ms / copy);
  }
  cluster_row(cluster_copy<1>, in, out, blocks, copy, "clusters of 2, DSMEM");
  cluster_row(cluster_copy<2>, in, out, blocks, copy, "clusters of 2, local");
  cluster_row(cluster_copy<3>, in, out, blocks, copy, "no cluster barrier");
  cluster_row(cluster_push_copy, in, out, blocks, copy, "clusters of 2, push");
  for (int smem : {64 << 10, 100 << 10}) {
    strided_row<3>(in, out, L, blocks, smem, copy);
    strided_row<4>(in, out, L, blocks, smem, copy);
    strided_row<5>(in, out, L, blocks, smem, copy);
    strided_row<6>(in, out, L, blocks, smem, copy);
  }
  for (int k = 0; k < 2; ++k) {
    cudaFree(in[k]);
    cudaFree(out[k]);
  }
  return 0;
}
