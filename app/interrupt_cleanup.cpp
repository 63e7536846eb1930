#include "interrupt_cleanup.hpp"

#include <signal.h>

#include "pagh/output_file.hpp"

namespace pagh_mm {
namespace {

// Async-signal-safe throughout: unlink(), sigaction(), raise() and atomic loads only.
extern "C" void remove_in_flight_files_and_reraise(int signal_number) {
  pagh::in_flight::remove_all();
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  sigaction(signal_number, &default_action, nullptr);
  // The signal is blocked while its handler runs; raise() delivers it as soon as we return.
  raise(signal_number);
}

}  // namespace

void install_interrupt_cleanup() {
  struct sigaction action {};
  action.sa_handler = remove_in_flight_files_and_reraise;
  sigemptyset(&action.sa_mask);
  // SA_RESETHAND as a second line of defence: a second signal during cleanup ends the process.
  action.sa_flags = SA_RESETHAND;
  for (int signal_number : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) {
    struct sigaction previous {};
    // A signal ignored by whoever started us (nohup, a shell's background job) stays ignored.
    if (sigaction(signal_number, nullptr, &previous) == 0 && previous.sa_handler == SIG_IGN) continue;
    sigaction(signal_number, &action, nullptr);
  }
}

}  // namespace pagh_mm
