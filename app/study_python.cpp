#include "study_python.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

extern char** environ;

namespace pagh_mm {

namespace fs = std::filesystem;

std::string default_python() { return ::access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3"; }

ScriptRun run_python_script(const std::string& python, const char* script, const std::string& tag,
                            const std::vector<std::string>& args, const fs::path& directory) {
  ScriptRun run;
  const std::string stem = "." + tag + "-" + std::to_string(::getpid());
  const fs::path script_path = directory / (stem + ".py");
  const fs::path log = directory / (stem + ".log");
  {
    std::ofstream out(script_path);
    out << script;
    if (!out) {
      run.last_line = "cannot write the script into " + directory.string();
      return run;
    }
  }
  std::vector<std::string> words = {python, script_path.string()};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, python.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  int status = 0;
  if (spawned == 0) waitpid(pid, &status, 0);
  {
    std::ifstream in(log);
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) run.last_line = line;
  }
  std::error_code ignored;
  fs::remove(script_path, ignored);
  fs::remove(log, ignored);
  run.started = spawned == 0;
  if (!run.started) run.last_line = python + " was not found";
  else run.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

}  // namespace pagh_mm
