#include "sketch_answers.hpp"

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <filesystem>

#include "cli_error.hpp"
#include "pagh/error.hpp"
#include "resource_plan.hpp"

namespace pagh_mm {

pagh::CompressedProduct load_sketch(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw CliError(ExitCode::no_input, path, "cannot open sketch: it is a directory");
  if (!std::filesystem::exists(path, ec)) throw CliError(ExitCode::no_input, path, "cannot open sketch: no such file");
  const AvailableMemory available = available_memory();
  try {
    return pagh::CompressedProduct::load(path, {.max_bytes = available.bytes});
  } catch (const pagh::MemoryLimitExceeded& e) {
    refuse_memory(ExitCode::os_error, path, static_cast<double>(e.needed_bytes()), available);
  } catch (const pagh::Error& e) {
    // "pagh::CompressedProduct::load: <path>: <reason>": report "<path>: <reason>".
    std::string reason = e.what();
    const auto at = reason.find(path + ": ");
    if (at != std::string::npos) reason = reason.substr(at + path.size() + 2);
    const bool cannot_open = reason.starts_with("cannot open");
    if (reason.starts_with("read failed")) throw CliError(ExitCode::io_error, path, reason);  // the device, not the data
    throw CliError(cannot_open ? ExitCode::no_input : ExitCode::data, path,
                   cannot_open ? "cannot open sketch file" : "not a usable sketch: " + reason);
  }
}

void report_significance(const Significance& significance, std::size_t reported, const Diagnostics& diag) {
  if (diag.verbose() && !significance.recovery.empty()) std::fprintf(stderr, "pagh-mm: entries selected by %s\n", significance.recovery.c_str());
  const std::string warning = noise_warning(significance, reported);
  if (!diag.quiet() && !warning.empty()) std::fprintf(stderr, "pagh-mm: warning: %s\n", warning.c_str());
}

std::vector<pagh::Entry> entries_above(const std::function<std::vector<pagh::Entry>(double)>& above, double threshold,
                                       std::optional<std::size_t> cap, const std::string& option, double* cutoff) {
  std::vector<pagh::Entry> found;
  try {
    found = above(threshold);
  } catch (const pagh::TooManyEntries&) {  // other errors (a device failure) keep their own message
    usage_error(option, "too many entries have |estimate| >= " + std::to_string(threshold) +
                            " (more than 2^26); raise the threshold or ask for the top entries instead");
  }
  // above() returns row-major order, so a stable sort by magnitude keeps ties by row, then column.
  std::stable_sort(found.begin(), found.end(),
                   [](const pagh::Entry& x, const pagh::Entry& y) { return std::fabs(x.value) > std::fabs(y.value); });
  if (cutoff) *cutoff = cap && found.size() > *cap ? std::max(threshold, std::fabs(found[*cap].value)) : threshold;
  if (cap && found.size() > *cap) found.resize(*cap);
  return found;
}

}  // namespace pagh_mm
