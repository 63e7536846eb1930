// pagh-mm's choice between sketching and computing the product exactly (--method), and the exact
// answers when exact wins: the library's cost model (sketch/method.hpp) with the backend's
// throughputs, and the exact top-k / threshold on the backend that would have sketched.
#pragma once

#include <string>
#include <vector>

#include "backend.hpp"
#include "inputs.hpp"
#include "multiply_options.hpp"
#include "reports.hpp"
#include "sketch/entry.hpp"

namespace pagh_mm {

// --method as weighed: auto becomes sketch where --verify, --full or --save-sketch need a sketch.
pagh::Method method_to_weigh(const MultiplyOptions& o);

// --method exact that cannot fit is a usage error (64) naming --method. params: the sketch to weigh
// (default: the options').
MethodReport choose_multiply_method(const SketchBackend& backend, const InputMatrix& a, const InputMatrix& b,
                                    const MultiplyOptions& o, const pagh::SketchParams* params = nullptr);

// The entries --top / --threshold ask for, of the exact product, on the host (Eigen) or the
// backend's device (MethodReport::exact_on_host); exact_ms is its time.
std::vector<pagh::Entry> exact_entries(SketchBackend& backend, const InputMatrix& a, const InputMatrix& b, const MultiplyOptions& o,
                                       bool on_host, double& exact_ms);

}  // namespace pagh_mm
