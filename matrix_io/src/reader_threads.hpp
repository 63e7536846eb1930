// How many threads the readers use: ReadOptions::threads, or all (OpenMP's default count). Built
// without OpenMP (the fuzz target), the readers run on one thread.
#pragma once

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "matrix_io/read.hpp"

namespace pagh::matrix_io::detail {

inline int reader_threads(const ReadOptions& options) {
  if (options.threads > 0) return options.threads;
#if defined(_OPENMP)
  return omp_get_max_threads();
#else
  return 1;
#endif
}

}  // namespace pagh::matrix_io::detail
