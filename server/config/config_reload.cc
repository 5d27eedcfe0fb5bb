#include "server/config/config_reload.h"

#include <fstream>
#include <optional>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tailgate::server {
namespace {

// The file's bytes; nullopt when it cannot be read.
std::optional<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in.is_open()) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return text.str();
}

}  // namespace

ConfigReloader::ConfigReloader(RawFlags command_line,
                               OnCommandLine on_command_line,
                               const ServerConfig& running,
                               hedge::Engine& engine, const Logger& log)
    : command_line_(std::move(command_line)),
      on_command_line_(std::move(on_command_line)),
      running_(running),
      engine_(engine),
      log_(log) {
  // About what start-up read, so that a watch event changes nothing
  // unless the file did.
  last_text_ = ReadFile(command_line_.config).value_or("");
}

void ConfigReloader::Reload(Trigger trigger) {
  hedge::MutexLock lock(&mu_);
  const std::optional<std::string> text = ReadFile(command_line_.config);
  if (trigger == Trigger::kFileChanged && text.has_value() &&
      *text == last_text_) {
    return;
  }
  const char* why = trigger == Trigger::kSignal ? "sighup" : "file_changed";
  absl::Status status =
      text.has_value()
          ? Apply(*text)
          : absl::InvalidArgumentError(absl::StrCat(
                "--config: cannot read \"", command_line_.config, "\""));
  if (text.has_value()) last_text_ = *text;
  if (!status.ok()) {
    rejected_.fetch_add(1, std::memory_order_relaxed);
    log_.Warn("config_reload", {{"result", "rejected"},
                                {"trigger", why},
                                {"error", status.message()}});
    return;
  }
  ok_.fetch_add(1, std::memory_order_relaxed);
}

absl::Status ConfigReloader::Apply(const std::string& text) {
  absl::StatusOr<RawFlags> flags = ApplyConfigText(
      command_line_.config, text, command_line_, on_command_line_);
  if (!flags.ok()) return flags.status();
  absl::StatusOr<ServerConfig> next = ConfigFromRawFlags(*flags);
  if (!next.ok()) return next.status();
  if (absl::Status s = hedge::Engine::CheckConfig(next->engine); !s.ok()) {
    return ForSourceOfField(s, *flags);
  }
  // Checked again within the running engine-wide limits, which a reload
  // does not change.
  if (absl::Status s = engine_.SetUpstreams(next->engine.upstreams);
      !s.ok()) {
    return ForSourceOfField(s, *flags);
  }
  size_t replicas = 0;
  for (const hedge::UpstreamConfig& upstream : next->engine.upstreams) {
    replicas += upstream.replicas.size();
  }
  log_.Info("config_reload", {{"result", "ok"},
                              {"upstreams", next->engine.upstreams.size()},
                              {"replicas", replicas}});
  const std::vector<std::string> restart = NeedsRestart(running_, *next);
  if (!restart.empty()) {
    log_.Warn("config_reload_needs_restart",
              {{"fields", absl::StrJoin(restart, ",")},
               {"reason", "listeners and global limits are read at start-up "
                          "only; the running values stay"}});
  }
  return absl::OkStatus();
}

ReloadSnapshot ConfigReloader::Counts() const {
  return ReloadSnapshot{ok_.load(std::memory_order_relaxed),
                        rejected_.load(std::memory_order_relaxed)};
}

std::vector<std::string> ConfigReloader::NeedsRestart(
    const ServerConfig& running, const ServerConfig& next) {
  std::vector<std::string> changed;
  const auto check = [&changed](const char* field, bool differs) {
    if (differs) changed.push_back(field);
  };
  check("listen", !(running.listen == next.listen));
  check("admin", !(running.admin == next.admin));
  check("metrics_listen", !(running.metrics_listen == next.metrics_listen));
  check("http_listen", running.http_listen.has_value() !=
                               next.http_listen.has_value() ||
                           (running.http_listen.has_value() &&
                            !(*running.http_listen == *next.http_listen)));
  check("read_listen",
        running.read_listen.has_value() != next.read_listen.has_value() ||
            (running.read_listen.has_value() &&
             !(*running.read_listen == *next.read_listen)));
  check("listen_front", running.listen_front != next.listen_front);
  check("timeout", running.engine.timeout != next.engine.timeout);
  check("max_requests", running.engine.admission.max_requests !=
                            next.engine.admission.max_requests);
  check("max_attempts", running.engine.admission.max_attempts !=
                            next.engine.admission.max_attempts);
  check("max_response_bytes",
        running.engine.max_response_bytes != next.engine.max_response_bytes);
  check("max_buffered_bytes",
        running.max_buffered_bytes != next.max_buffered_bytes);
  check("max_streams_per_connection", running.max_streams_per_connection !=
                                          next.max_streams_per_connection);
  check("max_grpc_memory_bytes",
        running.max_grpc_memory_bytes != next.max_grpc_memory_bytes);
  check("max_connections", running.max_connections != next.max_connections);
  check("send_timeout", running.send_timeout != next.send_timeout);
  check("drain_timeout", running.drain_timeout != next.drain_timeout);
  return changed;
}

}  // namespace tailgate::server
