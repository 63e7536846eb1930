// Small helpers the study's reports share: a number printed with a printf pattern, and a median.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace pagh_mm {

inline std::string formatted(double v, const char* pattern) {
  char text[64];
  std::snprintf(text, sizeof text, pattern, v);
  return text;
}

// NaN for no values.
inline double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace pagh_mm
