// GPU ranks' sums on their devices (distributed/nccl_sum.hpp), under mpirun (label gpu). Every rank
// builds the same workload, sketches its share of the inner indices on GPU local rank % GPUs with
// pagh::cuda::compress, and the NCCL sums (sum_device_sketches, with its host copy, and
// sum_on_device, left on the device) are compared with
//   - one process on one GPU (pagh::cuda::compress of the whole product): bit for bit for integer
//     inputs, within the rounding bound of sketch_checks.hpp for the others;
//   - the host sum of the same partial sketches (pagh::mpi::sum_sketches): bit for bit always (the
//     same rank-order additions from +0.0, compared with memcmp, so -0.0 and +0.0 differ), with the
//     same tables, and the same top-k and threshold answers from the device as from the host.
// NCCL needs a GPU per rank: with fewer GPUs than ranks connect() must refuse on every rank (that is
// tested), and the sums are skipped.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstring>
#include <exception>
#include <future>
#include <optional>
#include <limits>
#include <string>
#include <vector>

#include "distributed/mpi_compress.hpp"
#include "distributed/nccl_sum.hpp"
#include "matrix_io/synthetic.hpp"
#include "mpi_test_support.hpp"
#include "sketch/cuda.hpp"
#include "sketch/sketch.hpp"
#include "sketch_checks.hpp"

namespace {

namespace mio = pagh::matrix_io;
using pagh::test::columns;
using pagh::test::rank_of;
using pagh::test::ranks;
using pagh::test::rows;

int gpu_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) (void)cudaGetLastError(), n = 0;
  return n;
}

// Collective (local_rank is): call it on every rank at once, never from a branch that some ranks skip.
int my_gpu() { return pagh::mpi::local_rank(MPI_COMM_WORLD) % std::max(gpu_count(), 1); }
// Every rank sees the same count (one node); the sums run where every rank has a GPU of its own.
bool gpu_per_rank() { return gpu_count() >= ranks(); }

// Contiguous, uneven shares: rank r gets a share proportional to r + 1 (none with empty_rank = r).
std::pair<std::int64_t, std::int64_t> my_range(std::int64_t K, int empty_rank = -1) {
  double total = 0, before = 0;
  for (int r = 0; r < ranks(); ++r) total += r == empty_rank ? 0.0 : r + 1.0;
  for (int r = 0; r < rank_of(); ++r) before += r == empty_rank ? 0.0 : r + 1.0;
  const double mine = rank_of() == empty_rank ? 0.0 : rank_of() + 1.0;
  const auto at = [&](double w) { return static_cast<std::int64_t>(std::llround(w / total * static_cast<double>(K))); };
  return {at(before), at(before + mine)};
}

class NcclSumTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (gpu_count() == 0) GTEST_SKIP() << "no CUDA device";
    if (!gpu_per_rank()) GTEST_SKIP() << ranks() << " ranks, " << gpu_count() << " GPUs: NCCL needs a GPU per rank";
    gpu_ = my_gpu();
    std::string why;
    nccl_ = pagh::mpi::NcclSum::connect(MPI_COMM_WORLD, gpu_, &why);
    ASSERT_TRUE(nccl_) << "rank " << rank_of() << ": " << why;
  }

  // The NCCL sum of this rank's share against one GPU and against the host sum of the same partials.
  template <class MA, class MB>
  void check(const MA& A, const MB& B, const pagh::SketchParams& params, bool exact, int root, int empty_rank = -1) {
    const auto range = my_range(A.cols(), empty_rank);
    // A failure here on one rank fails the test on every rank (agree), instead of leaving the others
    // waiting in the sum.
    std::optional<pagh::cuda::DeviceProduct> partial;
    std::exception_ptr failure;
    try {
      partial.emplace(pagh::cuda::compress(columns(A, range), rows(B, range), pagh::mpi::share_params(params), {.device = gpu_}));
    } catch (...) {
      failure = std::current_exception();
    }
    pagh::mpi::agree(MPI_COMM_WORLD, failure);
    const auto on_devices = pagh::mpi::sum_device_sketches(*partial, *nccl_, root);
    const auto kept = pagh::mpi::sum_on_device(*partial, *nccl_, root);
    const auto on_hosts = pagh::mpi::sum_sketches(partial->to_host(), MPI_COMM_WORLD, root);
    const bool receives = root == pagh::mpi::kEveryRank || rank_of() == root;
    ASSERT_EQ(on_devices.has_value(), receives);
    ASSERT_EQ(kept.has_value(), receives);
    ASSERT_EQ(on_hosts.has_value(), receives);
    if (!receives) return;
    const std::size_t values = static_cast<std::size_t>(on_hosts->buckets() * on_hosts->repetitions());
    EXPECT_EQ(std::memcmp(on_devices->sketch(0).data(), on_hosts->sketch(0).data(), values * sizeof(double)), 0)
        << "rank " << rank_of() << ": the NCCL sum differs from the host sum";
    // The sum kept on the device: the same values and tables, and its queries give the host sum's answers.
    const pagh::CompressedProduct kept_host = kept->to_host();
    EXPECT_EQ(std::memcmp(kept_host.sketch(0).data(), on_hosts->sketch(0).data(), values * sizeof(double)), 0)
        << "rank " << rank_of() << ": the sum kept on the device differs from the host sum";
    EXPECT_TRUE(kept_host.tables().bucket_a == on_hosts->tables().bucket_a && kept_host.tables().bucket_b == on_hosts->tables().bucket_b &&
                kept_host.tables().sign_a == on_hosts->tables().sign_a && kept_host.tables().sign_b == on_hosts->tables().sign_b);
    EXPECT_EQ(kept->inner(), on_hosts->inner());
    EXPECT_TRUE(on_devices->on_device()) << "sum_device_sketches' product answers on the device";
    expect_same_answers(*kept, *on_hosts);
    expect_same_answers(*on_devices, *on_hosts);
    const pagh::cuda::DeviceProduct single_device = pagh::cuda::compress(A, B, params, {.device = gpu_});
    const pagh::CompressedProduct single = single_device.to_host();
    pagh::test::expect_sketches(*on_devices, single, exact ? 0.0 : pagh::test::tolerance_for(A, B, single.buckets(), params.precision));
    // Measured on the device in the same order as one GPU measures its own sketch.
    if (exact) EXPECT_EQ(kept->frobenius_estimate(), single_device.frobenius_estimate());
    if (root == pagh::mpi::kEveryRank) pagh::test::expect_same_on_every_rank(*on_devices);
  }

  // top_k and above (heavy buckets and the exhaustive scan) of `got` equal those of the host-only `want`, entry for entry.
  template <class Product>
  static void expect_same_answers(const Product& got, const pagh::CompressedProduct& want) {
    const auto same = [](const std::vector<pagh::Entry>& x, const std::vector<pagh::Entry>& y) {
      ASSERT_EQ(x.size(), y.size());
      for (std::size_t r = 0; r < x.size(); ++r)
        ASSERT_TRUE(x[r].row == y[r].row && x[r].col == y[r].col && x[r].value == y[r].value && x[r].spread == y[r].spread)
            << "rank " << rank_of() << ", answer " << r << ": (" << x[r].row << ", " << x[r].col << ") " << x[r].value << " against ("
            << y[r].row << ", " << y[r].col << ") " << y[r].value;
    };
    const std::vector<pagh::Entry> top = want.top_k(20);
    ASSERT_FALSE(top.empty());
    same(got.top_k(20), top);
    const double threshold = std::fabs(top.back().value);
    for (pagh::Recovery how : {pagh::Recovery::heavy_buckets, pagh::Recovery::exhaustive})
      same(got.above(threshold, std::size_t{1} << 26, how), want.above(threshold, std::size_t{1} << 26, how));
  }

  int gpu_ = 0;
  std::unique_ptr<pagh::mpi::NcclSum> nccl_;
};

