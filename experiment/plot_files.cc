#include "experiment/plot_files.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "experiment/plots.h"
#include "tests/e2e/shell_like_spawn.h"

extern char** environ;

namespace tailgate::experiment {

std::string Join(const std::string& dir, const std::string& file) {
  return (std::filesystem::path(dir) / file).string();
}

absl::Status WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  out.close();
  if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

absl::Status RunGnuplot(const std::string& script) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO);
  std::string name = "gnuplot";
  std::string arg = script;
  char* argv[] = {name.data(), arg.data(), nullptr};
  // Spawned with no signal blocked, so that StopChildren's SIGTERM ends it.
  const testing::ShellLikeSpawnAttr attr;
  pid_t pid = 0;
  const int error =
      posix_spawn(&pid, kGnuplot, &actions, attr.get(), argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) {
    return absl::UnavailableError(absl::StrCat("cannot run ", kGnuplot));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::InternalError(
        absl::StrCat(kGnuplot, " failed on ", script, " (see stderr)"));
  }
  return absl::OkStatus();
}

std::string ScriptHeader(const std::string& png, const std::string& title) {
  return absl::StrCat("set terminal pngcairo size 960,600 noenhanced\n",
                      "set output '", png, "'\n", "set title '", title, "'\n",
                      "set grid\n");
}

std::string Number(double value) {
  return std::isfinite(value) ? absl::StrFormat("%.4f", value) : "NaN";
}

}  // namespace tailgate::experiment
