// The exact sparse product on the GPU for sketch_bench (cusparse_product.hpp): cuSPARSE SpGEMM,
// checked against Eigen's product so that the time is that of a correct result.
#include "cusparse_product.hpp"
#include "device_top_k.hpp"

#include <cuda_runtime.h>
#include <cusparse.h>

#include <Eigen/SparseCore>
#include <algorithm>
#include <chrono>
#include <functional>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

void check(cudaError_t s, const char* what) {
  if (s != cudaSuccess) throw std::runtime_error(std::string("cusparse_product: ") + what + ": " + cudaGetErrorString(s));
}
void check(cusparseStatus_t s, const char* what) {
  if (s != CUSPARSE_STATUS_SUCCESS)
    throw std::runtime_error(std::string("cusparse_product: ") + what + ": " + cusparseGetErrorString(s));
}

template <class T>
struct DeviceVector {
  T* p = nullptr;
  explicit DeviceVector(std::size_t n) {
    if (n) check(cudaMalloc(&p, n * sizeof(T)), "cudaMalloc");
  }
  DeviceVector(const DeviceVector&) = delete;
  DeviceVector& operator=(const DeviceVector&) = delete;
  ~DeviceVector() { cudaFree(p); }
};

// A CSR matrix on the device (FP32 values, 32-bit indices).
struct DeviceCsr {
  std::int64_t rows, cols, nnz;
  DeviceVector<int> offsets, columns;
  DeviceVector<float> values;
  explicit DeviceCsr(const Eigen::SparseMatrix<double>& m)
      : rows(m.rows()), cols(m.cols()), nnz(m.nonZeros()), offsets(rows + 1), columns(nnz), values(nnz) {
    Eigen::SparseMatrix<float, Eigen::RowMajor, int> csr = m.cast<float>();
    csr.makeCompressed();
    check(cudaMemcpy(offsets.p, csr.outerIndexPtr(), (rows + 1) * sizeof(int), cudaMemcpyHostToDevice), "upload");
    check(cudaMemcpy(columns.p, csr.innerIndexPtr(), nnz * sizeof(int), cudaMemcpyHostToDevice), "upload");
    check(cudaMemcpy(values.p, csr.valuePtr(), nnz * sizeof(float), cudaMemcpyHostToDevice), "upload");
  }
  cusparseSpMatDescr_t descriptor() {
    cusparseSpMatDescr_t d;
    check(cusparseCreateCsr(&d, rows, cols, nnz, offsets.p, columns.p, values.p, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                            CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F),
          "cusparseCreateCsr");
    return d;
  }
};

struct HostCsr {
  std::vector<int> offsets, columns;
  std::vector<float> values;
};

// The cuSPARSE library handle, released on every path out.
struct Handle {
  cusparseHandle_t h = nullptr;
  Handle() { check(cusparseCreate(&h), "cusparseCreate"); }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { cusparseDestroy(h); }
};

