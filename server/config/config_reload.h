// ConfigReloader: reads the --config file again and applies it to the
// running sidecar (on SIGHUP, and when ConfigFileWatch sees it change).
//
// A reload parses and checks the file exactly as start-up does, with the
// command line's flags over it as at start-up, so a bad file gets the
// same one-line error (FILE:LINE:COLUMN: field: problem). Then:
//  - rejected (a bad file, or upstreams the running engine-wide limits
//    refuse): logged as event=config_reload result=rejected with that
//    line, counted, and nothing changes;
//  - ok: the upstreams — every replica set with its replicas and policy —
//    replace the running ones at once (Engine::SetUpstreams: reads in
//    flight finish on the sets they started with; state of what persists
//    is kept); logged as event=config_reload result=ok, counted.
// Listeners and global limits (the settings the schema declares
// reloadable: false, tenant_share among them: admission is sized at
// start-up) are read at start-up only: when the new file changes any,
// event=config_reload_needs_restart names them (fields=
// listen,max_requests...) and they keep their running values.
//
// Counts says how many reloads were applied and rejected, whether the last
// one was applied (a rejected one stays "not applied" until a good one
// lands: an alert can stay on for as long as the bad file does), and when
// a configuration was last applied (start-up's load is the first).
//
// Thread safety: Reload and Counts are safe from any thread; reloads are
// serialised (mu_).

#ifndef TAILGATE_SERVER_CONFIG_CONFIG_RELOAD_H_
#define TAILGATE_SERVER_CONFIG_CONFIG_RELOAD_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "hedge/sync/mutex.h"
#include "hedge/transport/engine.h"
#include "server/config/config_load.h"
#include "server/config/server_config.h"
#include "server/observability/log.h"
#include "server/observability/metrics.h"

namespace tailgate::server {

class ConfigReloader {
 public:
  // `started` is what the sidecar started with (LoadConfigAtStartUp, its
  // command_line.config naming the file): each reload loads the file again
  // under the same command line. `engine` and `log` must outlive the
  // reloader.
  ConfigReloader(const LoadedConfig& started, hedge::Engine& engine,
                 const Logger& log);

  enum class Trigger {
    kSignal,       // SIGHUP: always reloads
    kFileChanged,  // ConfigFileWatch: a file whose bytes are those last
                   // read is left alone (no log line, no count)
  };
  void Reload(Trigger trigger) ABSL_LOCKS_EXCLUDED(mu_);

  ReloadSnapshot Counts() const;

  // The settings `next` changes from `running` that a reload cannot apply
  // (declared reloadable: false, schema/settings_schema.h), by field name.
  static std::vector<std::string> NeedsRestart(const ServerConfig& running,
                                               const ServerConfig& next);

  // The fields NeedsRestart can compare, by name (for a test that holds
  // them to the schema).
  static std::vector<std::string> ComparedFields();

 private:
  // The reason a reload of `text` is refused, or OK after it applied it.
  absl::Status Apply(const std::string& text)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Constant after construction.
  const RawFlags command_line_;
  const OnCommandLine on_command_line_;
  const ServerConfig running_;
  hedge::Engine& engine_;
  const Logger& log_;

  hedge::Mutex mu_;
  std::string last_text_ ABSL_GUARDED_BY(mu_);  // the file as last read
  std::atomic<uint64_t> ok_{0};
  std::atomic<uint64_t> rejected_{0};
  // The last load's outcome and the last applied one's time in Unix
  // nanoseconds (start-up's at first), written under mu_ and read without
  // it, so that a scrape never waits for a reload.
  std::atomic<bool> last_successful_{true};
  std::atomic<int64_t> last_success_unix_nanos_{0};
};

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_CONFIG_CONFIG_RELOAD_H_
