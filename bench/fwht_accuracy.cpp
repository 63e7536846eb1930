// fwht_accuracy: the numerical-stability study of Andersson (2025), on our CPU or CUDA backend.
//
//   fwht_accuracy --backend cpu --log2n 3:16 --formats f64,f32,f16,bf16 --csv out.csv --table out.md
//
// Inputs (length n): PMONE (+-1), NORM (N(0,1)), RELU_NORM (max(0, NORM)), PAGH_NORM and PAGH_PMONE
// (n/8 values of NORM or PMONE with random signs at random positions of a zero vector), rounded into
// the format. Experiments, all arithmetic in the format (Compute::storage for f16/bf16):
//   one_way   y = H x                                   (unnormalized)
//   two_way   y = H(H x) / n
//   smoothed  y = H(phi(H x)) / n, phi(v) = v - 1 if v > 1, v + 1 if v < -1, else 0
//   xor_conv  y = H((H a) . (H b)) / n
// Ground truth: the same experiment in binary128 on the same (rounded) inputs. Metric: mean relative
// error |v* - v| / |v*| over entries with v* != 0 (exact zeros of the truth are left out of the mean
// and show in the absolute errors), plus max and mean absolute error. A cell whose output overflows
// (inf or NaN) is recorded as missing. Table: per log2 n and format, the median over the 20
// input x experiment cells of the reduction 1 - MRE(variant) / MRE(folklore), in percent.
// Variants: folklore, kahan, neumaier, wide_onchip and wide_carry (not defined for f64: missing there), alman_rao.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <omp.h>

#include "accuracy_backend.hpp"
#include "fwht/fwht.hpp"

