// Asks the kernel to back a large array that is about to be written in full with huge pages: one
// 2 MiB page faults (and is cleared) once where 512 pages of 4 KiB fault 512 times. Advice only:
// without transparent huge pages, or on another system, nothing changes.
#pragma once

#include <cstddef>
#include <cstdint>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace pagh::matrix_io::detail {

inline void advise_huge_pages(const void* data, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::uintptr_t huge = std::uintptr_t{1} << 21;
  const auto address = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t begin = (address + huge - 1) & ~(huge - 1);  // whole huge pages inside the array
  const std::uintptr_t end = (address + bytes) & ~(huge - 1);
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
#endif
}

}  // namespace pagh::matrix_io::detail
