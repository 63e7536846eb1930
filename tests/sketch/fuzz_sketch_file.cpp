// libFuzzer target for the sketch loader (run by run_fuzz_sketch.sh): any bytes, as a file, must
// either load or throw pagh::Error; a crash, a sanitizer report, another exception type, an
// allocation beyond the limit, or a loaded product that breaks an invariant (checked below with
// abort) is a finding. The seeds (written by the script) are crafted files that pass the checksum,
// so that mutations reach the header's validation rather than dying at the checksum.
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "pagh/error.hpp"
#include "sketch/compressed_product.hpp"
#include "sketch/memory_limit.hpp"

namespace {

void require(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "invariant broken: %s\n", what);
    std::abort();
  }
}

// The loader reads a path: each input goes through one file of this process.
const std::string& scratch_path() {
  // In memory when /dev/shm exists: a file per input on disk would dominate the run.
  static const std::string path = std::string(::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp") + "/pagh_fuzz_sketch_" +
                                  std::to_string(::getpid()) + ".pagh";
  return path;
}

constexpr std::uint64_t kLimit = std::uint64_t{32} << 20;  // below libFuzzer's -rss_limit_mb

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  {
    std::FILE* out = std::fopen(scratch_path().c_str(), "wb");
    if (!out) std::abort();
    if (size > 0 && std::fwrite(data, 1, size, out) != size) std::abort();
    std::fclose(out);
  }
  try {
    const pagh::CompressedProduct product = pagh::CompressedProduct::load(scratch_path(), {.max_bytes = kLimit});
    require(product.rows() >= 0 && product.cols() >= 0, "dimensions are non-negative");
    require(product.repetitions() >= 1 && product.repetitions() <= 1024, "1 <= d <= 1024");
    const auto b = product.buckets();
    require(b >= 1 && (b & (b - 1)) == 0, "b is a power of two");
    require(size == 88 + 8 * static_cast<std::size_t>(b) * static_cast<std::size_t>(product.repetitions()) + 8,
            "the file's size is what its header claims");
    for (int t = 0; t < product.repetitions(); ++t)
      for (double c : product.sketch(t)) require(std::isfinite(c), "sketch values are finite");
    require(std::isfinite(product.frobenius_estimate()), "the Frobenius estimate is finite");
    if (product.rows() > 0 && product.cols() > 0) {
      require(std::isfinite(product.estimate(0, 0)), "an estimate is finite");
      require(std::isfinite(product.estimate(product.rows() - 1, product.cols() - 1)), "the last estimate is finite");
      // Queries that scan every entry only for small products (a loaded file may claim 2^48 x 2^48).
      if (static_cast<double>(product.rows()) * static_cast<double>(product.cols()) <= 4096) {
        const auto top = product.top_k(3);
        require(top.size() <= 3, "top_k(3) returns at most 3 entries");
      }
    }
  } catch (const pagh::Error&) {
    // A refusal: the expected answer to almost every input.
  }
  return 0;
}
