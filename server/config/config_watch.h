// ConfigFileWatch: calls back when the --config file may have changed,
// seen through inotify(7) on the file's directory.
//
// Why the directory: a Kubernetes ConfigMap volume updates by swapping a
// `..data` symlink (the file itself is a symlink through it, and is never
// written), and editors save by writing a new file and renaming it over
// the old one. A watch on the file would see neither; one on the
// directory sees both, and plain writes too.
//
// Events are debounced: the callback runs once the directory has been
// quiet for `debounce` after an event, so a burst (an editor's temporary
// files, the ConfigMap's several renames) gives one call. It runs on the
// watch's own thread and may block; events meanwhile start a new
// debounce. The callback decides whether the file really changed
// (ConfigReloader compares its bytes).
//
// Thread safety: Start and the destructor from one thread; the callback
// runs on the watch's thread, which the destructor stops and joins.

#ifndef TAILGATE_SERVER_CONFIG_CONFIG_WATCH_H_
#define TAILGATE_SERVER_CONFIG_CONFIG_WATCH_H_

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace tailgate::server {

class ConfigFileWatch {
 public:
  // Watches the directory of `path`. Fails when inotify or the watch
  // cannot be set up (the error names the directory).
  static absl::StatusOr<std::unique_ptr<ConfigFileWatch>> Start(
      const std::string& path, absl::Duration debounce,
      std::function<void()> changed);

  ~ConfigFileWatch();
  ConfigFileWatch(const ConfigFileWatch&) = delete;
  ConfigFileWatch& operator=(const ConfigFileWatch&) = delete;

 private:
  ConfigFileWatch(int inotify_fd, int stop_fd, absl::Duration debounce,
                  std::function<void()> changed);
  void Run();

  const int inotify_fd_;
  const int stop_fd_;  // an eventfd: written once by the destructor
  const absl::Duration debounce_;
  const std::function<void()> changed_;
  std::thread thread_;
};

// How long the directory must be quiet before the callback runs.
inline constexpr absl::Duration kConfigWatchDebounce = absl::Milliseconds(200);

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_CONFIG_CONFIG_WATCH_H_
