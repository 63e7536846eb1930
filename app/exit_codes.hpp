// The exit statuses of pagh-mm, from BSD sysexits.h, so that scripts can tell a typo in a command
// line from a bad input file, a missing GPU, or a full disk.
#pragma once

namespace pagh_mm {

enum class ExitCode : int {
  ok = 0,
  usage = 64,          // EX_USAGE: bad option, bad value, wrong number of arguments
  data = 65,           // EX_DATAERR: the input is malformed or unusable (cols(A) != rows(B), corrupt sketch)
  no_input = 66,       // EX_NOINPUT: an input file does not exist or cannot be opened
  unavailable = 69,    // EX_UNAVAILABLE: the CUDA backend was requested but cannot be used
  software = 70,       // EX_SOFTWARE: an internal error (a bug: please report it)
  os_error = 71,       // EX_OSERR: the system cannot grant what the work needs (memory, threads)
  cannot_create = 73,  // EX_CANTCREAT: an output file cannot be created
  io_error = 74,       // EX_IOERR: reading or writing failed midway (disk full, standard output closed)
};

inline int to_int(ExitCode code) { return static_cast<int>(code); }

}  // namespace pagh_mm
