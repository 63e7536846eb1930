// The shuffle by inner index (inner_shuffle.hpp).
#include "inner_shuffle.hpp"

#include <algorithm>

#include "compress/huge_pages.hpp"

namespace pagh::mpi::detail {
namespace {

std::int64_t inner_of(const Triplet& e, Inner inner) { return inner == Inner::column ? e.col : e.row; }

}  // namespace

Triplets fresh_triplets(std::size_t n, int threads) {
  Triplets out(n);
  const std::size_t bytes = n * sizeof(Triplet);
  cpu_sketch::advise_huge_pages(out.data(), bytes);
  constexpr std::size_t kPage = 4096;
  auto* const first = reinterpret_cast<unsigned char*>(out.data());
  const auto pages = static_cast<std::int64_t>((bytes + kPage - 1) / kPage);
#pragma omp parallel for num_threads(threads_for(n, threads)) schedule(static)
  for (std::int64_t page = 0; page < pages; ++page) first[static_cast<std::size_t>(page) * kPage] = 0;
  return out;
}

std::vector<std::int64_t> inner_bounds(const Triplets& a, const Triplets& b, std::int64_t K, MPI_Comm comm, int threads) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  // Bound r is the first edge of the 2^22 (at most) fine bins of k at which the entries before
  // reach r / size of all. Counted in two rounds, each with a small sum across the ranks: coarse
  // bins of kFine fine ones, then the fine bins of only the coarse bins where a bound falls (a count
  // of every fine bin would be 32 MB of random increments per rank and 32 MB to sum).
  constexpr std::int64_t kFine = 1024;
  const std::int64_t bins = std::max<std::int64_t>(1, std::min<std::int64_t>(K, std::int64_t{1} << 22));
  const std::int64_t coarse = (bins + kFine - 1) / kFine;
  const auto bin = [&](const Triplet& e, Inner inner) { return K == 0 ? 0 : inner_of(e, inner) * bins / K; };
  // counts[g]: the entries whose fine bin f has group(f) = g >= 0 (one pass over both sides).
  const auto count_by = [&](auto group, std::int64_t groups) {
    std::vector<std::int64_t> counts(static_cast<std::size_t>(groups), 0);
    for (const auto& [entries, inner] : {std::pair<const Triplets&, Inner>{a, Inner::column}, {b, Inner::row}}) {
      const auto n = static_cast<std::int64_t>(entries.size());
#pragma omp parallel num_threads(threads_for(entries.size(), threads))
      {
        std::vector<std::int64_t> mine(static_cast<std::size_t>(groups), 0);
#pragma omp for schedule(static) nowait
        for (std::int64_t e = 0; e < n; ++e)
          if (const std::int64_t g = group(bin(entries[static_cast<std::size_t>(e)], inner)); g >= 0) ++mine[static_cast<std::size_t>(g)];
#pragma omp critical(pagh_inner_bounds)
        for (std::size_t g = 0; g < counts.size(); ++g) counts[g] += mine[g];
      }
    }
    MPI_Allreduce(MPI_IN_PLACE, counts.data(), static_cast<int>(groups), MPI_INT64_T, MPI_SUM, comm);
    return counts;
  };
  const std::vector<std::int64_t> by_coarse = count_by([](std::int64_t f) { return f / kFine; }, coarse);
  std::int64_t all = 0;
  for (std::int64_t c : by_coarse) all += c;
  // Bound r's coarse bin: the first whose end reaches past r / size of the entries (coarse if none).
  std::vector<std::int64_t> where(static_cast<std::size_t>(size), coarse), picked;  // picked: the distinct ones, in order
  for (std::int64_t r = 1, c = 0, seen = 0; r < size; ++r) {
    while (c < coarse && (seen + by_coarse[static_cast<std::size_t>(c)]) * size <= all * r) seen += by_coarse[static_cast<std::size_t>(c++)];
    where[static_cast<std::size_t>(r)] = c;
    if (c < coarse && (picked.empty() || picked.back() != c)) picked.push_back(c);
  }
  const auto slot = [&](std::int64_t c) { return std::lower_bound(picked.begin(), picked.end(), c) - picked.begin(); };
  const std::vector<std::int64_t> by_fine = count_by(
      [&](std::int64_t f) -> std::int64_t {
        const std::int64_t c = f / kFine, s = slot(c);
        return s < static_cast<std::int64_t>(picked.size()) && picked[static_cast<std::size_t>(s)] == c ? s * kFine + f % kFine : -1;
      },
      static_cast<std::int64_t>(picked.size()) * kFine);
  std::vector<std::int64_t> bounds(static_cast<std::size_t>(size) + 1, K);
  bounds[0] = 0;
  for (int r = 1; r < size; ++r) {
    const std::int64_t c = where[static_cast<std::size_t>(r)];
    std::int64_t i = bins;  // the first fine bin whose end reaches past r / size (bins if none)
    if (c < coarse) {
      std::int64_t seen = 0;
      for (std::int64_t before = 0; before < c; ++before) seen += by_coarse[static_cast<std::size_t>(before)];
      const std::int64_t s = slot(c);
      i = c * kFine;
      while (i < std::min(bins, (c + 1) * kFine) && (seen + by_fine[static_cast<std::size_t>(s * kFine + i % kFine)]) * size <= all * r)
        seen += by_fine[static_cast<std::size_t>(s * kFine + i++ % kFine)];
    }
    bounds[static_cast<std::size_t>(r)] = std::max(bounds[static_cast<std::size_t>(r) - 1], (K * i + bins - 1) / bins);
  }
  return bounds;
}

Triplets shuffle(Triplets entries, const std::vector<std::int64_t>& bounds, Inner inner, MPI_Comm comm, int threads) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  if (size == 1) return entries;  // every entry stays, in file order
  const auto owner = [&](const Triplet& e) {
    return static_cast<int>(std::upper_bound(bounds.begin() + 1, bounds.end() - 1, inner_of(e, inner)) - (bounds.begin() + 1));
  };
  const auto s = static_cast<std::size_t>(size);
  Grouped out = group_stably(entries, s, owner, threads);
  Triplets().swap(entries);
  std::vector<int> send_counts(s), send_at(s, 0), receive_counts(s), receive_at(s, 0);
  for (std::size_t r = 0; r < s; ++r) {
    send_counts[r] = static_cast<int>(out.start[r + 1] - out.start[r]);
    if (r > 0) send_at[r] = send_at[r - 1] + send_counts[r - 1];
  }
  MPI_Alltoall(send_counts.data(), 1, MPI_INT, receive_counts.data(), 1, MPI_INT, comm);
  for (std::size_t r = 1; r < s; ++r) receive_at[r] = receive_at[r - 1] + receive_counts[r - 1];
  Triplets received = fresh_triplets(static_cast<std::size_t>(receive_at[s - 1]) + static_cast<std::size_t>(receive_counts[s - 1]), threads);
  MPI_Datatype triplet;
  MPI_Type_contiguous(sizeof(Triplet), MPI_BYTE, &triplet);
  MPI_Type_commit(&triplet);
  MPI_Alltoallv(out.entries.data(), send_counts.data(), send_at.data(), triplet, received.data(), receive_counts.data(), receive_at.data(),
                triplet, comm);
  MPI_Type_free(&triplet);
  return received;
}

}  // namespace pagh::mpi::detail
