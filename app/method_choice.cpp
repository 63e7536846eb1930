#include "method_choice.hpp"

#include <chrono>

#include "cli_error.hpp"
#include "pagh/error.hpp"
#include "resource_plan.hpp"
#include "shared_operands.hpp"
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

pagh::Method method_to_weigh(const MultiplyOptions& o) {
  const bool needs_sketch = o.verify || o.full || !o.sketch_path.empty();
  return needs_sketch && o.method == pagh::Method::automatic ? pagh::Method::sketch : o.method;
}

MethodReport choose_multiply_method(const SketchBackend& backend, const InputMatrix& a, const InputMatrix& b,
                                    const MultiplyOptions& o, const pagh::SketchParams* params) {
  MethodReport report;
  report.requested = method_name(o.method);
  const pagh::Method requested = method_to_weigh(o);
  const bool needs_sketch = requested != o.method;  // auto turned into sketch by the outputs
  // A mixed pair is multiplied densely (the sparse side is small enough to have been read).
  const pagh::ProductCounts counts = a.shared         ? a.shared->counts()
                                     : both_sparse(a, b) ? pagh::count_product(std::get<1>(a.data), std::get<1>(b.data))
                                                         : pagh::count_dense_product(a.rows(), a.cols(), b.cols());
  const pagh::SketchParams& weighed = params ? *params : o.sketch.params;
  const pagh::Throughput host = pagh::cpu_throughput(o.sketch.params.threads, o.sketch.params.precision);
  report.exact_on_host = true;
  const pagh::Throughput rates =
      backend.name() == "cpu" ? host : with_cheaper_exact(pagh::cuda_throughput(), host, counts, weighed, &report.exact_on_host);
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
