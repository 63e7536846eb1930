// Stand-in for FXT's walsh/walshwak.h, for bench/sketch_vs_compmatmul only: compmatmul's FWHT
// (FXT's walsh_wak, the unnormalized transform in natural order, in place) answered by FFHT's
// fht_double, which computes the same transform. FXT is not packaged; issue 26's comparison swaps
// in FFHT the same way.
#pragma once

extern "C" int fht_double(double* buf, int log_n);

inline void walsh_wak(double* f, unsigned long ldn) { fht_double(f, static_cast<int>(ldn)); }
