// Byte-range reading with a shuffle by inner index (distributed/mpi_read.hpp). Uses matrix_io's own
// pieces: InputBytes (the file mapped, so a rank touches only the pages of its range), the preamble
// parser (banner, size line, the declared count against the file's length) and the entry parser
// (every check and message of a whole-file read, line numbers counted from the start of the text).
#include "distributed/mpi_read.hpp"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "chunked_body.hpp"
#include "distributed/mpi_compress.hpp"
#include "entry_parser.hpp"
#include "inner_shuffle.hpp"
#include "input_bytes.hpp"
#include "matrix_io/error.hpp"
#include "preamble_parser.hpp"
#include "reader_threads.hpp"
#include "sparse_assembly.hpp"

namespace pagh::mpi {
namespace {

namespace mio = pagh::matrix_io;

using detail::Triplet;
using detail::Triplets;

// EntryParser's sink: entries in file order, mirrored as matrix_io mirrors symmetric files; throws
// TooMany at the first entry past `room` (the rest of the declared count).
struct TooMany {};
struct TripletSink {
  Triplets& out;
  mio::Symmetry symmetry;
  std::int64_t room;
  std::int64_t added = 0;
  void add(std::int64_t row, std::int64_t col, double value) {
    if (added++ == room) throw TooMany{};
    out.push_back({row, col, value});
    if (row != col && symmetry != mio::Symmetry::general)
      out.push_back({col, row, symmetry == mio::Symmetry::skew_symmetric ? -value : value});
  }
  void add_value(double) {}  // array files are not read here
};

// agree(), with a reader's error (MatrixMarketError) thrown on every rank as that error, so that a
// caller tells a missing file from a bad line as it would after a whole-file read. Its parts travel
// in the agreed message: "<line> <length of the file name> <file name><reason>".
constexpr int kReaderError = 2;
void agree_reading(MPI_Comm comm, std::exception_ptr failure) {
  int code = 0;
  std::string message;
  if (failure) {
    try {
      std::rethrow_exception(failure);
    } catch (const mio::MatrixMarketError& e) {
      code = kReaderError, message = std::to_string(e.line()) + " " + std::to_string(e.file().size()) + " " + e.file() + e.reason();
    } catch (const std::exception& e) {
      code = 1, message = e.what();
    } catch (...) {
      code = 1, message = "unknown failure";
    }
  }
  try {
    agree(comm, code, message);
  } catch (const RankFailure& f) {
    if (f.code() != kReaderError) throw;
    const std::string parts = f.what();
    const std::size_t first = parts.find(' '), second = parts.find(' ', first + 1);
    const std::size_t name_length = std::stoull(parts.substr(first + 1, second - first - 1));
    throw mio::MatrixMarketError(parts.substr(second + 1, name_length), std::stoll(parts.substr(0, first)),
                                 parts.substr(second + 1 + name_length));
  }
}

std::int64_t exclusive_sum(std::int64_t mine, MPI_Comm comm) {
  std::int64_t before = 0;
  MPI_Exscan(&mine, &before, 1, MPI_INT64_T, MPI_SUM, comm);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  return rank == 0 ? 0 : before;
}

// Start of the first line that begins at or after `at` in text (text.size() if none).
std::size_t line_start_at_or_after(std::string_view text, std::size_t at) {
  if (at == 0) return 0;
  if (at >= text.size()) return text.size();
  const void* newline = std::memchr(text.data() + at - 1, '\n', text.size() - (at - 1));
  return newline == nullptr ? text.size() : static_cast<std::size_t>(static_cast<const char*>(newline) - text.data()) + 1;
}

// One file as this rank reads it: the header, and the entries of its byte range (whole-file reads:
// the entries of its inner range only, see read_whole).
struct FileEntries {
  mio::Header header;
  Triplets entries;
  bool whole = false;  // read whole on every rank (array or gzip)
};

void read_whole(const std::filesystem::path& path, const mio::ReadOptions& options, FileEntries& file) {
  file.header = mio::read_header(path);
  const auto s = mio::read_sparse<double, std::int64_t>(path, options);
  file.whole = true;
  file.entries.reserve(static_cast<std::size_t>(s.nonZeros()));
  for (Eigen::Index j = 0; j < s.outerSize(); ++j)
    for (mio::SparseMatrix<double, std::int64_t>::InnerIterator it(s, j); it; ++it) file.entries.push_back({it.row(), it.col(), it.value()});
}

// Collective. Parses this rank's line-aligned byte range of a coordinate file; throws the error of
// the first failure in file order on every rank (agree_reading).
FileEntries read_range(const std::filesystem::path& path, const char* which, const mio::ReadOptions& options, MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  FileEntries file;
  std::exception_ptr failure;
  std::unique_ptr<mio::detail::InputBytes> input;
  std::string_view text;
  std::int64_t preamble_lines = 0;
  std::size_t body = 0;
  int whole = 0;
  try {
    input = std::make_unique<mio::detail::InputBytes>(path, [](std::string_view) { return true; });
    text = input->bytes();
    if (text.starts_with("\x1F\x8B")) {
      whole = 1;
    } else {
      mio::detail::PreambleParser preamble(input->name(), text.size());
      // Whole lines only (the parser takes a block's last piece for a whole line), more as needed.
      for (std::size_t fed = 0, look = 1 << 16; !preamble.done(); look *= 2) {
        const std::size_t upto = look >= text.size() ? text.size() : line_start_at_or_after(text, look);
        const std::string_view rest = preamble.consume(text.substr(fed, upto - fed));
        if (preamble.done()) body = upto - rest.size();
        else if (upto == text.size()) preamble.fail_at_end_of_input();
        fed = upto;
      }
      file.header = preamble.header();
      preamble_lines = preamble.line();
      whole = file.header.format == mio::Format::array;
    }
  } catch (...) {
    failure = std::current_exception();
  }
  agree_reading(comm, failure);
  MPI_Allreduce(MPI_IN_PLACE, &whole, 1, MPI_INT, MPI_MAX, comm);
  if (whole) {
    try {
      input.reset();
      read_whole(path, options, file);
    } catch (...) {
      failure = std::current_exception();
    }
    agree_reading(comm, failure);
    return file;
  }

  // Byte ranges of different files would lose or repeat entries: ranks that see different files
  // (each its own copy) must at least agree on their shapes and lengths.
  const std::string of = std::string(" of ") + which;
  require_same(comm, input->name().c_str(),
               {{("the rows" + of).c_str(), static_cast<std::uint64_t>(file.header.rows)},
                {("the columns" + of).c_str(), static_cast<std::uint64_t>(file.header.cols)},
                {("the declared entries" + of).c_str(), static_cast<std::uint64_t>(file.header.stored_entries)},
                {("the length in bytes" + of).c_str(), static_cast<std::uint64_t>(text.size())}});

  // This rank's lines: from the first line starting at or after its share of the body's bytes.
  const std::size_t length = text.size() - body;
  const auto edge = [&](int r) {
    return body + line_start_at_or_after(text.substr(body), length / static_cast<std::size_t>(size) * static_cast<std::size_t>(r));
  };
  const std::size_t begin = rank == 0 ? body : edge(rank), end = rank + 1 == size ? text.size() : edge(rank + 1);
  const std::string_view mine = text.substr(begin, end - begin);
  const auto newlines = static_cast<std::int64_t>(std::count(mine.begin(), mine.end(), '\n'));
  const std::int64_t lines_before = preamble_lines + exclusive_sum(newlines, comm);

  // Parse; then settle against the declared count, as a front-to-back read does: the first entry
  // line past the count is refused before it is parsed.
  const std::string& name = input->name();
  struct Parsed {
    std::int64_t entries = 0, lines = 0;  // entry lines (before the error, if any); lines consumed
    std::int64_t past_line = 0;           // the line of the entry past `room`, if any
    bool failed = false;
    std::int64_t error_line = 0;
    std::string reason;
  };
  const auto parse_text = [&](std::string_view text, std::int64_t room, Triplets& out) {
    Parsed result;
    TripletSink sink{out, file.header.symmetry, room};
    mio::detail::EntryParser<double, TripletSink> parser(name, file.header, options, sink);
    try {
      parser.consume(text);
    } catch (const TooMany&) {
      result.past_line = parser.lines();
    } catch (const mio::MatrixMarketError& e) {
      result.failed = true, result.error_line = e.line(), result.reason = e.reason();
    }
    result.entries = parser.entries(), result.lines = parser.lines();
    return result;
  };
  const auto parse = [&](std::int64_t room, Triplets& out) { return parse_text(mine, room, out); };
  // The whole range on the rank's threads: line-aligned pieces, each parsed by its own parser into
  // its own entries, joined in file order up to the first piece that failed; a piece's lines count
  // from its start, so its error line is offset by the lines of the pieces before. The same entries,
  // counts and first failure as one parser over the range gives, whatever the thread count.
  const auto parse_all = [&](Triplets& out) {
    const int threads = mio::detail::reader_threads(options);
    const std::size_t target = options.chunk_bytes > 0 ? options.chunk_bytes
                                                       : std::max(mio::detail::default_min_chunk_bytes, mine.size() / static_cast<std::size_t>(threads));
    const std::vector<std::string_view> pieces = mio::detail::split_at_lines(mine, std::max<std::size_t>(1, (mine.size() + target - 1) / target));
    if (pieces.size() <= 1) return parse(-1, out);
    const auto count = static_cast<std::int64_t>(pieces.size());
    std::vector<Triplets> parts(pieces.size());
    std::vector<Parsed> results(pieces.size());
    std::vector<std::exception_ptr> errors(pieces.size());
#pragma omp parallel for num_threads(static_cast<int>(std::min<std::int64_t>(threads, count))) schedule(dynamic, 1) if (threads > 1)
    for (std::int64_t i = 0; i < count; ++i) {
      const auto at = static_cast<std::size_t>(i);
      try {
        results[at] = parse_text(pieces[at], -1, parts[at]);
      } catch (...) {
        errors[at] = std::current_exception();
      }
    }
    Parsed joined;
    std::size_t used = 0;  // the pieces joined: up to the first that failed
    while (used < pieces.size()) {
      if (errors[used]) std::rethrow_exception(errors[used]);
      const Parsed& piece = results[used++];
      joined.entries += piece.entries;
      if (piece.failed) joined.failed = true, joined.error_line = joined.lines + piece.error_line, joined.reason = piece.reason;
      joined.lines += piece.lines;
      if (piece.failed) break;
    }
    std::vector<std::size_t> offset(used + 1, out.size());
    for (std::size_t i = 0; i < used; ++i) offset[i + 1] = offset[i] + parts[i].size();
    out.resize(offset[used]);
#pragma omp parallel for num_threads(static_cast<int>(std::min<std::int64_t>(threads, count))) schedule(dynamic, 1) if (threads > 1)
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(used); ++i) {
      const auto at = static_cast<std::size_t>(i);
      std::copy(parts[at].begin(), parts[at].end(), out.begin() + static_cast<std::ptrdiff_t>(offset[at]));
      Triplets().swap(parts[at]);
    }
    return joined;
  };
  Triplets parsed;
  Parsed own;
  try {
    own = parse_all(parsed);
  } catch (...) {
    failure = std::current_exception();
  }
  const std::int64_t before = exclusive_sum(own.entries, comm);
  const std::int64_t room = file.header.stored_entries - before;
  if (failure == nullptr && (own.entries > room || (own.failed && own.entries == room))) {
    Triplets ignored;
    const Parsed limited = room < 0 ? Parsed{} : parse(room, ignored);  // room < 0: an earlier rank fails first
    failure = std::make_exception_ptr(mio::MatrixMarketError(
        name, lines_before + limited.past_line, "more entries than the " + std::to_string(file.header.stored_entries) + " declared in the size line"));
  } else if (failure == nullptr && own.failed) {
    failure = std::make_exception_ptr(mio::MatrixMarketError(name, lines_before + own.error_line, own.reason));
  }
  agree_reading(comm, failure);
  std::int64_t totals[2] = {own.entries, own.lines};
  MPI_Allreduce(MPI_IN_PLACE, totals, 2, MPI_INT64_T, MPI_SUM, comm);
  if (totals[0] < file.header.stored_entries) {
    // Every rank knows: rank 0 reports it for all (the line: the end of the input).
    const mio::MatrixMarketError error(name, preamble_lines + totals[1],
                                       "expected " + std::to_string(file.header.stored_entries) +
                                           " entries after the size line, found " + std::to_string(totals[0]) +
                                           " before the end of the input");
    agree_reading(comm, rank == 0 ? std::make_exception_ptr(error) : nullptr);
  }
  file.entries = std::move(parsed);
  return file;
}

// Entries in file order with duplicates summed in that order, as matrix_io's whole-file read
// assembles them: placed column by column in file order (a counting sort), then each column sorted
// by row and its duplicates summed by matrix_io's own sort_and_sum_columns (on `threads` threads
// from 2^16 entries). Explicit zeros stay stored. On several threads each owns a range of columns
// and walks every entry in order, counting and then placing only those of its columns (as
// sparse_assembly.hpp does): every column still receives its entries in file order.
Eigen::SparseMatrix<double> assemble(std::int64_t rows, std::int64_t cols, const Triplets& entries, std::int64_t row0,
                                     std::int64_t col0, int threads) {
  Eigen::SparseMatrix<double> matrix(rows, cols);  // column pointers start at zero
  int* const outer = matrix.outerIndexPtr();
  matrix.resizeNonZeros(static_cast<Eigen::Index>(entries.size()));
  int* const inner = matrix.innerIndexPtr();
  double* const values = matrix.valuePtr();
  const int workers = static_cast<int>(std::min<std::int64_t>(detail::threads_for(entries.size(), threads), std::max<std::int64_t>(cols, 1)));
#pragma omp parallel num_threads(workers) if (workers > 1)
  {
    const std::int64_t w = omp_get_thread_num(), lo = col0 + cols * w / workers, hi = col0 + cols * (w + 1) / workers;
    for (const Triplet& e : entries)
      if (e.col >= lo && e.col < hi) ++outer[e.col - col0 + 1];
#pragma omp barrier
#pragma omp single
    for (std::int64_t j = 0; j < cols; ++j) outer[j + 1] += outer[j];
    for (const Triplet& e : entries)  // outer[j] is column j's cursor, then its end
      if (e.col >= lo && e.col < hi) {
        const int at = outer[e.col - col0]++;
        inner[at] = static_cast<int>(e.row - row0), values[at] = e.value;
      }
  }
  for (std::int64_t j = cols; j > 0; --j) outer[j] = outer[j - 1];
  outer[0] = 0;
  mio::detail::sort_and_sum_columns(matrix, entries.size(), entries.size() >= (std::size_t{1} << 16) ? threads : 1);
  return matrix;
}

}  // namespace

