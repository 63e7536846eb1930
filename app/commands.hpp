// The commands of pagh-mm; main.cpp dispatches on the first argument. Each returns the exit status
// of a successful run (0) and reports failures by throwing (cli_error.hpp maps them to statuses).
#pragma once

#include <string>
#include <vector>

namespace pagh_mm {

class MultiplyHooks;  // multiply_hooks.hpp

int run_multiply(const std::vector<std::string>& args, MultiplyHooks* hooks = nullptr);  // pagh-mm [options] A.mtx B.mtx
int run_query(const std::vector<std::string>& args);     // pagh-mm query SKETCH i j [i j ...]
int run_top(const std::vector<std::string>& args);       // pagh-mm top SKETCH [-k K]
int run_generate(const std::vector<std::string>& args);  // pagh-mm generate WORKLOAD [options]
int run_study(const std::vector<std::string>& args);     // pagh-mm study [options]

}  // namespace pagh_mm
