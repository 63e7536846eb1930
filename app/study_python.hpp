// The study's Python helpers (study_plot.py, study_data.py) are embedded in pagh-mm and run as
// separate processes: written to a hidden temporary file in the study's directory, run with python3,
// their output kept in a hidden log whose last line says why when they fail; both files removed.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace pagh_mm {

struct ScriptRun {
  bool started = false;   // false: the interpreter could not be run at all
  int exit_status = -1;   // its exit status; -1 when killed by a signal
  std::string last_line;  // the last non-empty line it printed (stdout and stderr together)
};

// Debian's /usr/bin/python3 first: a python earlier on PATH (pyenv, a venv) may lack the
// packages; else python3 from PATH.
std::string default_python();

// Runs `python script args...` with the script's text written into `directory` (which must exist).
ScriptRun run_python_script(const std::string& python, const char* script, const std::string& tag,
                            const std::vector<std::string>& args, const std::filesystem::path& directory);

}  // namespace pagh_mm
