// ShellLikeSpawnAttr: posix_spawn attributes under which a child starts as
// from a shell: no signal blocked and every disposition the default. A test
// runner (or the experiment's threads) may block signals, and a child would
// inherit that mask; the sidecar must then still see SIGTERM and SIGHUP.
//
// Example:
//   ShellLikeSpawnAttr attr;
//   posix_spawn(&pid, path, &actions, attr.get(), argv, envp);
//
// Thread safety: one object per spawn, on one thread.

#ifndef TAILGATE_TESTS_E2E_SHELL_LIKE_SPAWN_H_
#define TAILGATE_TESTS_E2E_SHELL_LIKE_SPAWN_H_

#include <signal.h>
#include <spawn.h>

namespace tailgate::testing {

class ShellLikeSpawnAttr {
 public:
  ShellLikeSpawnAttr() {
    posix_spawnattr_init(&attr_);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attr_, &none);
    posix_spawnattr_setsigdefault(&attr_, &all);
    posix_spawnattr_setflags(&attr_,
                             POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  }
  ~ShellLikeSpawnAttr() { posix_spawnattr_destroy(&attr_); }
  ShellLikeSpawnAttr(const ShellLikeSpawnAttr&) = delete;
  ShellLikeSpawnAttr& operator=(const ShellLikeSpawnAttr&) = delete;

  const posix_spawnattr_t* get() const { return &attr_; }

 private:
  posix_spawnattr_t attr_;
};

}  // namespace tailgate::testing

#endif  // TAILGATE_TESTS_E2E_SHELL_LIKE_SPAWN_H_