namespace {

using quad = __float128;
using fwht::DType;

constexpr const char* kUsage =
    "usage: fwht_accuracy [--backend cpu|cuda] [--log2n A:B] [--formats f64,f32,f16,bf16] [--trials T]\n"
    "                     [--seed S] [--csv FILE] [--table FILE] [--variants V[,V...]]\n"
    "  --variants: a subset of folklore,kahan,neumaier,wide_onchip,wide_carry,alman_rao (folklore, the\n"
    "              baseline of every reduction, is always run); the cells' inputs do not depend on it.\n";

[[noreturn]] void usage_error(const std::string& why) {
  std::fprintf(stderr, "fwht_accuracy: %s\n%s", why.c_str(), kUsage);
  std::exit(64);
}

const char* kInputs[] = {"PMONE", "NORM", "RELU_NORM", "PAGH_NORM", "PAGH_PMONE"};
const char* kExperiments[] = {"one_way", "two_way", "smoothed", "xor_conv"};
struct Variant {
  const char* name;
  fwht::Stabilization stabilization;
  fwht::Algorithm algorithm;
};
const Variant kVariants[] = {{"folklore", fwht::Stabilization::none, fwht::Algorithm::folklore},
                             {"kahan", fwht::Stabilization::kahan, fwht::Algorithm::folklore},
                             {"neumaier", fwht::Stabilization::neumaier, fwht::Algorithm::folklore},
                             {"wide_onchip", fwht::Stabilization::wide_onchip, fwht::Algorithm::folklore},
                             {"wide_carry", fwht::Stabilization::wide_carry, fwht::Algorithm::folklore},
                             {"alman_rao", fwht::Stabilization::none, fwht::Algorithm::alman_rao}};
constexpr int kVariantCount = sizeof(kVariants) / sizeof(kVariants[0]);

std::vector<double> make_input(const std::string& kind, std::size_t n, std::mt19937_64& rng) {
  std::normal_distribution<double> normal;
  std::bernoulli_distribution coin;
  std::vector<double> x(n, 0.0);
  if (kind == "PMONE") {
    for (double& v : x) v = coin(rng) ? 1.0 : -1.0;
  } else if (kind == "NORM") {
    for (double& v : x) v = normal(rng);
  } else if (kind == "RELU_NORM") {
    for (double& v : x) v = std::max(0.0, normal(rng));
  } else {  // PAGH_*: n/8 signed values at random positions (collisions add up, as in a count sketch)
    std::uniform_int_distribution<std::size_t> pos(0, n - 1);
    const bool pmone = kind == "PAGH_PMONE";
    for (std::size_t k = 0; k < std::max<std::size_t>(1, n / 8); ++k)
      x[pos(rng)] += (coin(rng) ? 1.0 : -1.0) * (pmone ? 1.0 : normal(rng));
  }
  return x;
}

// Rounds a value into the format (what the format can store).
double round_to(DType f, double v) {
  switch (f) {
    case DType::f64: return v;
    case DType::f32: return static_cast<float>(v);
    case DType::f16: return static_cast<float>(fwht::f16(static_cast<float>(v)));
    case DType::bf16: return static_cast<float>(fwht::bf16(static_cast<float>(v)));
    default: return v;
  }
}

// One experiment on numbers of type Num: H(v, normalization) transforms in place and round(x)
// rounds a pointwise result into the format (the identity in binary128).
template <class Num, class Transform, class Round>
std::vector<Num> run_experiment(const std::string& experiment, const std::vector<double>& a, const std::vector<double>& b,
                                Transform H, Round round) {
  std::vector<Num> x(a.begin(), a.end());
  if (experiment == "one_way") {
    H(x, fwht::Normalization::none);
  } else if (experiment == "two_way") {
    H(x, fwht::Normalization::none);
    H(x, fwht::Normalization::inverse);
  } else if (experiment == "smoothed") {
    H(x, fwht::Normalization::none);
    for (Num& v : x) v = round(v > 1 ? v - 1 : (v < -1 ? v + 1 : Num(0)));  // phi_T, T = 1
    H(x, fwht::Normalization::inverse);
  } else {  // xor_conv
    std::vector<Num> y(b.begin(), b.end());
    H(x, fwht::Normalization::none);
    H(y, fwht::Normalization::none);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = round(x[i] * y[i]);
    H(x, fwht::Normalization::inverse);
  }
  return x;
}

// The experiment in binary128: the ground truth.
std::vector<quad> truth(const std::string& experiment, const std::vector<double>& a, const std::vector<double>& b) {
  return run_experiment<quad>(
      experiment, a, b, [](std::vector<quad>& v, fwht::Normalization norm) { fwht::reference::transform_quad(std::span<quad>(v), norm); },
      [](quad v) { return v; });
}

// The experiment in the format: transforms by the backend, pointwise steps rounded into the format.
std::vector<double> computed(const std::string& experiment, const std::vector<double>& a, const std::vector<double>& b, DType f,
                             const Variant& variant, fwht::bench::AccuracyBackend& backend) {
  fwht::Options o{.stabilization = variant.stabilization, .algorithm = variant.algorithm, .compute = fwht::Compute::storage};
  return run_experiment<double>(
      experiment, a, b,
      [&](std::vector<double>& v, fwht::Normalization norm) {
        o.normalization = norm;
        backend.transform(v, f, o);
      },
      [f](double v) { return round_to(f, v); });
}

struct Errors {
  bool missing = false;
  double mean_relative = 0, max_absolute = 0, mean_absolute = 0;
};

// The binary128 arithmetic per element (software, ~100 ns) runs in parallel, block by block; the
// sums are then taken in index order, so the result is the same bits as a sequential loop and does
// not depend on the thread count. rel[i] < 0 marks an exact zero of the truth (left out).
Errors measure(const std::vector<double>& v, const std::vector<quad>& t) {
  constexpr std::size_t kBlock = std::size_t{1} << 20;
  Errors e;
  double rel_sum = 0;
  std::size_t rel_count = 0;
  std::vector<double> abs_err(std::min(v.size(), kBlock)), rel(abs_err.size());
  for (std::size_t first = 0; first < v.size(); first += kBlock) {
    const std::size_t count = std::min(kBlock, v.size() - first);
#pragma omp parallel for schedule(static)
    for (std::size_t k = 0; k < count; ++k) {
      const std::size_t i = first + k;
      const quad diff = static_cast<quad>(v[i]) - t[i];
      abs_err[k] = static_cast<double>(diff < 0 ? -diff : diff);
      rel[k] = t[i] != 0 ? abs_err[k] / std::fabs(static_cast<double>(t[i])) : -1.0;
    }
    for (std::size_t k = 0; k < count; ++k) {
      if (!std::isfinite(v[first + k])) return Errors{true};
      e.max_absolute = std::max(e.max_absolute, abs_err[k]);
      e.mean_absolute += abs_err[k];
      if (rel[k] >= 0) rel_sum += rel[k], ++rel_count;
    }
  }
  e.mean_absolute /= static_cast<double>(v.size());
  e.mean_relative = rel_count ? rel_sum / static_cast<double>(rel_count) : 0.0;
  return e;
}

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

int main(int argc, char** argv) {
  std::string backend_name = "cpu", csv_path, table_path;
  int lo = 3, hi = 16, trials = 1;
  std::uint64_t seed = 2025;
  std::vector<DType> formats{DType::f64, DType::f32, DType::f16, DType::bf16};
  bool selected[kVariantCount];
  std::fill(std::begin(selected), std::end(selected), true);
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (i + 1 >= argc) usage_error(arg + " needs a value");
    const std::string v = argv[++i];
    try {
      if (arg == "--backend") backend_name = v;
      else if (arg == "--log2n") {
        const auto c = v.find(':');
        lo = std::stoi(v.substr(0, c));
        hi = c == std::string::npos ? lo : std::stoi(v.substr(c + 1));
      } else if (arg == "--formats") {
        formats.clear();
        std::stringstream ss(v);
        for (std::string f; std::getline(ss, f, ',');) formats.push_back(fwht::parse_dtype(f));
      } else if (arg == "--trials") trials = std::stoi(v);
      else if (arg == "--seed") seed = std::stoull(v);
      else if (arg == "--csv") csv_path = v;
      else if (arg == "--table") table_path = v;
      else if (arg == "--variants") {
        std::fill(std::begin(selected), std::end(selected), false);
        selected[0] = true;  // folklore
        std::stringstream ss(v);
        for (std::string name; std::getline(ss, name, ',');) {
          int found = -1;
          for (int vi = 0; vi < kVariantCount; ++vi)
            if (name == kVariants[vi].name) found = vi;
          if (found < 0) usage_error("--variants: unknown variant '" + name + "'");
          selected[found] = true;
        }
      }
      else usage_error("unknown option " + arg);
    } catch (const std::exception&) {
      usage_error(arg + ": invalid value '" + v + "'");
    }
  }
  if (lo < 1 || hi < lo || hi > 30) usage_error("--log2n: need 1 <= A <= B <= 30");
  if (trials < 1) usage_error("--trials must be at least 1");
  for (DType f : formats)
    if (fwht::is_integer(f)) usage_error("--formats: integer formats have no rounding error to study");

