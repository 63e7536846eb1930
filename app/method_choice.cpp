#include "method_choice.hpp"

#include <chrono>

#include "cli_error.hpp"
#include "pagh/error.hpp"
#include "resource_plan.hpp"
#include "sketch/exact_answers.hpp"
#include "sketch/method.hpp"
#include "sketch_answers.hpp"

namespace pagh_mm {
namespace {

const char* method_name(pagh::Method m) {
  return m == pagh::Method::automatic ? "auto" : m == pagh::Method::sketch ? "sketch" : "exact";
}

// The dense operand itself, or a dense copy of a sparse one held in `copy`.
const Eigen::MatrixXd& as_dense(const MatrixData& m, Eigen::MatrixXd& copy) {
  if (m.index() == 0) return std::get<0>(m);
  copy = Eigen::MatrixXd(std::get<1>(m));
  return copy;
}

bool both_sparse(const InputMatrix& a, const InputMatrix& b) { return !a.is_dense() && !b.is_dense(); }

}  // namespace

MethodReport choose_multiply_method(const SketchBackend& backend, const InputMatrix& a, const InputMatrix& b,
                                    const MultiplyOptions& o, const pagh::SketchParams* params) {
  MethodReport report;
  report.requested = method_name(o.method);
  pagh::Method requested = o.method;
  const bool needs_sketch = o.verify || o.full || !o.sketch_path.empty();
  if (needs_sketch && requested == pagh::Method::automatic) requested = pagh::Method::sketch;
  // A mixed pair is multiplied densely (the sparse side is small enough to have been read).
  const pagh::ProductCounts counts = both_sparse(a, b) ? pagh::count_product(std::get<1>(a.data), std::get<1>(b.data))
                                                        : pagh::count_dense_product(a.rows(), a.cols(), b.cols());
  const pagh::SketchParams& weighed = params ? *params : o.sketch.params;
  const pagh::Throughput host = pagh::cpu_throughput(o.sketch.params.threads, o.sketch.params.precision);
  pagh::Throughput rates = backend.name() == "cpu" ? host : pagh::cuda_throughput();
  // A device's exact product pays its fixed costs (library handles, copies) whatever the size: a
  // small product is computed on the host instead when the model says that is cheaper there.
  const auto exact_seconds = [&](const pagh::Throughput& r) { return pagh::choose_method(pagh::Method::sketch, counts, weighed, r).exact_seconds; };
  report.exact_on_host = backend.name() == "cpu" || exact_seconds(host) < exact_seconds(rates);
  if (report.exact_on_host) {
    rates.gemm_flops = host.gemm_flops, rates.sparse_products = host.sparse_products, rates.scanned_entries = host.scanned_entries;
    rates.transfer_bytes = host.transfer_bytes, rates.exact_fixed = host.exact_fixed, rates.exact_engine = host.exact_engine;
  }
  pagh::MethodChoice choice;
  try {
    choice = pagh::choose_method(requested, counts, weighed, rates,
                                 static_cast<double>(available_memory().bytes));
  } catch (const pagh::Error& e) {
    const std::string what = e.what();
    usage_error("--method exact", what.substr(what.find(": ") + 2));
  }
  report.ran = choice.method == pagh::Method::exact ? "exact" : "sketch";
  report.reason = choice.reason;
  report.engine = rates.exact_engine;
  if (needs_sketch && o.method == pagh::Method::automatic)
    report.reason = "sketch, as --verify, --full and --save-sketch need one: " + choice.reason.substr(choice.reason.find(": ") + 2);
  report.sketch_estimate_ms = choice.sketch_seconds * 1e3;
  report.exact_estimate_ms = choice.exact_seconds * 1e3;
  return report;
}

std::vector<pagh::Entry> exact_entries(SketchBackend& backend, const InputMatrix& a, const InputMatrix& b, const MultiplyOptions& o,
                                       bool on_host, double& exact_ms) {
  const auto start = std::chrono::steady_clock::now();
  const int threads = o.sketch.params.threads;
  // --no-diagonal: ask for as many more as the diagonal could take, then leave it out.
  const bool off_diagonal = o.no_diagonal && a.rows() == b.cols();
  const std::size_t top = off_diagonal ? o.top + static_cast<std::size_t>(a.rows()) : o.top;
  const std::optional<std::size_t> cap = o.top_given ? std::optional<std::size_t>(top) : std::nullopt;
  std::vector<pagh::Entry> entries;
  if (!on_host) {
    double ms = 0;
    const Eigen::MatrixXd C = backend.exact_product(a.data, b.data, ms);
    entries = o.threshold ? entries_above([&](double t) { return pagh::above_of(C, t, kMaxAboveEntries); }, *o.threshold, cap, "--threshold")
                          : pagh::top_k_of(C, top);
  } else if (both_sparse(a, b)) {
    const auto& A = std::get<1>(a.data);
    const auto& B = std::get<1>(b.data);
    entries = o.threshold ? entries_above([&](double t) { return pagh::exact_above(A, B, t, kMaxAboveEntries); }, *o.threshold, cap, "--threshold")
                          : pagh::exact_top_k(A, B, top);
  } else {
    Eigen::MatrixXd copy_a, copy_b;
    const Eigen::MatrixXd& A = as_dense(a.data, copy_a);
    const Eigen::MatrixXd& B = as_dense(b.data, copy_b);
    entries = o.threshold
                  ? entries_above([&](double t) { return pagh::exact_above(A, B, t, kMaxAboveEntries, threads); }, *o.threshold, cap, "--threshold")
                  : pagh::exact_top_k(A, B, top, threads);
  }
  if (off_diagonal) {
    std::erase_if(entries, [](const pagh::Entry& e) { return e.row == e.col; });
    if ((!o.threshold || o.top_given) && entries.size() > o.top) entries.resize(o.top);
  }
  exact_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return entries;
}

}  // namespace pagh_mm
