// Hash tables from the cuRAND device generator: the mapping of hashing.hpp, word for word. The
// host (hashing.cpp) and device Philox4_32_10 generators give identical bits for one seed and
// offset, so the GPU and CPU backends sketch with the same tables (tested bit for bit).
#include <curand.h>

#include <bit>
#include <memory>
#include <string>
#include <type_traits>

#include "hashing/device_tables.hpp"
#include "pagh/error.hpp"

namespace pagh::cuda {
namespace {

constexpr const char* kWhere = "pagh::cuda::draw_device_tables";

void check_curand(curandStatus_t status, const char* call) {
  if (status != CURAND_STATUS_SUCCESS)
    throw Error(kWhere, std::string(call) + " failed with cuRAND status " + std::to_string(status));
}

struct GeneratorDeleter {
  void operator()(curandGenerator_t g) const { curandDestroyGenerator(g); }
};

// One repetition's words u[0 .. 2(m+p)) -> h1, s1, h2, s2 (hashing.hpp).
__global__ void map_words(const std::uint32_t* __restrict__ words, std::int64_t m, std::int64_t p, int log2b,
                          std::uint32_t* __restrict__ bucket_a, std::int8_t* __restrict__ sign_a,
                          std::uint32_t* __restrict__ bucket_b, std::int8_t* __restrict__ sign_b) {
  const std::int64_t n = m + p;
  for (std::int64_t x = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; x < n; x += std::int64_t{gridDim.x} * blockDim.x) {
    const bool is_a = x < m;
    const std::int64_t i = is_a ? x : x - m;
    const std::uint32_t hw = words[is_a ? i : 2 * m + i];
    const std::uint32_t sw = words[is_a ? m + i : 2 * m + p + i];
    const std::uint32_t bucket = log2b == 0 ? 0u : hw >> (32 - log2b);
    const std::int8_t sign = (sw >> 31) ? -1 : 1;
    if (is_a) bucket_a[i] = bucket, sign_a[i] = sign;
    else bucket_b[i] = bucket, sign_b[i] = sign;
  }
}

unsigned grid_for(std::int64_t n) { return static_cast<unsigned>(std::min<std::int64_t>((n + 255) / 256, 4096)); }

}  // namespace

DeviceTables draw_device_tables(std::uint64_t seed, int repetitions, std::int64_t m, std::int64_t p, std::int64_t buckets,
                                cudaStream_t stream) {
  if (buckets < 1 || (buckets & (buckets - 1)) != 0 || buckets > (std::int64_t{1} << 32))
    throw Error(kWhere, "sketch length " + std::to_string(buckets) + " is not a power of two <= 2^32");
  if (repetitions < 1 || m < 0 || p < 0) throw Error(kWhere, "invalid dimensions or repetitions");
  DeviceTables tables;
  tables.m = m, tables.p = p, tables.buckets = buckets, tables.repetitions = repetitions;
  const auto dm = static_cast<std::size_t>(repetitions * m), dp = static_cast<std::size_t>(repetitions * p);
  tables.bucket_a = DeviceArray<std::uint32_t>(dm, "hash table h1");
  tables.sign_a = DeviceArray<std::int8_t>(dm, "hash table s1");
  tables.bucket_b = DeviceArray<std::uint32_t>(dp, "hash table h2");
  tables.sign_b = DeviceArray<std::int8_t>(dp, "hash table s2");
  const auto rep_words = static_cast<std::size_t>(2 * (m + p));
  if (rep_words == 0) return tables;

  curandGenerator_t created = nullptr;
  check_curand(curandCreateGenerator(&created, CURAND_RNG_PSEUDO_PHILOX4_32_10), "curandCreateGenerator");
  std::unique_ptr<std::remove_pointer_t<curandGenerator_t>, GeneratorDeleter> generator(created);
  check_curand(curandSetStream(created, stream), "curandSetStream");
  check_curand(curandSetPseudoRandomGeneratorSeed(created, seed), "curandSetPseudoRandomGeneratorSeed");
  DeviceArray<std::uint32_t> words(rep_words, "hash words");
  const int log2b = std::countr_zero(static_cast<std::uint64_t>(buckets));
  for (int t = 0; t < repetitions; ++t) {
    check_curand(curandSetGeneratorOffset(created, static_cast<unsigned long long>(t) * rep_words), "curandSetGeneratorOffset");
    check_curand(curandGenerate(created, words.data(), rep_words), "curandGenerate");
    map_words<<<grid_for(m + p), 256, 0, stream>>>(words.data(), m, p, log2b, tables.bucket_a.data() + t * m,
                                                   tables.sign_a.data() + t * m, tables.bucket_b.data() + t * p,
                                                   tables.sign_b.data() + t * p);
    check_launch("map_words", kWhere);
  }
  // `words` is freed on return while the kernels may still run: keep the stream ordered first.
  PAGH_CUDA_CHECK(cudaStreamSynchronize(stream), kWhere);
  return tables;
}

}  // namespace pagh::cuda
