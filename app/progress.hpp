// Progress on standard error, for runs long enough to wonder about.
//
// The sketch library has no progress callback, so a single multiplication reports its stages
// (reading A, reading B, sketching, verifying, writing) with the time spent, not a percentage it
// could not know; the study, which runs many sketches, reports a true fraction of runs done.
//   terminal: a bar redrawn in place on stderr, shown only once a run has taken 0.5 s, erased at the
//             end (--progress auto when stderr is a terminal and not -q; --progress always on one)
//   lines:    one line per finished stage, or per 10% of a study (--progress always, stderr not a
//             terminal: logs stay readable)
//   none:     nothing (--progress never; auto when stderr is not a terminal or with -q)
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace pagh_mm {

enum class ProgressMode { automatic, always, never };

ProgressMode parse_progress_mode(const std::string& option, const std::string& text);

class Progress {
 public:
  Progress(ProgressMode mode, bool quiet);
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  ~Progress();

  // Starts stage `index` of `count` (1-based), ending the previous stage.
  void stage(int index, int count, std::string label);
  // A fraction of the work: `done` of `total` units, now working on `label`.
  void step(std::int64_t done, std::int64_t total, std::string label);
  // Ends the last stage and erases the bar.
  void finish();

 private:
  enum class Display { none, terminal, lines };
  using Clock = std::chrono::steady_clock;

  void end_stage_locked();
  void redraw_locked();
  void run_redraw_thread();

  Display display_ = Display::none;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::thread redraw_thread_;
  bool stopping_ = false, drawn_ = false, finished_ = false;
  Clock::time_point started_ = Clock::now(), stage_started_ = Clock::now();
  std::string label_;
  int stage_index_ = 0, stage_count_ = 0;
  std::int64_t done_ = 0, total_ = 0;
  int last_logged_decile_ = -1;
};

}  // namespace pagh_mm
