// Termination signals (SIGTERM, SIGINT) handled without async signal
// handlers: they are blocked in every thread and taken with sigwait(2).
// SIGHUP is blocked and taken the same way, and handed to the caller: it
// does not end the process (a sidecar's supervisor or a closed terminal
// must not kill it with reads in flight); main reloads the --config file
// on it.
//
// main calls BlockTerminationSignals() first, before any thread exists, so
// every thread inherits the mask. After start-up it calls
// AwaitTerminationSignal(), which returns the first signal; then
// ExitOnNextTerminationSignal() so that a second signal during the drain
// ends the process at once with exit code 128 + signal (130 for SIGINT,
// 143 for SIGTERM), as a shell reports a signal death.
//
// Thread safety: call from main only, in the order above.

#ifndef TAILGATE_SERVER_PROCESS_TERMINATION_SIGNALS_H_
#define TAILGATE_SERVER_PROCESS_TERMINATION_SIGNALS_H_

#include "absl/functional/function_ref.h"

namespace tailgate::server {

// Blocks SIGTERM, SIGINT and SIGHUP in the calling thread (and every thread
// it starts afterwards).
void BlockTerminationSignals();

// Blocks until SIGTERM or SIGINT arrives; returns its number. Each SIGHUP
// before it calls `on_hangup` (on the calling thread).
int AwaitTerminationSignal(absl::FunctionRef<void()> on_hangup = [] {});

// Starts a detached thread that calls _exit(128 + signal) on the next
// SIGTERM or SIGINT.
void ExitOnNextTerminationSignal();

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_PROCESS_TERMINATION_SIGNALS_H_
