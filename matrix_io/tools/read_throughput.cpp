// Measures single-threaded Matrix Market read speed (README.md, "Performance").
//
//   mtx-read-throughput --generate FILE ENTRIES   write a random coordinate real general file
//   mtx-read-throughput FILE [REPEATS]            read it REPEATS times (default 5) into
//                                                 Eigen::SparseMatrix<double>, print MB/s per run
//
// The file is read once before timing so that every timed run finds it in the page cache: the
// figure is the parser's speed, not the disk's.
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "matrix_io/read.hpp"
#include "matrix_io/write.hpp"

namespace {

int generate(const std::string& path, long long entries) {
  // Square matrix with ~entries/100 rows, so columns hold ~100 entries (in random row order, which
  // the reader must sort) and indices have 5-7 digits; values are uniform doubles written in
  // shortest round-trip form (mostly 16-17 significant digits): a realistic, not a flattering, file.
  const std::int64_t n = std::max<std::int64_t>(1, entries / 100);
  std::mt19937_64 engine(42);
  std::vector<pagh::matrix_io::Entry> list(static_cast<std::size_t>(entries));
  for (auto& e : list) {
    e.row = static_cast<std::int64_t>(engine() % static_cast<std::uint64_t>(n));
    e.col = static_cast<std::int64_t>(engine() % static_cast<std::uint64_t>(n));
    e.value = static_cast<double>(engine() >> 11) * 0x1p-53 * 2.0 - 1.0;
  }
  std::sort(list.begin(), list.end(), [](const auto& a, const auto& b) { return a.col < b.col; });
  pagh::matrix_io::WriteOptions options;
  options.comments = {"mtx-read-throughput --generate: random coordinate real general test file"};
  pagh::matrix_io::write_matrix_market(path, n, n, list, options);
  std::printf("wrote %s: %lld x %lld, %lld entries, %.1f MB\n", path.c_str(), static_cast<long long>(n),
              static_cast<long long>(n), entries, static_cast<double>(std::filesystem::file_size(path)) / 1e6);
  return 0;
}

int measure(const std::string& path, int repeats) {
  const double megabytes = static_cast<double>(std::filesystem::file_size(path)) / 1e6;
  auto warm = pagh::matrix_io::read_sparse<double>(path);  // page cache
  std::printf("%s: %.1f MB, %lld x %lld, %lld stored entries\n", path.c_str(), megabytes,
              static_cast<long long>(warm.rows()), static_cast<long long>(warm.cols()),
              static_cast<long long>(warm.nonZeros()));
  std::vector<double> rates;
  for (int r = 0; r < repeats; ++r) {
    // Wall time is the figure; CPU time (this thread's) is printed beside it because on a busy
    // machine the two differ, and the difference is the machine's, not the reader's.
    timespec cpu_start{}, cpu_end{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu_start);
    const auto start = std::chrono::steady_clock::now();
    auto matrix = pagh::matrix_io::read_sparse<double>(path);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu_end);
    const double cpu = static_cast<double>(cpu_end.tv_sec - cpu_start.tv_sec) +
                       1e-9 * static_cast<double>(cpu_end.tv_nsec - cpu_start.tv_nsec);
    rates.push_back(megabytes / seconds);
    std::printf("run %d: %.3f s wall, %.0f MB/s; %.3f s CPU, %.0f MB/s (%lld entries)\n", r + 1, seconds,
                rates.back(), cpu, megabytes / cpu, static_cast<long long>(matrix.nonZeros()));
  }
  std::sort(rates.begin(), rates.end());
  std::printf("median wall-clock rate: %.0f MB/s\n", rates[rates.size() / 2]);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::vector<std::string> args(argv + 1, argv + argc);
    if (args.size() == 3 && args[0] == "--generate") return generate(args[1], std::atoll(args[2].c_str()));
    if (args.size() == 1 || args.size() == 2) {
      const int repeats = args.size() == 2 ? std::atoi(args[1].c_str()) : 5;
      if (repeats >= 1) return measure(args[0], repeats);
    }
    std::fprintf(stderr, "usage: mtx-read-throughput --generate FILE ENTRIES | mtx-read-throughput FILE [REPEATS]\n");
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mtx-read-throughput: %s\n", e.what());
    return 1;
  }
}