// Median wall time of `reps` calls of f (synchronized calls), after `warmup` untimed ones.
template <class F>
double median_ms(int reps, int warmup, F&& f) {
  std::vector<double> times;
  for (int r = 0; r < warmup + std::max(reps, 1); ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    if (r >= warmup) times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// What a caller does with C while it is on the device (offsets, columns, values, rows, nnz).
using OnDevice = std::function<void(const int*, const int*, const float*, std::int64_t, std::int64_t)>;

// One complete SpGEMM, C = A B; with `result`, C is also copied to the host; with `use`, C is
// handed to it before it is freed.
void spgemm(cusparseHandle_t handle, DeviceCsr& a, DeviceCsr& b, HostCsr* result, std::int64_t* nnz_out,
            const OnDevice& use = nullptr) {
  const float one = 1.0f, zero = 0.0f;
  constexpr auto op = CUSPARSE_OPERATION_NON_TRANSPOSE;
  constexpr auto alg = CUSPARSE_SPGEMM_DEFAULT;
  cusparseSpMatDescr_t ma = a.descriptor(), mb = b.descriptor(), mc;
  check(cusparseCreateCsr(&mc, a.rows, b.cols, 0, nullptr, nullptr, nullptr, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                          CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F),
        "cusparseCreateCsr (C)");
  cusparseSpGEMMDescr_t desc;
  check(cusparseSpGEMM_createDescr(&desc), "cusparseSpGEMM_createDescr");
  std::size_t bytes1 = 0, bytes2 = 0;
  check(cusparseSpGEMM_workEstimation(handle, op, op, &one, ma, mb, &zero, mc, CUDA_R_32F, alg, desc, &bytes1, nullptr),
        "workEstimation");
  DeviceVector<char> buffer1(bytes1);
  check(cusparseSpGEMM_workEstimation(handle, op, op, &one, ma, mb, &zero, mc, CUDA_R_32F, alg, desc, &bytes1, buffer1.p),
        "workEstimation");
  check(cusparseSpGEMM_compute(handle, op, op, &one, ma, mb, &zero, mc, CUDA_R_32F, alg, desc, &bytes2, nullptr), "compute");
  DeviceVector<char> buffer2(bytes2);
  check(cusparseSpGEMM_compute(handle, op, op, &one, ma, mb, &zero, mc, CUDA_R_32F, alg, desc, &bytes2, buffer2.p), "compute");
  std::int64_t rows = 0, cols = 0, nnz = 0;
  check(cusparseSpMatGetSize(mc, &rows, &cols, &nnz), "cusparseSpMatGetSize");
  DeviceVector<int> c_offsets(rows + 1), c_columns(nnz);
  DeviceVector<float> c_values(nnz);
  check(cusparseCsrSetPointers(mc, c_offsets.p, c_columns.p, c_values.p), "cusparseCsrSetPointers");
  check(cusparseSpGEMM_copy(handle, op, op, &one, ma, mb, &zero, mc, CUDA_R_32F, alg, desc), "cusparseSpGEMM_copy");
  check(cudaDeviceSynchronize(), "SpGEMM");
  if (result) {
    result->offsets.resize(rows + 1), result->columns.resize(nnz), result->values.resize(nnz);
    check(cudaMemcpy(result->offsets.data(), c_offsets.p, (rows + 1) * sizeof(int), cudaMemcpyDeviceToHost), "download");
    check(cudaMemcpy(result->columns.data(), c_columns.p, nnz * sizeof(int), cudaMemcpyDeviceToHost), "download");
    check(cudaMemcpy(result->values.data(), c_values.p, nnz * sizeof(float), cudaMemcpyDeviceToHost), "download");
  }
  if (use) use(c_offsets.p, c_columns.p, c_values.p, rows, nnz);
  *nnz_out = nnz;
  cusparseSpGEMM_destroyDescr(desc);
  cusparseDestroySpMat(ma), cusparseDestroySpMat(mb), cusparseDestroySpMat(mc);
}

}  // namespace

GpuSparseProduct cusparse_product(const Eigen::SparseMatrix<double>& a, const Eigen::SparseMatrix<double>& b, int reps) {
  Handle handle;
  GpuSparseProduct out;
  {
    DeviceCsr da(a), db(b);
    HostCsr c;
    spgemm(handle.h, da, db, &c, &out.nnz);  // also the warm-up
    // Check against Eigen: every entry of the exact product, relative to its largest magnitude.
    const Eigen::SparseMatrix<double, Eigen::RowMajor> exact = (a * b).pruned(0.0);
    double largest = 0, worst = 0;
    for (Eigen::Index r = 0; r < exact.outerSize(); ++r)
      for (Eigen::SparseMatrix<double, Eigen::RowMajor>::InnerIterator it(exact, r); it; ++it) largest = std::max(largest, std::abs(it.value()));
    Eigen::SparseMatrix<double, Eigen::RowMajor> gpu(a.rows(), b.cols());
    std::vector<Eigen::Triplet<double>> entries;
    entries.reserve(c.values.size());
    for (Eigen::Index r = 0; r < a.rows(); ++r)
      for (int k = c.offsets[r]; k < c.offsets[r + 1]; ++k) entries.emplace_back(r, c.columns[k], c.values[k]);
    gpu.setFromTriplets(entries.begin(), entries.end());
    const Eigen::SparseMatrix<double, Eigen::RowMajor> difference = gpu - exact;
    for (Eigen::Index r = 0; r < difference.outerSize(); ++r)
      for (Eigen::SparseMatrix<double, Eigen::RowMajor>::InnerIterator it(difference, r); it; ++it) worst = std::max(worst, std::abs(it.value()));
    out.max_relative_error = largest > 0 ? worst / largest : worst;
    std::int64_t nnz = 0;
    out.ms = median_ms(reps, 0, [&] { spgemm(handle.h, da, db, nullptr, &nnz); });
  }
  return out;
}

namespace {

// A callback for spgemm(): the k largest |C_ij| of the product on the device, appended to `top`
// with rows offset by `first_row`.
OnDevice top_k_of_product(std::size_t k, std::int64_t first_row, std::vector<pagh::Entry>& top) {
  return [k, first_row, &top](const int* offsets, const int* columns, const float* values, std::int64_t rows, std::int64_t nnz) {
    std::vector<std::int64_t> positions;
    device_top_k_positions(values, nnz, k, positions);
    std::vector<int> host_offsets(static_cast<std::size_t>(rows) + 1);
    check(cudaMemcpy(host_offsets.data(), offsets, host_offsets.size() * sizeof(int), cudaMemcpyDeviceToHost), "download");
    for (std::int64_t at : positions) {
      int column = 0;
      float value = 0;
      check(cudaMemcpy(&column, columns + at, sizeof column, cudaMemcpyDeviceToHost), "download");
      check(cudaMemcpy(&value, values + at, sizeof value, cudaMemcpyDeviceToHost), "download");
      const auto row = std::upper_bound(host_offsets.begin(), host_offsets.end(), static_cast<int>(at)) - host_offsets.begin() - 1;
      top.push_back({first_row + row, column, value, 0});
    }
  };
}

void keep_largest(std::vector<pagh::Entry>& top, std::size_t k) {
  std::stable_sort(top.begin(), top.end(), [](const pagh::Entry& x, const pagh::Entry& y) { return std::fabs(x.value) > std::fabs(y.value); });
  if (top.size() > k) top.resize(k);
}

}  // namespace

GpuSparseTopK cusparse_top_k(const Eigen::SparseMatrix<double>& a, const Eigen::SparseMatrix<double>& b, std::size_t k, int reps) {
  Handle handle;
  GpuSparseTopK out;
  DeviceCsr da(a), db(b);
  out.ms = median_ms(reps, 1, [&] {
    out.top.clear();
    spgemm(handle.h, da, db, nullptr, &out.nnz, top_k_of_product(k, 0, out.top));
  });
  return out;
}

GpuSparseTopK cusparse_top_k_blocked(const Eigen::SparseMatrix<double>& a, const Eigen::SparseMatrix<double>& b, std::size_t k,
                                     double max_block_products) {
  Handle handle;
  GpuSparseTopK out;
  {
    const Eigen::SparseMatrix<double, Eigen::RowMajor> rows = a;
    std::vector<double> b_row_nnz(static_cast<std::size_t>(b.rows()), 0);
    for (Eigen::Index j = 0; j < b.outerSize(); ++j)
      for (Eigen::SparseMatrix<double>::InnerIterator it(b, j); it; ++it) b_row_nnz[static_cast<std::size_t>(it.row())] += 1;
    DeviceCsr db(b);
    const auto t0 = std::chrono::steady_clock::now();
    for (Eigen::Index first = 0; first < rows.rows();) {
      Eigen::Index last = first;
      double products = 0;
      while (last < rows.rows()) {
        double row_products = 0;
        for (Eigen::SparseMatrix<double, Eigen::RowMajor>::InnerIterator it(rows, last); it; ++it)
          row_products += b_row_nnz[static_cast<std::size_t>(it.col())];
        if (last > first && products + row_products > max_block_products) break;
        products += row_products, ++last;
      }
      DeviceCsr block(Eigen::SparseMatrix<double>(rows.middleRows(first, last - first)));
      std::int64_t nnz = 0;
      spgemm(handle.h, block, db, nullptr, &nnz, top_k_of_product(k, first, out.top));
      out.nnz += nnz;
      keep_largest(out.top, k);
      first = last;
    }
    out.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  return out;
}
