// The JSON rendering of results (--format json). Stable member names, versioned by
// "schema_version"; indices are 1-based like the text output and Matrix Market files; times in ms.
#include <cmath>
#include <ostream>

#include "common_options.hpp"
#include "json_writer.hpp"
#include "reports.hpp"
#include "version.hpp"

namespace pagh_mm {
namespace {

void write_header(JsonWriter& j, const char* command) {
  j.member("schema", "pagh-mm/" + std::string(command)).member("schema_version", kJsonSchemaVersion);
  j.member("pagh_version", version_string()).member("git_commit", git_commit()).member("index_base", 1);
}

void write_parameters(JsonWriter& j, const pagh::CompressedProduct& c) {
  const auto& p = c.params();
  j.key("parameters").begin_object();
  j.member("pad", p.pad).member("buckets", c.buckets()).member("sketches", c.repetitions()).member("seed", p.seed);
  j.member("precision", precision_name(p.precision)).member("stabilization", stabilization_name(p.stabilization));
  j.member("algorithm", algorithm_name(p.algorithm)).member("threads", p.threads);
  j.end_object();
}

void write_estimates(JsonWriter& j, const pagh::CompressedProduct& c) {
  j.key("estimates").begin_object();
  j.member("frobenius", c.frobenius_estimate()).member("sigma", c.sigma());
  j.end_object();
}

void write_selection(JsonWriter& j, const Selection& s) {
  j.key("selection").begin_object();
  switch (s.kind) {
    case Selection::Kind::top: j.member("kind", "top").member("k", s.k); break;
    case Selection::Kind::threshold:
      j.member("kind", "threshold").member("threshold", *s.threshold);
      j.key("k");
      s.limited ? j.value(s.k) : j.null();
      break;
    case Selection::Kind::query: j.member("kind", "query"); break;
  }
  j.end_object();
}

void write_entries(JsonWriter& j, const std::vector<ReportedEntry>& entries) {
  j.key("entries").begin_array();
  for (const auto& e : entries) {
    j.begin_object().member("row", e.row).member("col", e.col).member("estimate", e.estimate).member("spread", e.spread);
    j.member("interval_half_width", e.half_width);
    j.key("interval").begin_array().value(e.low).value(e.high).end_array();
    j.member("significant", e.significant);
    std::isfinite(e.z) ? j.member("z", e.z) : j.key("z").null();
    j.member("noise_expected", e.noise_expected).member("known", e.known);
    if (e.exact) j.member("exact", *e.exact);
    j.end_object();
  }
  j.end_array();
}

void write_significance(JsonWriter& j, const Significance& s) {
  j.key("significance").begin_object();
  j.member("candidates", s.candidates).member("noise_ceiling_sigmas", s.ceiling);
  j.member("weakest_z", s.min_z).member("expected_noise_entries", s.expected_noise);
  j.member("interval_coverage", kIntervalCoverage).member("interval_half_width", s.half_width);
  j.member("false_positive_rate", kFalsePositiveRate).member("agreement_needed", s.agreement_needed);
  j.member("significant_entries", s.significant).member("tail_sigma", s.tail_sigma);
  j.key("resolving_buckets");
  s.resolve_buckets ? j.value(s.resolve_buckets) : j.null();
  j.member("recovery", s.recovery);
  j.end_object();
}

void write_input(JsonWriter& j, const char* name, const InputSummary& in) {
  j.key(name).begin_object();
  j.member("path", in.path).member("rows", in.rows).member("cols", in.cols);
  j.member("stored_entries", in.stored_entries).member("representation", in.representation);
  j.end_object();
}

void optional_path(JsonWriter& j, const char* name, const std::string& path) {
  j.key(name);
  path.empty() ? j.null() : j.value(path);
}

}  // namespace

void print_multiply_json(const MultiplyReport& r, std::ostream& out) {
  const pagh::CompressedProduct* c = r.product;  // null when the exact method ran
  JsonWriter j;
  j.begin_object();
  write_header(j, "multiply");
  j.key("inputs").begin_object();
  write_input(j, "a", r.a);
  write_input(j, "b", r.b);
  j.end_object();
  j.key("product").begin_object().member("rows", r.a.rows).member("cols", r.b.cols).member("inner", r.inner).end_object();
  j.key("method").begin_object().member("requested", r.method.requested).member("ran", r.method.ran);
  j.member("reason", r.method.reason).member("sketch_estimate_ms", r.method.sketch_estimate_ms);
  j.member("exact_estimate_ms", r.method.exact_estimate_ms).end_object();
  j.key("correlation");
  if (r.correlation) {
    j.begin_object().member("constant_rows_a", r.correlation->constant_rows_a);
    j.member("constant_cols_b", r.correlation->constant_cols_b).member("means_as_inner_index", r.correlation->augmented).end_object();
  } else {
    j.null();
  }
  j.key("diagonal").begin_object().member("subtracted", r.diagonal_subtracted).member("energy_share", r.diagonal_share).end_object();
  if (c) write_parameters(j, *c); else j.key("parameters").null();
  c ? j.member("seed", c->params().seed) : j.key("seed").null();
  j.key("backend").begin_object();
  j.member("requested", r.backend_requested).member("name", r.backend_name).member("device", r.backend_device);
  optional_path(j, "note", r.backend_note);
  j.end_object();
  if (c) write_estimates(j, *c); else j.key("estimates").null();
  write_selection(j, r.selection);
  write_entries(j, r.entries);
  if (c) write_significance(j, r.significance); else j.key("significance").null();
  j.key("refinement");
  if (r.refinement) {
    const pagh::RefinedAnswer& x = *r.refinement;
    j.begin_object();
    j.member("candidates", x.candidates).member("cutoff", x.cutoff).member("scalar_products", x.products);
    j.member("rounds", x.rounds).member("expected_missed", x.expected_missed).member("complete", x.complete);
    j.end_object();
  } else {
    j.null();
  }

  j.key("metrics");
  if (r.metrics) {
    const auto& m = *r.metrics;
    j.begin_object();
    j.member("exact_method", r.exact_method);
    j.member("scope", m.all_entries ? "all entries" : "nonzeros of C and the reported top-k");
    j.member("against", r.diagonal_subtracted ? "C minus its diagonal" : "C");
    j.member("relative_frobenius_error", m.relative_frobenius_error).member("max_abs_error", m.max_abs_error);
    j.member("max_error_in_sigmas", m.max_error_in_sigmas).member("frobenius_exact", m.frobenius_exact);
    j.member("frobenius_estimate", m.frobenius_estimate).member("top_k", m.top_k);
    j.member("top_k_recall", m.top_k_recall).member("top_k_precision", m.top_k_precision);
    j.member("interval_coverage", m.interval_coverage).member("significant", m.significant);
    j.member("false_significant", m.false_significant);
    j.key("reported_recall");
    r.reported_recall ? j.value(*r.reported_recall) : j.null();
    j.end_object();
  } else {
    j.null();
  }

  const pagh::CompressTimings t = c ? c->timings() : pagh::CompressTimings{};
  j.key("timings_ms").begin_object();
  j.member("read_a", r.read_a_ms).member("read_b", r.read_b_ms).member("earlier_sketches", r.earlier_ms);
  j.member("hashing", t.hashing_ms).member("sketching", t.sketching_ms).member("inverse", t.inverse_ms);
  j.member("compress", t.total_ms).member("select", r.select_ms).member("refine", r.refine_ms);
  j.member("exact", r.exact_ms).member("verify", r.verify_ms).member("write", r.write_ms).member("total", r.total_ms);
  j.end_object();
  if (c) {
    j.key("inner_paths").begin_object();
    j.member("transformed", t.transformed_k).member("direct", t.direct_k).member("empty", t.empty_k);
    j.end_object();
  } else {
    j.key("inner_paths").null();
  }

  j.key("outputs").begin_object();
  optional_path(j, "matrix", r.output_path);
  optional_path(j, "matrix_format", r.output_format);
  optional_path(j, "sketch", r.sketch_path);
  j.end_object();
  j.end_object();
  out << j.str();
}

void print_sketch_answer_json(const SketchAnswerReport& r, std::ostream& out) {
  const auto& c = *r.product;
  JsonWriter j;
  j.begin_object();
  write_header(j, r.command.c_str());
  j.key("sketch").begin_object();
  j.member("path", r.sketch_path).member("rows", c.rows()).member("cols", c.cols()).member("inner", c.inner());
  j.end_object();
  write_parameters(j, c);
  write_estimates(j, c);
  write_selection(j, r.selection);
  write_entries(j, r.entries);
  if (r.selection.kind != Selection::Kind::query) write_significance(j, r.significance);
  j.key("outputs").begin_object();
  optional_path(j, "matrix", r.output_path);
  j.end_object();
  j.end_object();
  out << j.str();
}

}  // namespace pagh_mm