InnerShare read_inner_share(const std::filesystem::path& a_path, const std::filesystem::path& b_path, MPI_Comm comm,
                            const matrix_io::ReadOptions& options) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const double start = wall_ms();
  FileEntries a = read_range(a_path, "A", options, comm);
  FileEntries b = read_range(b_path, "B", options, comm);
  InnerShare share;
  const double parsed = wall_ms();
  share.timings.parse_ms = parsed - start;
  share.header_a = a.header, share.header_b = b.header;
  share.m = a.header.rows, share.K = a.header.cols, share.p = b.header.cols;
  std::exception_ptr failure;
  try {
    check_inner_dimensions(a.header.rows, a.header.cols, b.header.rows, b.header.cols, "pagh::mpi::read_inner_share");
    if (std::max({share.m, share.K, share.p}) > std::int64_t{0x7fffffff})
      throw Error("pagh::mpi::read_inner_share", "a dimension above 2^31 - 1 (Eigen's int indices)");
  } catch (...) {
    failure = std::current_exception();
  }
  agree_reading(comm, failure);
  // Whole-file reads: every rank holds every entry; each keeps its own after the bounds are set.
  const auto count_once = [&](const FileEntries& f) -> const Triplets& {
    static const Triplets none;
    return f.whole && rank != 0 ? none : f.entries;
  };
  const int threads = mio::detail::reader_threads(options);
  const std::vector<std::int64_t> bounds = detail::inner_bounds(count_once(a), count_once(b), share.K, comm, threads);
  share.k0 = bounds[static_cast<std::size_t>(rank)], share.k1 = bounds[static_cast<std::size_t>(rank) + 1];
  const auto own = [&](FileEntries& f, detail::Inner inner) {
    if (!f.whole) return detail::shuffle(std::move(f.entries), bounds, inner, comm, threads);
    Triplets kept;
    for (const Triplet& e : f.entries) {
      const std::int64_t k = inner == detail::Inner::column ? e.col : e.row;
      if (k >= share.k0 && k < share.k1) kept.push_back(e);
    }
    return kept;
  };
  Triplets mine_a = own(a, detail::Inner::column);
  a.entries = {};
  Triplets mine_b = own(b, detail::Inner::row);
  b.entries = {};
  const double shuffled = wall_ms();
  share.timings.shuffle_ms = shuffled - parsed;
  try {
    const double bytes = 12.0 * static_cast<double>(mine_a.size() + mine_b.size()) + 4.0 * static_cast<double>(share.k1 - share.k0 + share.p + 2);
    if (options.max_result_bytes > 0 && bytes > static_cast<double>(options.max_result_bytes))
      throw matrix_io::MatrixMarketError(a_path.string(), 0, "this rank's share needs " + std::to_string(static_cast<long long>(bytes)) +
                                                                 " bytes, more than ReadOptions::max_result_bytes");
    share.a = assemble(share.m, share.k1 - share.k0, mine_a, 0, share.k0, threads);
    share.b = assemble(share.k1 - share.k0, share.p, mine_b, share.k0, 0, threads);
  } catch (...) {
    failure = std::current_exception();
  }
  share.timings.assemble_ms = wall_ms() - shuffled;
  agree_reading(comm, failure);
  return share;
}

}  // namespace pagh::mpi