TEST(NcclConnect, ConnectsOnlyWithAGpuPerRank) {
  if (gpu_count() == 0) GTEST_SKIP() << "no CUDA device";
  const int gpu = my_gpu();
  std::string why;
  const auto nccl = pagh::mpi::NcclSum::connect(MPI_COMM_WORLD, gpu, &why);
  EXPECT_EQ(nccl != nullptr, gpu_per_rank()) << "rank " << rank_of() << ": " << why;
  int connected = nccl != nullptr, everywhere = connected;
  MPI_Allreduce(MPI_IN_PLACE, &everywhere, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  EXPECT_EQ(connected, everywhere) << "the ranks disagree";
  if (!nccl) EXPECT_NE(why.find("share one GPU"), std::string::npos) << why;
  // A device that does not exist: refused on every rank, whichever rank names it.
  const auto none = pagh::mpi::NcclSum::connect(MPI_COMM_WORLD, rank_of() == ranks() - 1 ? 1000 : gpu, &why);
  EXPECT_EQ(none, nullptr);
  EXPECT_NE(why.find("rank " + std::to_string(ranks() - 1) + " has no usable CUDA device"), std::string::npos) << why;
}

TEST_F(NcclSumTest, IntegerInputsMatchOneGpuBitForBit) {
  for (std::uint64_t seed : {1, 2}) {
    const auto dense = mio::planted_dense({.m = 300, .k = 500, .p = 200, .seed = seed, .planted = 3, .integer_entries = true});
    check(dense.a, dense.b, {.seed = seed}, true, pagh::mpi::kEveryRank);
    check(dense.a, dense.b, {.seed = seed}, true, ranks() - 1);
    const auto sparse = mio::sparse_product({.m = 3000, .k = 2000, .p = 2500, .seed = seed + 4, .integer_entries = true});
    check(sparse.a, sparse.b, {.seed = seed}, true, 0);
    // Float inputs sketch in float on the GPU.
    check(Eigen::MatrixXf(dense.a.cast<float>()), Eigen::MatrixXf(dense.b.cast<float>()), {.seed = seed}, true, 0);
  }
}

// warm_up (NCCL's connections made on a thread while the ranks sketch) changes no sum: the sums
// after it equal the host sum bit for bit (check), and a communicator warmed up and dropped unused
// frees itself on every rank.
TEST_F(NcclSumTest, SumsAfterAWarmUpAreTheSame) {
  {
    auto unused = pagh::mpi::NcclSum::connect(MPI_COMM_WORLD, gpu_);
    ASSERT_TRUE(unused);
    unused->warm_up();
  }
  nccl_->warm_up();
  nccl_->warm_up();  // a second one waits for the first
  const auto sparse = mio::sparse_product({.m = 3000, .k = 2000, .p = 2500, .seed = 7, .integer_entries = true});
  check(sparse.a, sparse.b, {.seed = 2}, true, 0);
  nccl_->warm_up();  // after sums too
  check(sparse.a, sparse.b, {.seed = 3}, true, pagh::mpi::kEveryRank);
}

// connect() on a thread of its own, on a duplicate of the communicator, while the main thread runs
// collectives on the original (what mpirun pagh-mm does beside its read): it connects, its sums equal
// the host sum bit for bit, and a rank without its device still gives nullptr on every rank.
TEST_F(NcclSumTest, ConnectsOnAThreadBesideOtherCollectives) {
  int granted = 0;
  MPI_Query_thread(&granted);
  if (granted < MPI_THREAD_MULTIPLE) GTEST_SKIP() << "MPI_THREAD_MULTIPLE not granted";
  MPI_Comm beside = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &beside);
  const auto sparse = mio::sparse_product({.m = 3000, .k = 2000, .p = 2500, .seed = 11, .integer_entries = true});
  for (const bool refused : {false, true}) {
    const int device = refused && rank_of() == ranks() - 1 ? 1000 : gpu_;
    auto connecting = std::async(std::launch::async, [&] {
      auto connected = pagh::mpi::NcclSum::connect(beside, device);
      if (connected) connected->warm_up();
      return connected;
    });
    long long total = 0;  // meanwhile, collectives of the main thread
    for (int i = 0; i < 200; ++i) {
      const long long mine = rank_of() + i;
      MPI_Allreduce(&mine, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
      ASSERT_EQ(total, static_cast<long long>(ranks()) * (ranks() - 1) / 2 + static_cast<long long>(ranks()) * i);
    }
    std::unique_ptr<pagh::mpi::NcclSum> connected = connecting.get();
    if (refused) {
      EXPECT_FALSE(connected) << "rank " << rank_of() << ": connected although the last rank has no such device";
      continue;
    }
    ASSERT_TRUE(connected);
    EXPECT_EQ(connected->comm(), beside);
    std::swap(nccl_, connected);  // check() sums with nccl_
    check(sparse.a, sparse.b, {.seed = 4}, true, 0);
    std::swap(nccl_, connected);
  }
  MPI_Comm_free(&beside);
}

// 3 x 2^23 values: two pieces of the sum, the second shorter and split unevenly.
TEST_F(NcclSumTest, SumsLongerThanAPiece) {
  const auto sparse = mio::sparse_product({.m = 2000, .k = 1500, .p = 1800, .seed = 9, .integer_entries = true});
  check(sparse.a, sparse.b, {.buckets = std::int64_t{1} << 23, .seed = 3}, true, pagh::mpi::kEveryRank);
}

TEST_F(NcclSumTest, FloatInputsAgreeToRoundingAndEqualTheHostSum) {
  for (auto precision : {fwht::DType::f32, fwht::DType::f64}) {
    const pagh::SketchParams params{.seed = 11, .precision = precision};
    const auto planted = mio::planted_dense({.m = 200, .k = 300, .p = 150, .seed = 4});
    check(planted.a, planted.b, params, false, 0);
    const auto sparse = mio::sparse_product({.m = 2000, .k = 1500, .p = 1800, .seed = 9});
    check(sparse.a, sparse.b, params, false, pagh::mpi::kEveryRank);
    const auto low_rank = mio::low_rank_plus_sparse({.m = 300, .k = 250, .p = 200, .seed = 3});
    check(low_rank.a, low_rank.b, params, false, 0);
    const auto covariance = mio::sample_covariance({.samples = 400, .features = 150, .seed = 8});
    check(covariance.a, covariance.b, params, false, 0);
  }
}

TEST_F(NcclSumTest, ARankWithoutInnerIndices) {
  const auto sparse = mio::sparse_product({.m = 800, .k = 600, .p = 700, .seed = 2, .integer_entries = true});
  check(sparse.a, sparse.b, {.seed = 3}, true, 0, ranks() - 1);
}

// pagh::sketch's CUDA products (a host copy holding the device copy) and host-only products (a
// rank with nothing to sketch, as pagh-mm makes one) in the same sum.
TEST_F(NcclSumTest, CompressedProductsWithAndWithoutDeviceCopies) {
  const auto w = mio::sparse_product({.m = 1000, .k = 800, .p = 900, .seed = 6, .integer_entries = true});
  const auto range = my_range(w.a.cols(), ranks() - 1);
  pagh::SketchParams params{.seed = 5, .backend = pagh::Backend::cuda, .device = gpu_};
  const std::int64_t buckets = pagh::sketch_length(w.a.rows(), w.b.cols(), params);
  const pagh::CompressedProduct partial =
      range.first == range.second
          ? pagh::CompressedProduct(w.a.rows(), w.b.cols(), 0, params,
                                    pagh::draw_hash_tables(params.seed, params.repetitions, w.a.rows(), w.b.cols(), buckets),
                                    std::vector<double>(static_cast<std::size_t>(buckets * params.repetitions), 0.0))
          : pagh::sketch(columns(w.a, range), rows(w.b, range), pagh::mpi::share_params(params));
  EXPECT_EQ(partial.device_sketches() != nullptr, range.first != range.second);
  const auto got = pagh::mpi::sum_device_sketches(partial, *nccl_, 0);
  const auto kept = pagh::mpi::sum_on_device(partial, *nccl_, 0);
  ASSERT_EQ(got.has_value(), rank_of() == 0);
  ASSERT_EQ(kept.has_value(), rank_of() == 0);
  if (!got) return;
  const pagh::CompressedProduct single = pagh::cuda::compress(w.a, w.b, params, {.device = gpu_}).to_host();
  pagh::test::expect_sketches(*got, single, 0.0);
  pagh::test::expect_sketches(kept->to_host(), single, 0.0);
}

TEST_F(NcclSumTest, DifferentShapesFailOnEveryRank) {
  const auto w = mio::sparse_product({.m = 300, .k = 200, .p = 250, .seed = 1, .integer_entries = true});
  const auto range = my_range(w.a.cols());
  // The last rank sketches with another seed.
  const pagh::SketchParams params{.seed = rank_of() == ranks() - 1 ? 8u : 7u};
  const auto partial = pagh::cuda::compress(columns(w.a, range), rows(w.b, range), params, {.device = gpu_});
  try {
    pagh::mpi::sum_device_sketches(partial, *nccl_, 0);
    ADD_FAILURE() << "rank " << rank_of() << ": no failure";
  } catch (const pagh::Error& e) {
    EXPECT_NE(std::string(e.what()).find("the ranks differ in the seed"), std::string::npos) << e.what();
  }
}

}  // namespace

int main(int argc, char** argv) { return pagh::test::run_mpi_tests(argc, argv, {}, MPI_THREAD_MULTIPLE); }
