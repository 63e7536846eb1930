// pagh-mm: the command line of pagh. Dispatches on the first argument to a subcommand (query, top,
// generate, study) or to the main command (pagh-mm [options] A.mtx B.mtx), and turns whatever a
// command throws into one line on stderr and a sysexits status (cli_error.cpp holds the table).
#include <cstdio>
#include <exception>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cli_error.hpp"
#include "commands.hpp"
#include "interrupt_cleanup.hpp"
#ifdef PAGH_MM_HAVE_MPI
#include "mpi_multiply.hpp"
#endif

namespace {

using Command = int (*)(const std::vector<std::string>&);

const std::map<std::string, Command> kSubcommands = {
    {"query", pagh_mm::run_query},
    {"top", pagh_mm::run_top},
    {"generate", pagh_mm::run_generate},
    {"study", pagh_mm::run_study},
};

// Standard output is where results go: a failure to write them (a full disk, a closed pipe) must
// not end in status 0.
int check_stdout(int status) {
  if (status == 0 && (std::fflush(stdout) != 0 || std::ferror(stdout))) {
    std::fprintf(stderr, "pagh-mm: standard output: write error\n");
    return pagh_mm::to_int(pagh_mm::ExitCode::io_error);
  }
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  pagh_mm::install_interrupt_cleanup();  // before any output is staged
  std::vector<std::string> args(argv + 1, argv + argc);
  std::string command;  // "" = the main command
  // Results reach standard output only once the command has succeeded: a failure midway (while
  // formatting a report, say) must not leave a partial answer for a script to read. Commands write
  // their results to std::cout, which holds them here until then.
  std::ostringstream results;
  std::streambuf* const standard_output = std::cout.rdbuf(results.rdbuf());
  const auto deliver = [&](int status) {
    std::cout.rdbuf(standard_output);
    if (status == 0) std::cout << results.view() << std::flush;
    return check_stdout(status);
  };
  try {
    // A file literally named like a subcommand can still be multiplied as ./query.
    if (!args.empty()) {
      const auto sub = kSubcommands.find(args.front());
      if (sub != kSubcommands.end()) {
        command = sub->first;
        return deliver(sub->second({args.begin() + 1, args.end()}));
      }
    }
#ifdef PAGH_MM_HAVE_MPI
    // Under mpirun the main command runs over the job's ranks (mpi_multiply.hpp); only rank 0 prints.
    if (pagh_mm::launched_by_mpi()) return deliver(pagh_mm::run_multiply_distributed(args));
#endif
    return deliver(pagh_mm::run_multiply(args));
  } catch (...) {
    std::cout.rdbuf(standard_output);
    std::fflush(stdout);
    return pagh_mm::report_failure(std::current_exception(), command);
  }
}
