// Sketch files crafted field by field, with the FNV-1a checksum recomputed, for the tests and the
// fuzzer's seeds: a hostile file passes the checksum, so every field must be validated on its own.
// The layout is sketch/src/sketch_file/sketch_file.cpp's, written out here independently of the loader.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace crafted {

struct Fields {
  std::int64_t rows = 5, cols = 7, inner = 3, buckets = 16;
  std::int32_t repetitions = 3, precision = 1 /* f32 */, stabilization = 0, algorithm = 0, compute = 1 /* f32 */, hybrid = 0;
  double pad = 8;
  std::uint64_t seed = 1;
};

// The names of the header's fields, in file order, for loops over them.
inline const std::vector<std::string> kFieldNames = {"rows",          "cols",      "inner",   "buckets", "repetitions",
                                                     "precision",     "stabilization", "algorithm", "compute", "hybrid",
                                                     "pad",           "seed"};

inline bool is_double_field(const std::string& name) { return name == "pad"; }

// Sets an integer field (i32 fields take the value truncated to 32 bits, as a careless writer would).
inline void set_integer(Fields& f, const std::string& name, std::int64_t v) {
  const auto i32 = static_cast<std::int32_t>(static_cast<std::uint32_t>(static_cast<std::uint64_t>(v)));
  if (name == "rows") f.rows = v;
  else if (name == "cols") f.cols = v;
  else if (name == "inner") f.inner = v;
  else if (name == "buckets") f.buckets = v;
  else if (name == "repetitions") f.repetitions = i32;
  else if (name == "precision") f.precision = i32;
  else if (name == "stabilization") f.stabilization = i32;
  else if (name == "algorithm") f.algorithm = i32;
  else if (name == "compute") f.compute = i32;
  else if (name == "hybrid") f.hybrid = i32;
  else if (name == "seed") f.seed = static_cast<std::uint64_t>(v);
}

// The values every integer field is tried at (the list, plus the bounds of i32 fields).
inline const std::vector<std::int64_t> kIntegerValues = {0,
                                                         -1,
                                                         std::int64_t{1} << 31,
                                                         std::int64_t{1} << 62,
                                                         std::numeric_limits<std::int64_t>::max(),
                                                         std::numeric_limits<std::int64_t>::min(),
                                                         std::int64_t{1} << 32,
                                                         1025,
                                                         4};
inline const std::vector<double> kDoubleValues = {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                                                  -std::numeric_limits<double>::infinity(), 0.0, -1.0, -0.0, 1e308, 5e-324};

// The values, for combinations of two fields (every pair of fields at every pair of these).
inline const std::vector<std::int64_t> kPairIntegerValues = {0, -1, std::int64_t{1} << 31, std::int64_t{1} << 62,
                                                             std::numeric_limits<std::int64_t>::max()};
inline const std::vector<double> kPairDoubleValues = {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                                                      0.0, -1.0};

template <class T>
void put(std::vector<unsigned char>& out, T v) {
  unsigned char bytes[sizeof v];
  std::memcpy(bytes, &v, sizeof v);
  out.insert(out.end(), bytes, bytes + sizeof v);
}

inline std::uint64_t fnv1a(const std::vector<unsigned char>& bytes) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char b : bytes) h = (h ^ b) * 1099511628211ull;
  return h;
}

// The payload the header claims (d * b values) when that is at most max_values, else `fallback`
// values: a file whose size does not match its header.
inline std::size_t payload_values(const Fields& f, std::size_t max_values = std::size_t{1} << 17, std::size_t fallback = 48) {
  if (f.repetitions >= 1 && f.buckets >= 1 && f.repetitions <= 1024 && f.buckets <= (std::int64_t{1} << 32)) {
    const double claimed = static_cast<double>(f.repetitions) * static_cast<double>(f.buckets);
    if (claimed <= static_cast<double>(max_values)) return static_cast<std::size_t>(claimed);
  }
  return fallback;
}

// The whole file: header, `values` sketch values (value v at position i: a deterministic pattern
// unless given), checksum.
inline std::vector<unsigned char> file_bytes(const Fields& f, std::size_t values, const std::vector<double>& payload = {}) {
  std::vector<unsigned char> out;
  const char magic[8] = {'P', 'A', 'G', 'H', 'S', 'K', 'C', 'H'};
  out.insert(out.end(), magic, magic + 8);
  put<std::uint32_t>(out, 1);
  put<std::uint32_t>(out, 0x01020304u);
  for (std::int64_t v : {f.rows, f.cols, f.inner, f.buckets}) put(out, v);
  for (std::int32_t v : {f.repetitions, f.precision, f.stabilization, f.algorithm, f.compute, f.hybrid}) put(out, v);
  put(out, f.pad);
  put(out, f.seed);
  for (std::size_t i = 0; i < values; ++i)
    put(out, i < payload.size() ? payload[i] : static_cast<double>(static_cast<int>(i % 13) - 6) * 0.5);
  put(out, fnv1a(out));
  return out;
}

// Whether a loader must accept the fields (the file's size matching them): the format's rules,
// written out independently of sketch_file_header.cpp.
inline bool valid(const Fields& f) {
  const std::int64_t max_dimension = std::int64_t{1} << 48;
  const bool buckets_ok = f.buckets >= 1 && f.buckets <= (std::int64_t{1} << 32) && (f.buckets & (f.buckets - 1)) == 0;
  const bool alman_rao_plain = !(f.algorithm == 1 && f.stabilization != 0);
  const bool wide_not_f64 = !(f.precision == 0 && (f.stabilization == 3 || f.stabilization == 4));
  return f.rows >= 0 && f.rows <= max_dimension && f.cols >= 0 && f.cols <= max_dimension && f.inner >= 0 && buckets_ok &&
         f.repetitions >= 1 && f.repetitions <= 1024 && f.precision >= 0 && f.precision <= 3 && f.stabilization >= 0 &&
         f.stabilization <= 4 && f.algorithm >= 0 && f.algorithm <= 1 && f.compute >= 0 && f.compute <= 1 && f.hybrid >= 0 &&
         f.hybrid <= 2 && alman_rao_plain && wide_not_f64 && std::isfinite(f.pad) && f.pad > 0;
}

// The memory a loaded product needs: sketches, 5 bytes per row/column and repetition of tables, and
// one repetition's 2 (m + p) words while drawing them.
inline double loaded_bytes(const Fields& f) {
  const double lines = static_cast<double>(f.rows) + static_cast<double>(f.cols);
  return 8.0 * f.repetitions * static_cast<double>(f.buckets) + 5.0 * f.repetitions * lines + 8.0 * lines;
}

}  // namespace crafted
