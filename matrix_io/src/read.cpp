// The public read_* / parse_* functions: run the preamble parser, check what the header asks for,
// parse the rest of the input in parallel chunks, assemble.
#include "matrix_io/read.hpp"

#include <memory>

#include "array_placement.hpp"
#include "chunked_body.hpp"
#include "entry_sinks.hpp"
#include "huge_pages.hpp"
#include "preamble_parser.hpp"
#include "sparse_assembly.hpp"
#include "text_source.hpp"

namespace pagh::matrix_io {
namespace detail {
namespace {

// Reads up to and including the size line. Returns the text that follows it in the current block.
std::string_view read_preamble(TextSource& source, PreambleParser& preamble) {
  while (!preamble.done()) {
    const std::string_view block = source.next_block();
    if (block.empty()) preamble.fail_at_end_of_input();
    const std::string_view rest = preamble.consume(block);
    if (preamble.done()) return rest;
  }
  return {};
}

// Parses every block after the preamble, in parallel chunks, into the destination when one is given
// (ChunkedBody::place_into); throws the first error in file order.
template <class Scalar, class Index>
ChunkedBody<Scalar, Index> read_body(TextSource& source, const PreambleParser& preamble, std::string_view rest,
                                     const ReadOptions& options, const Destination<Scalar, Index>* destination = nullptr) {
  ChunkedBody<Scalar, Index> body(preamble, options);
  if (destination != nullptr) body.place_into(*destination);
  body.consume(rest);
  for (std::string_view block = source.next_block(); !block.empty(); block = source.next_block()) body.consume(block);
  body.finish();
  return body;
}

[[noreturn]] void refuse(const PreambleParser& preamble, const std::string& reason) {
  throw MatrixMarketError(preamble.name(), preamble.line(), reason);
}

template <class Scalar>
DenseMatrix<Scalar> read_dense_after_preamble(TextSource& source, const PreambleParser& preamble, std::string_view rest,
                                              const ReadOptions& options) {
  const Header& header = preamble.header();
  if (std::string reason = dense_refusal<Scalar>(header, options.max_result_bytes); !reason.empty())
    refuse(preamble, reason);
  if (header.format == Format::array) {
    // Every position is written except a skew-symmetric diagonal, which must be zero. The values of
    // a general file go straight into the matrix.
    const bool skew = header.symmetry == Symmetry::skew_symmetric;
    DenseMatrix<Scalar> matrix = skew ? DenseMatrix<Scalar>::Zero(header.rows, header.cols)
                                      : DenseMatrix<Scalar>(header.rows, header.cols);
    advise_huge_pages(matrix.data(), static_cast<std::size_t>(matrix.size()) * sizeof(Scalar));
    Destination<Scalar, std::int64_t> in_matrix{nullptr, nullptr, matrix.data(), header.stored_entries};
    const bool place = header.symmetry == Symmetry::general;
    auto body = read_body<Scalar, std::int64_t>(source, preamble, rest, options, place ? &in_matrix : nullptr);
    if (!body.placed()) fill_from_array(header, body.chunks(), body.spans(), matrix, body.threads());
    return matrix;
  }
  auto body = read_body<Scalar, std::int64_t>(source, preamble, rest, options);
  DenseSink<Scalar> sink(header);
  for (auto& chunk : body.chunks()) {
    for (std::size_t k = 0; k < chunk.values.size(); ++k) sink.add(chunk.rows[k], chunk.cols[k], chunk.values[k]);
    chunk = {};
  }
  return sink.take();
}

template <class Scalar>
DenseMatrix<Scalar> read_dense_from(TextSource& source, const ReadOptions& options) {
  PreambleParser preamble(source.name(), source.total_bytes());
  const std::string_view rest = read_preamble(source, preamble);
  return read_dense_after_preamble<Scalar>(source, preamble, rest, options);
}

template <class Scalar, class StorageIndex>
SparseMatrix<Scalar, StorageIndex> read_sparse_after_preamble(TextSource& source, const PreambleParser& preamble,
                                                              std::string_view rest, const ReadOptions& options) {
  const Header& header = preamble.header();
  const bool coordinate = header.format == Format::coordinate;
  // The declared count is a lower bound on the result for coordinate files (mirroring only adds);
  // array files say nothing about how many values are nonzero. The exact check follows in assembly.
  const auto least = static_cast<std::uint64_t>(coordinate ? header.stored_entries : 0);
  if (std::string reason = sparse_refusal<Scalar, StorageIndex>(header, least, options.max_result_bytes);
      !reason.empty())
    refuse(preamble, reason);
  if (coordinate && header.symmetry == Symmetry::general) {
    // The entries go straight into the result's row and value arrays (the count is exact for a
    // general file that reads without error), their columns beside them.
    SparseMatrix<Scalar, StorageIndex> matrix(header.rows, header.cols);
    matrix.resizeNonZeros(static_cast<Eigen::Index>(header.stored_entries));
    std::unique_ptr<StorageIndex[]> cols(new StorageIndex[static_cast<std::size_t>(header.stored_entries)]);
    const auto stored = static_cast<std::size_t>(header.stored_entries);
    advise_huge_pages(matrix.innerIndexPtr(), stored * sizeof(StorageIndex));
    advise_huge_pages(matrix.valuePtr(), stored * sizeof(Scalar));
    advise_huge_pages(cols.get(), stored * sizeof(StorageIndex));
    Destination<Scalar, StorageIndex> in_matrix{matrix.innerIndexPtr(), cols.get(), matrix.valuePtr(),
                                                header.stored_entries};
    auto body = read_body<Scalar, StorageIndex>(source, preamble, rest, options, &in_matrix);
    return assemble_placed(header, matrix, cols, body.spans(), preamble.name(), options.max_result_bytes,
                           body.threads());
  }
  auto body = read_body<Scalar, StorageIndex>(source, preamble, rest, options);
  const auto release = [&] { body.release_chunks(); };
  if (coordinate)
    return assemble_sparse(header, body.spans(), preamble.name(), options.max_result_bytes, body.threads(), release);
  std::vector<Chunk<Scalar, StorageIndex>> entries = array_as_entries(header, body.chunks());
  const std::vector<EntrySpan<Scalar, StorageIndex>> spans{
      {entries[0].rows.data(), entries[0].cols.data(), entries[0].values.data(), entries[0].values.size()}};
  return assemble_sparse(header, spans, preamble.name(), options.max_result_bytes, body.threads(),
                         [&] { entries = {}; });
}

template <class Scalar, class StorageIndex>
SparseMatrix<Scalar, StorageIndex> read_sparse_from(TextSource& source, const ReadOptions& options) {
  PreambleParser preamble(source.name(), source.total_bytes());
  const std::string_view rest = read_preamble(source, preamble);
  return read_sparse_after_preamble<Scalar, StorageIndex>(source, preamble, rest, options);
}

// Reads into `result` (the caller's, returned by name: Eigen 3.4's SparseMatrix has no move
// constructor, so returning a sparse AnyMatrix that is not elided copies every entry on one thread).
template <class Scalar, class StorageIndex>
void read_matrix_into(TextSource& source, const ReadOptions& options, AnyMatrix<Scalar, StorageIndex>& result) {
  PreambleParser preamble(source.name(), source.total_bytes());
  const std::string_view rest = read_preamble(source, preamble);
  const Header& header = preamble.header();
  result.header = header;
  if (header.format == Format::array) {
    result.matrix = read_dense_after_preamble<Scalar>(source, preamble, rest, options);
    return;
  }
  SparseMatrix<Scalar, StorageIndex> sparse =
      read_sparse_after_preamble<Scalar, StorageIndex>(source, preamble, rest, options);
  // The density rule (ReadOptions::dense_threshold), on the assembled count: long double keeps
  // rows*cols exact enough for any dimensions.
  const long double cells = static_cast<long double>(header.rows) * static_cast<long double>(header.cols);
  const bool dense_enough = static_cast<long double>(sparse.nonZeros()) >= options.dense_threshold * cells;
  if (dense_enough && dense_refusal<Scalar>(header, options.max_result_bytes).empty()) {
    result.matrix = DenseMatrix<Scalar>(sparse.toDense());
    return;
  }
  result.matrix.template emplace<1>().swap(sparse);
}

template <class Scalar, class StorageIndex>
AnyMatrix<Scalar, StorageIndex> read_matrix_from(TextSource& source, const ReadOptions& options) {
  AnyMatrix<Scalar, StorageIndex> result;
  read_matrix_into(source, options, result);
  return result;
}

}  // namespace
}  // namespace detail

Header read_header(const std::filesystem::path& path) {
  detail::TextSource source(path);
  detail::PreambleParser preamble(source.name(), source.total_bytes());
  detail::read_preamble(source, preamble);
  return preamble.header();
}

Header parse_header(std::string_view text, std::string_view name) {
  detail::TextSource source(text, name);
  detail::PreambleParser preamble(source.name(), source.total_bytes());
  detail::read_preamble(source, preamble);
  return preamble.header();
}

template <SupportedScalar Scalar, SupportedIndex StorageIndex>
SparseMatrix<Scalar, StorageIndex> read_sparse(const std::filesystem::path& path, const ReadOptions& options) {
  detail::TextSource source(path);
  return detail::read_sparse_from<Scalar, StorageIndex>(source, options);
}

template <SupportedScalar Scalar, SupportedIndex StorageIndex>
SparseMatrix<Scalar, StorageIndex> parse_sparse(std::string_view text, std::string_view name,
                                                const ReadOptions& options) {
  detail::TextSource source(text, name);
  return detail::read_sparse_from<Scalar, StorageIndex>(source, options);
}

template <SupportedScalar Scalar>
DenseMatrix<Scalar> read_dense(const std::filesystem::path& path, const ReadOptions& options) {
  detail::TextSource source(path);
  return detail::read_dense_from<Scalar>(source, options);
}

template <SupportedScalar Scalar>
DenseMatrix<Scalar> parse_dense(std::string_view text, std::string_view name, const ReadOptions& options) {
  detail::TextSource source(text, name);
  return detail::read_dense_from<Scalar>(source, options);
}

template <SupportedScalar Scalar, SupportedIndex StorageIndex>
AnyMatrix<Scalar, StorageIndex> read_matrix(const std::filesystem::path& path, const ReadOptions& options) {
  detail::TextSource source(path);
  return detail::read_matrix_from<Scalar, StorageIndex>(source, options);
}

template <SupportedScalar Scalar, SupportedIndex StorageIndex>
AnyMatrix<Scalar, StorageIndex> parse_matrix(std::string_view text, std::string_view name,
                                             const ReadOptions& options) {
  detail::TextSource source(text, name);
  return detail::read_matrix_from<Scalar, StorageIndex>(source, options);
}

#define PAGH_MATRIX_IO_INSTANTIATE(Scalar, StorageIndex)                                                  \
  template SparseMatrix<Scalar, StorageIndex> read_sparse<Scalar, StorageIndex>(const std::filesystem::path&, \
                                                                                const ReadOptions&);       \
  template SparseMatrix<Scalar, StorageIndex> parse_sparse<Scalar, StorageIndex>(                          \
      std::string_view, std::string_view, const ReadOptions&);                                             \
  template AnyMatrix<Scalar, StorageIndex> read_matrix<Scalar, StorageIndex>(const std::filesystem::path&, \
                                                                             const ReadOptions&);          \
  template AnyMatrix<Scalar, StorageIndex> parse_matrix<Scalar, StorageIndex>(                             \
      std::string_view, std::string_view, const ReadOptions&);
PAGH_MATRIX_IO_INSTANTIATE(double, int)
PAGH_MATRIX_IO_INSTANTIATE(double, std::int64_t)
PAGH_MATRIX_IO_INSTANTIATE(float, int)
PAGH_MATRIX_IO_INSTANTIATE(float, std::int64_t)
#undef PAGH_MATRIX_IO_INSTANTIATE
template DenseMatrix<double> read_dense<double>(const std::filesystem::path&, const ReadOptions&);
template DenseMatrix<float> read_dense<float>(const std::filesystem::path&, const ReadOptions&);
template DenseMatrix<double> parse_dense<double>(std::string_view, std::string_view, const ReadOptions&);
template DenseMatrix<float> parse_dense<float>(std::string_view, std::string_view, const ReadOptions&);

}  // namespace pagh::matrix_io
