#include "server/config/config_watch.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <cstdint>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace tailgate::server {
namespace {

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// Reads and drops every pending event.
void Drain(int fd) {
  alignas(inotify_event) char buffer[4096];
  while (read(fd, buffer, sizeof(buffer)) > 0) {
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<ConfigFileWatch>> ConfigFileWatch::Start(
    const std::string& path, absl::Duration debounce,
    std::function<void()> changed) {
  const int inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (inotify_fd < 0) {
    return absl::InternalError(
        absl::StrCat("inotify_init1: ", strerror(errno)));
  }
  const std::string directory = DirectoryOf(path);
  if (inotify_add_watch(inotify_fd, directory.c_str(),
                        IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM |
                            IN_CREATE | IN_DELETE | IN_MODIFY | IN_ATTRIB) <
      0) {
    const int error = errno;
    close(inotify_fd);
    return absl::InternalError(
        absl::StrCat("watching \"", directory, "\": ", strerror(error)));
  }
  const int stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (stop_fd < 0) {
    const int error = errno;
    close(inotify_fd);
    return absl::InternalError(absl::StrCat("eventfd: ", strerror(error)));
  }
  std::unique_ptr<ConfigFileWatch> watch(
      new ConfigFileWatch(inotify_fd, stop_fd, debounce, std::move(changed)));
  watch->thread_ = std::thread([w = watch.get()] { w->Run(); });
  return watch;
}

ConfigFileWatch::ConfigFileWatch(int inotify_fd, int stop_fd,
                                 absl::Duration debounce,
                                 std::function<void()> changed)
    : inotify_fd_(inotify_fd),
      stop_fd_(stop_fd),
      debounce_(debounce),
      changed_(std::move(changed)) {}

ConfigFileWatch::~ConfigFileWatch() {
  const uint64_t one = 1;
  if (write(stop_fd_, &one, sizeof(one)) < 0) {
    // An eventfd write fails only on overflow, which one write cannot do.
  }
  if (thread_.joinable()) thread_.join();
  close(inotify_fd_);
  close(stop_fd_);
}

void ConfigFileWatch::Run() {
  bool pending = false;  // an event not yet followed by the callback
  for (;;) {
    pollfd fds[2] = {{stop_fd_, POLLIN, 0}, {inotify_fd_, POLLIN, 0}};
    const int timeout_ms =
        pending ? static_cast<int>(absl::ToInt64Milliseconds(debounce_)) : -1;
    const int ready = poll(fds, 2, timeout_ms);
    if (ready < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if ((fds[0].revents & POLLIN) != 0) return;
    if ((fds[1].revents & POLLIN) != 0) {
      Drain(inotify_fd_);
      pending = true;  // quiet for `debounce` from now on
      continue;
    }
    if (ready == 0 && pending) {
      pending = false;
      changed_();
    }
  }
}

}  // namespace tailgate::server
