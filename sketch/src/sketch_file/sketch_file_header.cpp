#include "sketch_file/sketch_file_header.hpp"

#include <cmath>
#include <cstring>

#include "pagh/error.hpp"

namespace pagh::sketch_file {
namespace {

constexpr char kMagic[kMagicBytes] = {'P', 'A', 'G', 'H', 'S', 'K', 'C', 'H'};
constexpr std::uint32_t kVersion = 1;
constexpr std::uint32_t kByteOrder = 0x01020304u;

class Reader {
 public:
  explicit Reader(std::span<const unsigned char> bytes) : bytes_(bytes) {}
  template <class T>
  T next() {
    T v;
    std::memcpy(&v, bytes_.data() + at_, sizeof v);
    at_ += sizeof v;
    return v;
  }

 private:
  std::span<const unsigned char> bytes_;
  std::size_t at_ = kMagicBytes;
};

// An enumerator stored as i32: accepted only when it names one of the `count` values of the enum
// (the order of the enums' declarations is the file format; an unknown value is a corrupt file).
template <class Enum>
bool decode_enum(std::int32_t stored, int count, Enum& out) {
  if (stored < 0 || stored >= count) return false;
  out = static_cast<Enum>(stored);
  return true;
}

}  // namespace

std::uint64_t Header::payload_bytes() const {
  return static_cast<std::uint64_t>(params.repetitions) * static_cast<std::uint64_t>(params.buckets) * 8u;
}

std::uint64_t Header::file_bytes() const { return kHeaderBytes + payload_bytes() + kChecksumBytes; }

std::uint64_t Header::loaded_bytes() const {
  const auto d = static_cast<std::uint64_t>(params.repetitions);
  const auto lines = static_cast<std::uint64_t>(rows) + static_cast<std::uint64_t>(cols);
  return payload_bytes() + d * lines * (sizeof(std::uint32_t) + sizeof(std::int8_t)) + 2 * lines * sizeof(std::uint32_t);
}

bool has_magic(std::span<const unsigned char> first_bytes) {
  return first_bytes.size() >= kMagicBytes && std::memcmp(first_bytes.data(), kMagic, kMagicBytes) == 0;
}

std::uint64_t checksum(std::span<const unsigned char> bytes, std::uint64_t state) {
  for (const unsigned char byte : bytes) state = (state ^ byte) * 1099511628211ull;
  return state;
}

Header parse_header(std::span<const unsigned char> bytes, const std::string& name, const char* where) {
  const auto fail = [&](const std::string& reason) { throw Error(where, name + ": " + reason); };
  if (!has_magic(bytes)) fail("not a pagh sketch file");
  if (bytes.size() < kHeaderBytes) fail("truncated file (the header is incomplete)");
  Reader in(bytes);
  const auto version = in.next<std::uint32_t>();
  if (version != kVersion) fail("unsupported format version " + std::to_string(version));
  if (in.next<std::uint32_t>() != kByteOrder) fail("written with another byte order");

  Header h;
  h.rows = in.next<std::int64_t>(), h.cols = in.next<std::int64_t>(), h.inner = in.next<std::int64_t>();
  const auto buckets = in.next<std::int64_t>();
  const auto dimension = [&](const char* field, std::int64_t v) {
    if (v < 0 || v > kMaxDimension)
      fail("corrupt header: " + std::string(field) + " = " + std::to_string(v) + " is outside 0..2^48");
  };
  dimension("rows", h.rows);
  dimension("columns", h.cols);
  // The inner dimension sizes nothing (it is reported, never allocated from): it only has to be a
  // dimension.
  if (h.inner < 0) fail("corrupt header: inner dimension = " + std::to_string(h.inner) + " is negative");
  // b is not checked against pad * max(m, p): an explicit sketch length (--buckets) may be any power
  // of two, longer or shorter than the pad would give; the pad is then only reported.
  if (buckets < 1 || buckets > kMaxBuckets || (buckets & (buckets - 1)) != 0)
    fail("corrupt header: buckets = " + std::to_string(buckets) + " is not a power of two in 1..2^32");

  SketchParams& p = h.params;
  p.buckets = buckets;
  p.repetitions = in.next<std::int32_t>();
  if (p.repetitions < 1 || p.repetitions > kMaxRepetitions)
    fail("corrupt header: repetitions = " + std::to_string(p.repetitions) + " is outside 1..1024");
  const auto precision = in.next<std::int32_t>(), stabilization = in.next<std::int32_t>();
  const auto algorithm = in.next<std::int32_t>(), compute = in.next<std::int32_t>(), hybrid = in.next<std::int32_t>();
  // Integer storage (i32, i64) is not a sketch precision: compress() refuses it.
  if (!decode_enum(precision, 4, p.precision)) fail("corrupt header: unknown precision " + std::to_string(precision));
  if (!decode_enum(stabilization, 5, p.stabilization))
    fail("corrupt header: unknown stabilization " + std::to_string(stabilization));
  if (!decode_enum(algorithm, 2, p.algorithm)) fail("corrupt header: unknown algorithm " + std::to_string(algorithm));
  if (!decode_enum(compute, 2, p.compute)) fail("corrupt header: unknown compute type " + std::to_string(compute));
  if (!decode_enum(hybrid, 3, p.hybrid)) fail("corrupt header: unknown hybrid mode " + std::to_string(hybrid));
  // Combinations that compress() refuses cannot have been saved.
  if (p.algorithm == fwht::Algorithm::alman_rao && p.stabilization != fwht::Stabilization::none)
    fail("corrupt header: the alman-rao algorithm with a stabilization");
  if (fwht::is_wide(p.stabilization) && p.precision == fwht::DType::f64)
    fail("corrupt header: a wide stabilization with fp64 storage");
  p.pad = in.next<double>();
  // The pad is reported (and chose b when no explicit length was given); it must be a padding.
  if (!std::isfinite(p.pad) || !(p.pad > 0)) fail("corrupt header: pad = " + std::to_string(p.pad) + " is not a positive number");
  p.seed = in.next<std::uint64_t>();
  return h;
}

}  // namespace pagh::sketch_file
