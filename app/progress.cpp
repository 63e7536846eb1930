#include "progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "cli_error.hpp"

namespace pagh_mm {
namespace {

constexpr auto kShowAfter = std::chrono::milliseconds(500);  // quick runs never flash a bar
constexpr auto kRedrawEvery = std::chrono::milliseconds(100);
constexpr int kBarWidth = 24;

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

ProgressMode parse_progress_mode(const std::string& option, const std::string& text) {
  if (text == "auto") return ProgressMode::automatic;
  if (text == "always") return ProgressMode::always;
  if (text == "never") return ProgressMode::never;
  usage_error(option, "unknown value '" + text + "' (expected auto, always or never)");
}

Progress::Progress(ProgressMode mode, bool quiet) {
  const bool terminal = ::isatty(STDERR_FILENO) == 1;
  if (mode == ProgressMode::always) display_ = terminal ? Display::terminal : Display::lines;
  if (mode == ProgressMode::automatic && terminal && !quiet) display_ = Display::terminal;
  if (display_ == Display::terminal) redraw_thread_ = std::thread([this] { run_redraw_thread(); });
}

Progress::~Progress() { finish(); }

void Progress::stage(int index, int count, std::string label) {
  std::lock_guard lock(mutex_);
  if (display_ == Display::none) return;
  end_stage_locked();
  stage_index_ = index, stage_count_ = count, label_ = std::move(label);
  stage_started_ = Clock::now();
}

void Progress::step(std::int64_t done, std::int64_t total, std::string label) {
  std::lock_guard lock(mutex_);
  if (display_ == Display::none) return;
  done_ = done, total_ = total, label_ = std::move(label);
  if (display_ == Display::lines && total > 0) {
    const int decile = static_cast<int>(10 * done / total);
    if (decile != last_logged_decile_) {
      last_logged_decile_ = decile;
      std::fprintf(stderr, "pagh-mm: %3d%% (%lld/%lld) %s, %.1f s\n", 10 * decile, static_cast<long long>(done),
                   static_cast<long long>(total), label_.c_str(), seconds_since(started_));
    }
  }
}

void Progress::finish() {
  {
    std::lock_guard lock(mutex_);
    if (finished_) return;
    finished_ = true;
    end_stage_locked();
    stopping_ = true;
  }
  wake_.notify_all();
  if (redraw_thread_.joinable()) redraw_thread_.join();
  if (display_ == Display::terminal && drawn_) std::fputs("\r\033[K", stderr);  // erase the bar
}

void Progress::end_stage_locked() {
  if (display_ == Display::lines && stage_index_ > 0)
    std::fprintf(stderr, "pagh-mm: [%d/%d] %s: %.3f s\n", stage_index_, stage_count_, label_.c_str(),
                 seconds_since(stage_started_));
  stage_index_ = 0;
}

void Progress::redraw_locked() {
  // Stages: the bar fills by finished stages; steps: by the fraction of work done.
  double fraction = 0;
  std::string counter;
  if (total_ > 0) {
    fraction = static_cast<double>(done_) / static_cast<double>(total_);
    counter = std::to_string(done_) + "/" + std::to_string(total_);
  } else if (stage_count_ > 0) {
    fraction = static_cast<double>(stage_index_ - 1) / stage_count_;
    counter = std::to_string(stage_index_) + "/" + std::to_string(stage_count_);
  }
  const int filled = std::clamp(static_cast<int>(fraction * kBarWidth + 0.5), 0, kBarWidth);
  std::fprintf(stderr, "\r\033[K[%s%s] %s %s %.1f s", std::string(filled, '#').c_str(),
               std::string(kBarWidth - filled, '-').c_str(), counter.c_str(), label_.c_str(), seconds_since(started_));
  std::fflush(stderr);
  drawn_ = true;
}

void Progress::run_redraw_thread() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    wake_.wait_for(lock, kRedrawEvery, [this] { return stopping_; });
    if (!stopping_ && Clock::now() - started_ >= kShowAfter) redraw_locked();
  }
}

}  // namespace pagh_mm
