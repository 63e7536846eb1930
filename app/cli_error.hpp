// The one exception type of the command layer, and the one table that turns any exception into a
// message and an exit status (report_failure). Library code throws pagh::Error and never exits;
// only this layer decides what a failure means to the user.
#pragma once

#include <exception>
#include <stdexcept>
#include <string>

#include "exit_codes.hpp"

namespace pagh_mm {

// A failure with a known meaning. subject names what failed (a file, an option such as "--pad", or
// a subcommand) and reason says why; the user sees "pagh-mm: <subject>: <reason>".
class CliError : public std::runtime_error {
 public:
  CliError(ExitCode code, const std::string& subject, const std::string& reason)
      : std::runtime_error(subject.empty() ? reason : subject + ": " + reason), code_(code) {}
  ExitCode code() const noexcept { return code_; }

 private:
  ExitCode code_;
};

[[noreturn]] inline void usage_error(const std::string& subject, const std::string& reason) {
  throw CliError(ExitCode::usage, subject, reason);
}

// Prints the failure as one line on standard error and returns its exit status:
//   CliError                          its own code
//   boost::program_options::error     64 (Boost names the option)
//   pagh::matrix_io::MatrixMarketError 66 when the file cannot be opened, 74 when reading fails
//                                     midway, 65 for everything about its content
//   std::bad_alloc                    70 (out of memory)
//   pagh::Error, anything else        70 (a library error the command did not anticipate)
// `command` is the subcommand that failed ("" for the main command), for the --help hint.
int report_failure(std::exception_ptr failure, const std::string& command);

// What report_failure would print (without the "pagh-mm: " prefix) and the status, without printing
// it: a distributed run (mpi_multiply.cpp) passes a worker's failure to rank 0, which prints it.
struct FailureReport {
  ExitCode code;
  std::string message;
};
FailureReport describe_failure(std::exception_ptr failure, const std::string& command);

// Collapses a message to one line (library messages are one line already; this is a guarantee).
std::string one_line(std::string text);

}  // namespace pagh_mm
