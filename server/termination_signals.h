// Termination signals (SIGTERM, SIGINT) handled without async signal
// handlers: they are blocked in every thread and taken with sigwait(2).
//
// main calls BlockTerminationSignals() first, before any thread exists, so
// every thread inherits the mask. After start-up it calls
// AwaitTerminationSignal(), which returns the first signal; then
// ExitOnNextTerminationSignal() so that a second signal during the drain
// ends the process at once with exit code 128 + signal (130 for SIGINT,
// 143 for SIGTERM), as a shell reports a signal death.
//
// Thread safety: call from main only, in the order above.

#ifndef TAILGATE_SERVER_TERMINATION_SIGNALS_H_
#define TAILGATE_SERVER_TERMINATION_SIGNALS_H_

namespace tailgate::server {

void BlockTerminationSignals();

// Blocks until SIGTERM or SIGINT arrives; returns its number.
int AwaitTerminationSignal();

// Starts a detached thread that calls _exit(128 + signal) on the next
// SIGTERM or SIGINT.
void ExitOnNextTerminationSignal();

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_TERMINATION_SIGNALS_H_