  std::unique_ptr<fwht::bench::AccuracyBackend> backend;
  try {
    backend = fwht::bench::make_accuracy_backend(fwht::parse_backend(backend_name));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fwht_accuracy: %s\n", e.what());
    return 69;
  }
  std::ofstream csv;
  if (!csv_path.empty()) {
    csv.open(csv_path);
    if (!csv) {
      std::fprintf(stderr, "fwht_accuracy: %s: cannot create file\n", csv_path.c_str());
      return 73;
    }
    csv << "backend,log2n,format,input,experiment,trial,variant,missing,mean_relative_error,max_abs_error,mean_abs_error\n";
  }
  // reductions[(L, format, variant)] = one reduction per input x experiment cell
  std::map<std::tuple<int, int, int>, std::vector<double>> reductions;
  std::mt19937_64 rng(seed);
  for (int L = lo; L <= hi; ++L) {
    const std::size_t n = std::size_t{1} << L;
    // The binary128 truths dominate the run time: they are computed in parallel over the
    // input x experiment x trial x format cells (OpenMP), from inputs drawn in the same order as
    // before, so the CSV does not depend on the thread count. The computed variants run in order on
    // the backend (which is not shared between threads).
    struct Cell {
      const char* input;
      const char* experiment;
      int trial;
      std::vector<double> a0, b0;
    };
    std::vector<Cell> cells;
    for (const char* input : kInputs)
      for (const char* experiment : kExperiments)
        for (int trial = 0; trial < trials; ++trial) {
          auto a0 = make_input(input, n, rng);
          auto b0 = make_input(input, n, rng);
          cells.push_back({input, experiment, trial, std::move(a0), std::move(b0)});
        }
    auto rounded = [&](const std::vector<double>& x, DType f) {
      std::vector<double> r(n);
      for (std::size_t i = 0; i < n; ++i) r[i] = round_to(f, x[i]);
      return r;
    };
    // Jobs (cell, format) in order, in waves of one per thread: the truths of a wave are computed in
    // parallel, then consumed in order, so memory stays at threads x n binary128 values.
    const std::size_t jobs = cells.size() * formats.size();
    const auto wave = static_cast<std::size_t>(std::max(1, omp_get_max_threads()));
    std::vector<std::vector<quad>> truths(wave);
    for (std::size_t first = 0; first < jobs; first += wave) {
      const std::size_t count = std::min(wave, jobs - first);
#pragma omp parallel for schedule(dynamic, 1)
      for (std::size_t w = 0; w < count; ++w) {
        const Cell& c = cells[(first + w) / formats.size()];
        const DType f = formats[(first + w) % formats.size()];
        truths[w] = truth(c.experiment, rounded(c.a0, f), rounded(c.b0, f));
      }
      for (std::size_t w = 0; w < count; ++w) {
        const Cell& c = cells[(first + w) / formats.size()];
        const std::size_t fi = (first + w) % formats.size();
        const DType f = formats[fi];
        const auto a = rounded(c.a0, f), b = rounded(c.b0, f);
        const auto& t = truths[w];
        Errors per_variant[kVariantCount];
        for (int vi = 0; vi < kVariantCount; ++vi) {
          if (!selected[vi]) continue;
          const bool undefined = fwht::is_wide(kVariants[vi].stabilization) && f == DType::f64;
          per_variant[vi] = undefined ? Errors{true} : measure(computed(c.experiment, a, b, f, kVariants[vi], *backend), t);
          const Errors& e = per_variant[vi];
          if (csv)
            csv << backend_name << ',' << L << ',' << fwht::to_string(f) << ',' << c.input << ',' << c.experiment << ',' << c.trial
                << ',' << kVariants[vi].name << ',' << (e.missing ? 1 : 0) << ',' << e.mean_relative << ',' << e.max_absolute << ','
                << e.mean_absolute << '\n';
        }
        const Errors& folk = per_variant[0];
        for (int vi = 1; vi < kVariantCount; ++vi) {
          const Errors& e = per_variant[vi];
          if (!selected[vi] || folk.missing || e.missing || folk.mean_relative == 0) continue;
          reductions[{L, static_cast<int>(fi), vi}].push_back(1.0 - e.mean_relative / folk.mean_relative);
        }
      }
    }
    std::fprintf(stderr, "fwht_accuracy: log2 n = %d done\n", L);
  }

