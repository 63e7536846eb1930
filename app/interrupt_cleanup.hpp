// Ctrl-C (and kill, hang-up, a closed pipe) must not leave hidden staging or temporary files
// behind: the handler installed here removes every file recorded in pagh::in_flight
// (pagh/output_file.hpp: the writers' temporaries, OutputTransaction's staged outputs), then
// re-raises the signal with its default action, so the process still ends as the signal says
// (status 130 for SIGINT in a shell) and no output is committed.
#pragma once

namespace pagh_mm {

// Installs the handler for SIGINT, SIGTERM, SIGHUP and SIGPIPE. Call once, early in main().
void install_interrupt_cleanup();

}  // namespace pagh_mm
