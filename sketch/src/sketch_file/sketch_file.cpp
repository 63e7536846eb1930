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
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "pagh/error.hpp"
#include "pagh/output_file.hpp"
#include "sketch/compressed_product.hpp"
#include "sketch_file/bounded_file.hpp"
#include "sketch_file/sketch_file_header.hpp"

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
  std::vector<unsigned char> header;
  header.reserve(kHeaderBytes);
  header.insert(header.end(), kMagic, kMagic + 8);
  put(header, kVersion);
  put(header, kByteOrder);
  for (std::int64_t v : {rows_, cols_, inner_, buckets()}) put(header, v);
  for (int v : {repetitions(), static_cast<int>(params_.precision), static_cast<int>(params_.stabilization),
                static_cast<int>(params_.algorithm), static_cast<int>(params_.compute), static_cast<int>(params_.hybrid)})
    put(header, static_cast<std::int32_t>(v));
  put(header, params_.pad);
  put(header, params_.seed);
  // The payload is written from the sketches in place (no second copy of a sketch of many GB); the
  // checksum continues FNV-1a over the header into the payload, as load() recomputes it.
  const auto* payload = reinterpret_cast<const unsigned char*>(host_values().data());
  const std::size_t payload_bytes = host_values().size() * sizeof(double);
  std::uint64_t checksum = fnv1a(header.data(), header.size());
  for (std::size_t i = 0; i < payload_bytes; ++i) checksum = (checksum ^ payload[i]) * 1099511628211ull;
  std::vector<unsigned char> trailer;
  put(trailer, checksum);

  // By the project's output rule (pagh/output_file.hpp): a regular file is replaced atomically, a
  // symbolic link's target is replaced, a device or FIFO is written directly.
  OutputFile out(path, "pagh::CompressedProduct::save");
  out.write({reinterpret_cast<const char*>(header.data()), header.size()});
  out.write({reinterpret_cast<const char*>(payload), payload_bytes});
  out.write({reinterpret_cast<const char*>(trailer.data()), trailer.size()});
  out.commit();
}

CompressedProduct CompressedProduct::load(const std::string& path, const LoadLimits& limits) {
  // Read with bounds: the magic before anything else, then the header, then exactly the payload the
  // validated header claims, so that a device or an endless pipe is never read until memory runs out.
  const char* where = "pagh::CompressedProduct::load";
  const auto fail = [&](const std::string& reason) -> void { throw Error(where, path + ": " + reason); };
  BoundedFile in(path, where);
  unsigned char header_bytes[sketch_file::kHeaderBytes];
  const std::size_t magic_got = in.read(header_bytes, sketch_file::kMagicBytes);
  if (!sketch_file::has_magic({header_bytes, magic_got})) fail("not a pagh sketch file");
  const std::size_t header_got = magic_got + in.read(header_bytes + magic_got, sizeof header_bytes - magic_got);
  const sketch_file::Header header = sketch_file::parse_header({header_bytes, header_got}, path, where);
  // A regular file's size is known before its payload is read: it must be exactly what the header claims.
  if (in.size() && *in.size() != header.file_bytes())
    fail("truncated or oversized file: the header claims " + std::to_string(header.file_bytes()) + " bytes, the file has " +
         std::to_string(*in.size()));
  if (header.loaded_bytes() > limits.max_bytes)
    throw MemoryLimitExceeded(where, path + ": the " + std::to_string(header.rows) + " x " + std::to_string(header.cols) +
                                         " product's sketch (d = " + std::to_string(header.params.repetitions) +
                                         ", b = " + std::to_string(header.params.buckets) + ") with its hash tables",
                              header.loaded_bytes(), limits.max_bytes);

  std::vector<double> sketches(static_cast<std::size_t>(header.payload_bytes() / sizeof(double)));
  auto* payload = reinterpret_cast<unsigned char*>(sketches.data());
  std::uint64_t stored_checksum = 0;
  unsigned char extra = 0;
  if (in.read(payload, header.payload_bytes()) != header.payload_bytes() ||
      in.read(reinterpret_cast<unsigned char*>(&stored_checksum), sizeof stored_checksum) != sizeof stored_checksum)
    fail("truncated file");
  if (in.read(&extra, 1) != 0) fail("oversized file: more data follows the checksum");
  const std::uint64_t computed =
      sketch_file::checksum({payload, header.payload_bytes()}, sketch_file::checksum({header_bytes, sketch_file::kHeaderBytes}));
  if (stored_checksum != computed) fail("checksum mismatch (corrupt file)");
  // compress() never stores inf or NaN (the command refuses an overflowed sketch); a NaN would rank
  // first in every query.
  for (std::size_t h = 0; h < sketches.size(); ++h)
    if (!std::isfinite(sketches[h]))
      fail("sketch " + std::to_string(h / static_cast<std::size_t>(header.params.buckets) + 1) + " holds a non-finite value");
  HashTables tables = draw_hash_tables(header.params.seed, header.params.repetitions, header.rows, header.cols,
                                       header.params.buckets);
  return CompressedProduct(header.rows, header.cols, header.inner, header.params, std::move(tables), std::move(sketches));
}

}  // namespace pagh
