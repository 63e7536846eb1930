// Output files that appear whole or not at all, by the project's output rule
// (core/include/pagh/output_file.hpp).
//
// A regular file (or a new path; for a symbolic link, the file it points to) is first written under
// a hidden staging name beside it, and only when every output of the command has been written are
// the staged files renamed onto their targets. A failure anywhere before that (bad input, a full
// disk, a crash) leaves no target touched; the destructor removes staged files that were not
// committed, and pagh-mm's signal handler (interrupt_cleanup.hpp) removes them on Ctrl-C.
// A character device or FIFO cannot be staged: it is written directly, when the outputs are
// written. "-" is standard output: staged in a temporary file and copied to standard output in
// commit(), so that it too receives nothing from a run that fails.
// Targets are checked when staged, so an impossible path fails at once (73), before any work.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "exit_codes.hpp"

namespace pagh_mm {

// "-" names standard output for -o and --save-sketch.
inline bool is_standard_output(std::string_view path) { return path == "-"; }

class OutputTransaction {
 public:
  OutputTransaction() = default;
  OutputTransaction(const OutputTransaction&) = delete;
  OutputTransaction& operator=(const OutputTransaction&) = delete;
  ~OutputTransaction();

  // Checks that `target` can be written (a directory or a missing directory is refused) and returns
  // the path a writer should write instead: a staging path, or the special file itself. `option`
  // names the command-line option that asked for it, for messages. Throws CliError: 73 when it
  // cannot be created, 64 when another output of this command is the same file.
  std::filesystem::path stage(const std::string& target, std::string_view option);

  // Refuses (64) any staged output that is the file `input` (same device and inode, whatever the
  // names: a symbolic or hard link to the input counts). `what` names the input ("the input A").
  void refuse_overwriting(const std::string& input, std::string_view what) const;

  // Whether an output of this command goes to standard output (then the report does not).
  bool writes_standard_output() const;

  // Renames every staged file onto its target, in the order staged, and copies a staged standard
  // output to it. Throws CliError (73, or 74 for standard output) if that fails; the files renamed
  // before it stay.
  void commit();

 private:
  struct Staged {
    std::string target;                // as given
    std::filesystem::path destination;  // the file to replace or write (links resolved); empty for "-"
    std::filesystem::path staging;      // what the writer writes; == destination for a special file
    std::string option;
    bool direct = false;
    int tracked = -1;                   // pagh::in_flight handle of the staging file
  };
  std::vector<Staged> staged_;
  bool committed_ = false;
};

// Writes text to path by the output rule (atomically for a regular file). Throws CliError
// (73 cannot create, 74 write failed), leaving nothing behind. `option` names it in messages.
void write_text_file_atomically(const std::filesystem::path& path, std::string_view text, std::string_view option = "");

// For a writer's message: 73 when the file could not be created, 74 when writing it failed.
ExitCode classify_write_failure(std::string_view message);

// Checks that a directory exists or can be created (with its parents); throws CliError (73).
void ensure_directory(const std::filesystem::path& directory, std::string_view option);

}  // namespace pagh_mm
