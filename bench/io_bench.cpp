// Matrix Market read throughput: pagh's reader (read_matrix<double>, what pagh-mm calls) beside
// fast_matrix_market's Python mmread, on the same file, at the same thread counts, in one run.
//
//   io_bench generate dense PATH ROWS COLS        N(0,1) values, shortest round-trip decimals
//   io_bench generate sparse PATH N ENTRIES       N x N coordinate real general, sorted by column
//   io_bench [--repeats R] [--threads 1,0] [--python PY] FILE...
//
// Threads 0 means all (OpenMP's default count, also passed to mmread as parallelism). Each file is
// read once before timing so that every timed read finds it in the page cache: the figures are the
// readers', not the disk's. Best of R reads; MB = 10^6 bytes of file. The anchor needs
// `pip install fast_matrix_market` for PY (default python3); without it scipy.io.mmread is timed and
// the table says so. Prints a markdown table for bench/RESULTS.md.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "matrix_io/read.hpp"
#include "matrix_io/write.hpp"

namespace {

namespace mio = pagh::matrix_io;

double gaussian(std::mt19937_64& rng) {
  std::normal_distribution<double> normal;
  return normal(rng);
}

int generate(const std::vector<std::string>& args) {
  if (args.size() != 5) {
    std::fprintf(stderr, "usage: io_bench generate dense PATH ROWS COLS | io_bench generate sparse PATH N ENTRIES\n");
    return 64;
  }
  const std::string& kind = args[1];
  const std::string& path = args[2];
  const long long a = std::atoll(args[3].c_str()), b = std::atoll(args[4].c_str());
  std::mt19937_64 rng(42);
  mio::WriteOptions options;
  options.comments = {"io_bench generate " + kind + " " + args[3] + " " + args[4]};
  if (kind == "dense") {
    Eigen::MatrixXd m(a, b);
    for (Eigen::Index k = 0; k < m.size(); ++k) m.data()[k] = gaussian(rng);
    mio::write_matrix_market(path, m, options);
  } else if (kind == "sparse") {
    std::vector<mio::Entry> entries(static_cast<std::size_t>(b));
    for (auto& e : entries) {
      e.row = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(a));
      e.col = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(a));
      e.value = gaussian(rng);
    }
    std::sort(entries.begin(), entries.end(), [](const auto& x, const auto& y) { return x.col < y.col; });
    mio::write_matrix_market(path, a, a, entries, options);
  } else {
    std::fprintf(stderr, "io_bench generate: unknown kind '%s' (dense or sparse)\n", kind.c_str());
    return 64;
  }
  std::printf("wrote %s: %.1f MB\n", path.c_str(), static_cast<double>(std::filesystem::file_size(path)) / 1e6);
  return 0;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double time_pagh(const std::string& path, int threads, int repeats, std::int64_t& stored) {
  mio::ReadOptions options;
  options.threads = threads;
  options.max_result_bytes = std::size_t{64} << 30;
  double best = 1e300;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    const auto m = mio::read_matrix<double>(path, options);
    best = std::min(best, seconds_since(start));
    stored = m.is_dense() ? static_cast<std::int64_t>(m.dense().size()) : static_cast<std::int64_t>(m.sparse().nonZeros());
  }
  return best;
}

// Runs the anchor in Python; returns its best time and which reader it was, or a negative time.
double time_python(const std::string& python, const std::string& path, int threads, int repeats, std::string& reader) {
  const char* script =
      "import sys, time\n"
      "path, par, reps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])\n"
      "try:\n"
      "    import fast_matrix_market as fmm\n"
      "    name = 'fast_matrix_market ' + fmm.__version__ + ' mmread'\n"
      "    read = lambda: fmm.mmread(path, parallelism=par)\n"
      "except ImportError:\n"
      "    import scipy, scipy.io\n"
      "    name = 'scipy ' + scipy.__version__ + ' io.mmread'\n"
      "    read = lambda: scipy.io.mmread(path)\n"
      "best = 1e300\n"
      "for _ in range(reps):\n"
      "    t = time.perf_counter(); m = read(); best = min(best, time.perf_counter() - t); del m\n"
      "print(best, name)\n";
  const std::string script_path = std::filesystem::temp_directory_path() / "io_bench_anchor.py";
  std::ofstream(script_path) << script;
  const std::string command = python + " " + script_path + " '" + path + "' " + std::to_string(threads) + " " +
                              std::to_string(repeats);
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return -1;
  char line[512] = {};
  const bool got = std::fgets(line, sizeof line, pipe) != nullptr;
  const int status = ::pclose(pipe);
  if (!got || status != 0) return -1;
  std::istringstream in(line);
  double best = -1;
  in >> best;
  std::getline(in >> std::ws, reader);
  return best;
}

void warm(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> buffer(std::size_t{1} << 24);
  while (in.read(buffer.data(), static_cast<std::streamsize>(buffer.size())) || in.gcount() > 0) {
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == "generate") return generate(args);
  int repeats = 3;
  std::vector<int> thread_counts = {1, 0};
  std::string python = "python3";
  std::vector<std::string> files;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--repeats" && i + 1 < args.size()) {
      repeats = std::max(1, std::atoi(args[++i].c_str()));
    } else if (args[i] == "--threads" && i + 1 < args.size()) {
      thread_counts.clear();
      std::istringstream list(args[++i]);
      for (std::string t; std::getline(list, t, ',');) thread_counts.push_back(std::atoi(t.c_str()));
    } else if (args[i] == "--python" && i + 1 < args.size()) {
      python = args[++i];
    } else if (args[i].starts_with("--")) {
      std::fprintf(stderr, "io_bench: unknown option %s\n", args[i].c_str());
      return 64;
    } else {
      files.push_back(args[i]);
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "usage: io_bench [--repeats R] [--threads 1,0] [--python PY] FILE... | io_bench generate ...\n");
    return 64;
  }
  std::string anchor = "(none)";
  std::printf("| file | MB | threads | pagh s | pagh MB/s | anchor s | anchor MB/s | pagh time / anchor time |\n");
  std::printf("| --- | --- | --- | --- | --- | --- | --- | --- |\n");
  for (const std::string& file : files) {
    const double mb = static_cast<double>(std::filesystem::file_size(file)) / 1e6;
    warm(file);
    for (const int requested : thread_counts) {
      const int threads = requested > 0 ? requested : omp_get_max_threads();
      std::int64_t stored = 0;
      const double pagh = time_pagh(file, threads, repeats, stored);
      std::string reader;
      const double other = time_python(python, file, threads, repeats, reader);
      if (other > 0) anchor = reader;
      std::printf("| %s | %.0f | %d | %.3f | %.0f | %s | %s | %s |\n", std::filesystem::path(file).filename().c_str(), mb,
                  threads, pagh, mb / pagh, other > 0 ? std::to_string(other).substr(0, 5).c_str() : "-",
                  other > 0 ? std::to_string(static_cast<int>(mb / other)).c_str() : "-",
                  other > 0 ? (std::to_string(pagh / other).substr(0, 4) + "x").c_str() : "-");
      std::fflush(stdout);
    }
  }
  std::printf("\nanchor: %s (best of %d; pagh: read_matrix<double>, best of %d)\n", anchor.c_str(), repeats, repeats);
  return 0;
}
