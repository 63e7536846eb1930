// Host construction of the wide kernel's entry layout (wide_layout.hpp).
#include "compress/paths/wide_layout.hpp"

#include <algorithm>
#include <bit>

namespace pagh::cuda {
namespace {

// The stores of one warp (distinct slots, any order) in groups of 32, one warp instruction each,
// chosen so that shared-memory banks rarely repeat within a group: the cell written (bank of the
// swizzled slot) and, for staged lines, the element gathered (bank of the index). Greedy: an entry
// whose two banks are both free, else one whose cell bank is free, else the next one.
std::vector<std::int64_t> bank_spread(const std::vector<std::int64_t>& entries, const std::uint32_t* h) {
  const auto cell_bank = [&](std::int64_t i) { return wide_swizzle(h[i] & ((1u << kWideLog) - 1)) & 31u; };
  const auto gather_bank = [](std::int64_t i) { return static_cast<std::uint32_t>(i) & 31u; };
  std::vector<std::int64_t> out;
  out.reserve(entries.size());
  std::vector<bool> taken(entries.size(), false);
  std::size_t first_free = 0;
  while (out.size() < entries.size()) {
    std::uint32_t cells = 0, gathers = 0;
    int in_group = 0;
    for (int pass = 0; pass < 3 && in_group < 32; ++pass)
      for (std::size_t e = first_free; e < entries.size() && in_group < 32; ++e) {
        if (taken[e]) continue;
        const std::uint32_t c = 1u << cell_bank(entries[e]), g = 1u << gather_bank(entries[e]);
        if ((pass == 0 && ((cells & c) || (gathers & g))) || (pass == 1 && (cells & c))) continue;
        taken[e] = true, cells |= c, gathers |= g, ++in_group;
        out.push_back(entries[e]);
      }
    while (first_free < entries.size() && taken[first_free]) ++first_free;
  }
  return out;
}

}  // namespace

void build_wide_layout(const std::uint32_t* buckets, const std::int8_t* signs, std::int64_t n, int repetitions, int log2b,
                       std::uint32_t pad_offset, WideLayout& out) {
  constexpr std::uint32_t slots = 1u << kWideLog, per_warp = slots / kWideWarps;
  constexpr std::size_t part = 32 * kWideBatch;
  const int planes = wide_code_planes(log2b);
  // code: the cell's offset alone; high: h >> 14 (0 for padding: every parity bit 0). The planes'
  // parity bits are added once the order is final.
  std::vector<std::vector<std::uint32_t>> source(static_cast<std::size_t>(repetitions)), code(source.size()), high(source.size());
  out.segment.assign(static_cast<std::size_t>(repetitions) * (2 * kWideWarps + 1), 0);
  std::vector<std::int64_t> start(slots + 1), order(static_cast<std::size_t>(n));
  for (int t = 0; t < repetitions; ++t) {
    const std::uint32_t* h = buckets + t * n;
    const std::int8_t* s = signs + t * n;
    // Counting sort by slot, stable in the index.
    std::fill(start.begin(), start.end(), 0);
    for (std::int64_t i = 0; i < n; ++i) ++start[(h[i] & (slots - 1)) + 1];
    for (std::uint32_t u = 0; u < slots; ++u) start[u + 1] += start[u];
    std::vector<std::int64_t> next(start.begin(), start.end() - 1);
    for (std::int64_t i = 0; i < n; ++i) order[static_cast<std::size_t>(next[h[i] & (slots - 1)]++)] = i;

    auto& src = source[static_cast<std::size_t>(t)];
    auto& cod = code[static_cast<std::size_t>(t)];
    auto& hig = high[static_cast<std::size_t>(t)];
    auto add = [&](std::int64_t i) {
      src.push_back(static_cast<std::uint32_t>(i) | (s[i] < 0 ? 0x80000000u : 0u));
      cod.push_back(4 * wide_swizzle(h[i] & (slots - 1)));
      hig.push_back(h[i] >> kWideLog);
    };
    auto pad = [&](int w, std::size_t multiple) {  // private dummy cells, one per warp and lane
      while (src.size() % multiple != 0) {
        cod.push_back(pad_offset + 4 * static_cast<std::uint32_t>(32 * w + src.size() % 32));
        src.push_back(kWidePad);
        hig.push_back(0);
      }
    };
    for (int w = 0; w < kWideWarps; ++w) {
      const std::uint32_t first = w * per_warp, last = first + per_warp;
      out.segment[static_cast<std::size_t>(t * (2 * kWideWarps + 1) + 2 * w)] = static_cast<std::int32_t>(src.size());
      std::int64_t deepest = 0;
      std::vector<std::int64_t> stores;
      for (std::uint32_t u = first; u < last; ++u) {
        deepest = std::max(deepest, start[u + 1] - start[u]);
        if (start[u + 1] > start[u]) stores.push_back(order[static_cast<std::size_t>(start[u])]);
      }
      for (const std::int64_t i : bank_spread(stores, h)) add(i);
      pad(w, part);
      out.segment[static_cast<std::size_t>(t * (2 * kWideWarps + 1) + 2 * w + 1)] = static_cast<std::int32_t>(src.size());
      // One instruction must not add to a slot twice (its lanes would race): an entry whose slot
      // is already in the current instruction starts the next one.
      std::vector<std::uint32_t> in_instruction;
      for (std::int64_t rank = 1; rank < deepest; ++rank)
        for (std::uint32_t u = first; u < last; ++u) {
          if (start[u] + rank >= start[u + 1]) continue;
          if (src.size() % 32 == 0) in_instruction.clear();
          if (std::find(in_instruction.begin(), in_instruction.end(), u) != in_instruction.end()) {
            pad(w, 32);
            in_instruction.clear();
          }
          in_instruction.push_back(u);
          add(order[static_cast<std::size_t>(start[u] + rank)]);
        }
      pad(w, part);
    }
    out.segment[static_cast<std::size_t>(t * (2 * kWideWarps + 1) + 2 * kWideWarps)] = static_cast<std::int32_t>(src.size());
  }
  // Lane-major within chunks (wide_layout.hpp); every part is a whole number of chunks.
  for (int t = 0; t < repetitions; ++t)
    for (auto* v : {&source[static_cast<std::size_t>(t)], &code[static_cast<std::size_t>(t)], &high[static_cast<std::size_t>(t)]}) {
      std::vector<std::uint32_t> stored(v->size());
      for (std::size_t j = 0; j < v->size(); ++j) stored[j - j % part + static_cast<std::size_t>(wide_stored_offset(static_cast<int>(j % part)))] = (*v)[j];
      v->swap(stored);
    }
  out.padded = static_cast<std::int64_t>(part);
  for (const auto& src : source) out.padded = std::max<std::int64_t>(out.padded, static_cast<std::int64_t>(src.size()));
  out.source.clear(), out.code.clear();
  for (int t = 0; t < repetitions; ++t) {
    auto& src = source[static_cast<std::size_t>(t)];
    src.resize(static_cast<std::size_t>(out.padded), kWidePad);
    out.source.insert(out.source.end(), src.begin(), src.end());
  }
  constexpr std::uint32_t plane_slices = 1u << kWidePlaneFold;
  for (int plane = 0; plane < planes; ++plane)
    for (int t = 0; t < repetitions; ++t) {
      const auto& cod = code[static_cast<std::size_t>(t)];
      const auto& hig = high[static_cast<std::size_t>(t)];
      for (std::size_t j = 0; j < static_cast<std::size_t>(out.padded); ++j) {
        if (j >= cod.size()) {  // beyond this repetition's entries (never read: past segment[32])
          out.code.push_back(0u);
          continue;
        }
        std::uint32_t parity = 0;
        for (std::uint32_t q = 0; q < plane_slices; ++q)
          parity |= (std::popcount((plane_slices * static_cast<std::uint32_t>(plane) + q) & hig[j]) & 1u) << q;
        out.code.push_back(cod[j] | parity << 18);
      }
    }
}

}  // namespace pagh::cuda
