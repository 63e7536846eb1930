// Zeroed d x b buffers on transparent huge pages. A fresh buffer of a long sketch (hundreds of MB)
// costs a page fault per 4 KiB page on its first touch, more than clearing it; asking the kernel for
// 2 MiB pages (madvise(MADV_HUGEPAGE), honoured where transparent huge pages are set to "madvise"
// or "always") takes one fault per 2 MiB instead. Only a hint: where the kernel declines, the buffer
// is the same, on small pages.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace pagh::cpu_sketch {

// Buffers from this size on are advised (glibc maps them with mmap: whole pages of their own).
inline constexpr std::size_t kHugePageAdviceBytes = std::size_t{8} << 20;

// Advises the whole 2 MiB pages inside [data, data + bytes).
inline void advise_huge_pages(void* data, std::size_t bytes) {
  if (bytes < kHugePageAdviceBytes) return;
  constexpr std::uintptr_t kHuge = std::uintptr_t{1} << 21;
  const auto begin = (reinterpret_cast<std::uintptr_t>(data) + kHuge - 1) & ~(kHuge - 1);
  const auto end = (reinterpret_cast<std::uintptr_t>(data) + bytes) & ~(kHuge - 1);
  if (end > begin) (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

// v = n values T{} (zero), in a fresh allocation advised before its pages are first touched.
template <class T, class Allocator>
void assign_zeroed(std::vector<T, Allocator>& v, std::size_t n) {
  std::vector<T, Allocator> fresh;
  fresh.reserve(n);
  advise_huge_pages(fresh.data(), n * sizeof(T));
  fresh.resize(n);
  v.swap(fresh);
}

}  // namespace pagh::cpu_sketch
