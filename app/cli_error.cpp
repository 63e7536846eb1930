#include "cli_error.hpp"

#include <boost/program_options/errors.hpp>

#include <cstdio>
#include <new>

#include "inputs.hpp"
#include "matrix_io/error.hpp"
#include "pagh/error.hpp"

namespace pagh_mm {

std::string one_line(std::string text) {
  for (char& c : text)
    if (c == '\n' || c == '\r') c = ' ';
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

namespace {

FailureReport failure_of(ExitCode code, const std::string& message, const std::string& hint = "") {
  return {code, one_line(message) + hint};
}

}  // namespace

int report_failure(std::exception_ptr failure, const std::string& command) {
  const FailureReport report = describe_failure(failure, command);
  std::fprintf(stderr, "pagh-mm: %s\n", report.message.c_str());
  return to_int(report.code);
}

FailureReport describe_failure(std::exception_ptr failure, const std::string& command) {
  const std::string help = " (see pagh-mm " + (command.empty() ? "" : command + " ") + "--help)";
  // The order matters: the most specific types first (MatrixMarketError derives from pagh::Error,
  // which derives from std::runtime_error).
  try {
    std::rethrow_exception(failure);
  } catch (const CliError& e) {
    return failure_of(e.code(), e.what(), e.code() == ExitCode::usage ? help : "");
  } catch (const boost::program_options::error& e) {
    return failure_of(ExitCode::usage, e.what(), help);
  } catch (const pagh::matrix_io::MatrixMarketError& e) {
    return failure_of(classify_read_failure(e), e.what());
  } catch (const std::bad_alloc&) {
    // The hint names options of the main command; the other commands have none of them.
    return failure_of(ExitCode::software, command.empty() ? "out of memory (try a smaller --pad or --sketches, or --top instead of --full)"
                                                     : "out of memory");
  } catch (const pagh::Error& e) {
    return failure_of(ExitCode::software, std::string("internal error: ") + e.what());
  } catch (const std::exception& e) {
    return failure_of(ExitCode::software, std::string("internal error: ") + e.what());
  } catch (...) {
    return failure_of(ExitCode::software, "internal error: unknown exception");
  }
}

}  // namespace pagh_mm
