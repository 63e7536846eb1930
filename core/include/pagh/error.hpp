// The one error type of the pagh project. Library code throws it (or a type derived from it, such as
// the Matrix Market reader's error, which adds file and line); it never prints and never exits.
// Only the command-line tool turns errors into messages and exit codes.
#pragma once

#include <stdexcept>
#include <string>

namespace pagh {

class Error : public std::runtime_error {
 public:
  // `where` names the call that failed ("fwht::Plan", "fwht::transform"), `why` the reason.
  Error(const std::string& where, const std::string& why) : std::runtime_error(where + ": " + why) {}
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace pagh
