// The command line of the main command: pagh-mm [options] A.mtx B.mtx
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "common_options.hpp"
#include "sketch/method.hpp"

namespace pagh_mm {

struct MultiplyOptions {
  std::string a_path, b_path;
  bool transpose_a = false;  // --transpose-a: A is the transpose of the first file
  bool correlation = false;  // --correlation: A's rows and B's columns centred and scaled (correlation.hpp)
  SketchSettings sketch;
  std::size_t top = 10;      // --top K: entries reported (and written with -o); the top-k of --verify
  bool top_given = false;    // with --threshold, --top also caps the number of entries
  std::optional<double> threshold;
  bool full = false;         // -o writes the whole estimate as a dense array
  std::string output_path;   // -o
  std::string sketch_path;   // --save-sketch
  bool verify = false;
  bool exhaustive = false;   // --exhaustive: evaluate all m * p estimates to select entries
  pagh::Method method = pagh::Method::automatic;  // --method: sketch, exact, or whichever is cheaper
  std::optional<double> resolve;  // --resolve TAU: the sketch length that finds entries >= TAU
  bool no_diagonal = false;  // --no-diagonal: report off-diagonal entries of a square product only
  std::optional<bool> refine;  // --refine / --no-refine (default: refine with --method auto)
  Diagnostics diagnostics;
};

// nullopt when --help or --version was answered (on stdout); throws CliError or a Boost error (64).
std::optional<MultiplyOptions> parse_multiply_options(const std::vector<std::string>& args);

}  // namespace pagh_mm
