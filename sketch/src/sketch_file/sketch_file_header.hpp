// The header of a stored sketch (layout in sketch_file.cpp), decoded and validated on its own, before
// anything else of the file is read. A file may come from anyone: the checksum catches accidents, not
// intent, so every field is checked for range, and the products of fields that size allocations are
// checked so that none can overflow; the file's size is then checked against what the header claims
// (load()), and the memory the loaded product needs against the caller's limit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "sketch/params.hpp"

namespace pagh::sketch_file {

inline constexpr std::size_t kHeaderBytes = 88;
inline constexpr std::size_t kChecksumBytes = 8;
inline constexpr std::size_t kMagicBytes = 8;

// Bounds of the fields. Dimensions up to 2^48 and d up to 1024 keep every product the loader and
// draw_hash_tables form (d * m, d * p, 2 (m + p) d, 5 d (m + p)) below 2^60; b <= 2^32 and d <= 1024
// keep the payload d * b * 8 below 2^45 bytes. No real product comes near these bounds.
inline constexpr std::int64_t kMaxDimension = std::int64_t{1} << 48;
inline constexpr std::int64_t kMaxBuckets = std::int64_t{1} << 32;
inline constexpr int kMaxRepetitions = 1024;

struct Header {
  std::int64_t rows = 0, cols = 0, inner = 0;
  SketchParams params;  // buckets, repetitions, precision, stabilization, algorithm, compute, hybrid, pad, seed

  std::uint64_t payload_bytes() const;  // d * b * 8: the sketches
  std::uint64_t file_bytes() const;     // header + payload + checksum
  // Memory the loaded product holds at its peak: the sketches, the hash tables (a 4-byte bucket and a
  // 1-byte sign per row, column and repetition) and draw_hash_tables' 2 (m + p) words of one repetition.
  std::uint64_t loaded_bytes() const;
};

// Whether the first kMagicBytes bytes are the sketch file's magic.
bool has_magic(std::span<const unsigned char> first_bytes);

// Decodes the kHeaderBytes bytes at the start of the file (magic included) and validates every field.
// Throws pagh::Error(where, name + ": " + reason) naming the first field that is wrong.
Header parse_header(std::span<const unsigned char> bytes, const std::string& name, const char* where);

// FNV-1a 64 of the bytes, continuing from `state` (so a file can be checksummed piece by piece).
inline constexpr std::uint64_t kChecksumStart = 1469598103934665603ull;
std::uint64_t checksum(std::span<const unsigned char> bytes, std::uint64_t state = kChecksumStart);

}  // namespace pagh::sketch_file
