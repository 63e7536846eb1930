// Output files that appear whole or not at all.
//
// Each output is first written under a hidden staging name beside its target (by writers that are
// atomic themselves), and only when every output of the command has been written are the staged
// files renamed onto their targets. A failure anywhere before that (bad input, a full disk, a
// crash) leaves no target touched; the destructor removes staged files that were not committed.
// Targets are checked when staged, so an impossible path fails at once (73), before any work.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "exit_codes.hpp"

namespace pagh_mm {

class OutputTransaction {
 public:
  OutputTransaction() = default;
  OutputTransaction(const OutputTransaction&) = delete;
  OutputTransaction& operator=(const OutputTransaction&) = delete;
  ~OutputTransaction();

  // Checks that `target` can be created (its directory exists and is writable; it is not a
  // directory) and returns the staging path to write instead. `option` names the command-line
  // option that asked for it, for messages. Throws CliError (73) otherwise.
  std::filesystem::path stage(const std::string& target, std::string_view option);

  // Renames every staged file onto its target, in the order staged. Throws CliError (73) if a
  // rename fails; the files renamed before it stay.
  void commit();

 private:
  struct Staged {
    std::filesystem::path target, staging;
    std::string option;
  };
  std::vector<Staged> staged_;
  bool committed_ = false;
};

// Writes text to path atomically: a temporary file in the same directory, flushed to disk, then
// renamed over path. Throws CliError (73 cannot create, 74 write failed), leaving nothing behind.
void write_text_file_atomically(const std::filesystem::path& path, std::string_view text);

// For a writer's message: 73 when the file could not be created, 74 when writing it failed.
ExitCode classify_write_failure(std::string_view message);

// Checks that a directory exists or can be created (with its parents); throws CliError (73).
void ensure_directory(const std::filesystem::path& directory, std::string_view option);

}  // namespace pagh_mm
