// The stored sketch: a versioned little-endian binary file.
//
//   offset  field
//   0       magic "PAGHSKCH"
//   8       u32 format version (1)
//   12      u32 byte-order mark 0x01020304
//   16      i64 rows, cols, inner, buckets
//   48      i32 repetitions, precision, stabilization, algorithm, compute, hybrid
//   72      f64 pad; u64 seed
//   88      f64 sketches[repetitions * buckets]
//   end-8   u64 FNV-1a checksum of every byte before it
// The hash tables are redrawn from the seed on load (hashing.hpp defines them exactly).
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "pagh/error.hpp"
#include "sketch/compressed_product.hpp"

namespace pagh {
namespace {

constexpr char kMagic[8] = {'P', 'A', 'G', 'H', 'S', 'K', 'C', 'H'};
constexpr std::uint32_t kVersion = 1;
constexpr std::uint32_t kByteOrder = 0x01020304u;
constexpr std::size_t kHeaderBytes = 88;

std::uint64_t fnv1a(const unsigned char* data, std::size_t size) {
  std::uint64_t h = 1469598103934665603ull;
  for (std::size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 1099511628211ull;
  return h;
}

template <class T>
void put(std::vector<unsigned char>& out, T v) {
  const auto* p = reinterpret_cast<const unsigned char*>(&v);
  out.insert(out.end(), p, p + sizeof v);
}

template <class T>
T get(const std::vector<unsigned char>& in, std::size_t& at) {
  T v;
  std::memcpy(&v, in.data() + at, sizeof v);
  at += sizeof v;
  return v;
}

}  // namespace

void CompressedProduct::save(const std::string& path) const {
  std::vector<unsigned char> bytes;
  bytes.reserve(kHeaderBytes + sketches_.size() * 8 + 8);
  bytes.insert(bytes.end(), kMagic, kMagic + 8);
  put(bytes, kVersion);
  put(bytes, kByteOrder);
  for (std::int64_t v : {rows_, cols_, inner_, buckets()}) put(bytes, v);
  for (int v : {repetitions(), static_cast<int>(params_.precision), static_cast<int>(params_.stabilization),
                static_cast<int>(params_.algorithm), static_cast<int>(params_.compute), static_cast<int>(params_.hybrid)})
    put(bytes, static_cast<std::int32_t>(v));
  put(bytes, params_.pad);
  put(bytes, params_.seed);
  const auto* payload = reinterpret_cast<const unsigned char*>(sketches_.data());
  bytes.insert(bytes.end(), payload, payload + sketches_.size() * sizeof(double));
  put(bytes, fnv1a(bytes.data(), bytes.size()));

  // Atomic: write a temporary file beside the target, then rename it over the target.
  const std::string temp = path + ".tmp" + std::to_string(std::random_device{}());
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error("pagh::CompressedProduct::save", path + ": cannot create file");
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) {
      std::remove(temp.c_str());
      throw Error("pagh::CompressedProduct::save", path + ": write failed");
    }
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    std::remove(temp.c_str());
    throw Error("pagh::CompressedProduct::save", path + ": cannot rename the temporary file into place");
  }
}

CompressedProduct CompressedProduct::load(const std::string& path) {
  const char* where = "pagh::CompressedProduct::load";
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(where, path + ": cannot open file");
  std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() < kHeaderBytes + 8 || std::memcmp(bytes.data(), kMagic, 8) != 0)
    throw Error(where, path + ": not a pagh sketch file");
  std::size_t at = 8;
  const auto version = get<std::uint32_t>(bytes, at);
  if (version != kVersion) throw Error(where, path + ": unsupported format version " + std::to_string(version));
  if (get<std::uint32_t>(bytes, at) != kByteOrder) throw Error(where, path + ": written with another byte order");
  const auto rows = get<std::int64_t>(bytes, at), cols = get<std::int64_t>(bytes, at);
  const auto inner = get<std::int64_t>(bytes, at), buckets = get<std::int64_t>(bytes, at);
  SketchParams params;
  params.repetitions = get<std::int32_t>(bytes, at);
  params.precision = static_cast<fwht::DType>(get<std::int32_t>(bytes, at));
  params.stabilization = static_cast<fwht::Stabilization>(get<std::int32_t>(bytes, at));
  params.algorithm = static_cast<fwht::Algorithm>(get<std::int32_t>(bytes, at));
  params.compute = static_cast<fwht::Compute>(get<std::int32_t>(bytes, at));
  params.hybrid = static_cast<HybridMode>(get<std::int32_t>(bytes, at));
  params.pad = get<double>(bytes, at);
  params.seed = get<std::uint64_t>(bytes, at);
  params.buckets = buckets;
  if (rows < 0 || cols < 0 || inner < 0 || !fwht::is_power_of_two(buckets) || buckets > (std::int64_t{1} << 32) ||
      params.repetitions < 1 || params.repetitions > 1024)
    throw Error(where, path + ": corrupt header");
  // The size must match exactly before anything is allocated from the header's numbers.
  const auto payload = static_cast<unsigned long long>(buckets) * static_cast<unsigned long long>(params.repetitions) * 8ull;
  if (bytes.size() != kHeaderBytes + payload + 8) throw Error(where, path + ": truncated or oversized file");
  std::size_t end = bytes.size() - 8;
  std::size_t check_at = end;
  if (get<std::uint64_t>(bytes, check_at) != fnv1a(bytes.data(), end)) throw Error(where, path + ": checksum mismatch (corrupt file)");
  std::vector<double> sketches(static_cast<std::size_t>(payload / 8));
  std::memcpy(sketches.data(), bytes.data() + kHeaderBytes, payload);
  HashTables tables = draw_hash_tables(params.seed, params.repetitions, rows, cols, buckets);
  return CompressedProduct(rows, cols, inner, params, std::move(tables), std::move(sketches));
}

}  // namespace pagh