  // Table 4.1 style: median reduction (percent) per log2 n and format; '-' where every cell is missing.
  std::ostringstream table;
  table << "Median reduction of the mean relative error vs folklore, over the input x experiment cells ("
        << backend_name << " backend; negative = larger error).\n\n| log2 n |";
  int shown = 0;
  for (DType f : formats)
    for (int vi = 1; vi < kVariantCount; ++vi)
      if (selected[vi]) table << ' ' << fwht::to_string(f) << ' ' << kVariants[vi].name << " |", ++shown;
  table << "\n|---|";
  for (int k = 0; k < shown; ++k) table << "---|";
  table << '\n';
  std::vector<double> overall[kVariantCount];
  for (int L = lo; L <= hi; ++L) {
    table << "| " << L << " |";
    for (std::size_t fi = 0; fi < formats.size(); ++fi)
      for (int vi = 1; vi < kVariantCount; ++vi) {
        if (!selected[vi]) continue;
        const auto it = reductions.find({L, static_cast<int>(fi), vi});
        if (it == reductions.end() || it->second.empty()) {
          table << " - |";
          continue;
        }
        const double m = median(it->second);
        overall[vi].push_back(m);
        char buf[32];
        std::snprintf(buf, sizeof buf, " %+.0f%% |", 100 * m);
        table << buf;
      }
    table << '\n';
  }
  table << "\nMedian over all sizes and formats:";
  for (int vi = 1, shown_any = 0; vi < kVariantCount; ++vi)
    if (selected[vi] && !overall[vi].empty())
      table << (shown_any++ ? ", " : " ") << kVariants[vi].name << ' ' << std::lround(100 * median(overall[vi])) << '%';
  table << " (Andersson 2025, Table 4.1: kahan about +30%, neumaier +75%, alman_rao -50%; wide_onchip and wide_carry are ours).\n";
  std::fputs(table.str().c_str(), stdout);
  if (!table_path.empty()) {
    std::ofstream out(table_path);
    if (!(out << table.str())) {
      std::fprintf(stderr, "fwht_accuracy: %s: cannot write file\n", table_path.c_str());
      return 73;
    }
  }
  return 0;
}
