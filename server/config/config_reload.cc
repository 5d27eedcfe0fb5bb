#include "server/config/config_reload.h"

#include <fstream>
#include <optional>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/config/schema/settings_schema.h"

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

ConfigReloader::ConfigReloader(const LoadedConfig& started,
                               hedge::Engine& engine, const Logger& log)
    : command_line_(started.command_line),
      on_command_line_(started.on_command_line),
      running_(started.config),
      engine_(engine),
      log_(log) {
  hedge::MutexLock lock(&mu_);
  // What start-up read, so that a watch event changes nothing unless the
  // file did.
  last_text_ = started.file_text;
  last_success_unix_nanos_.store(absl::ToUnixNanos(absl::Now()),
                                 std::memory_order_relaxed);
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
  last_successful_.store(status.ok(), std::memory_order_relaxed);
  if (!status.ok()) {
    rejected_.fetch_add(1, std::memory_order_relaxed);
    log_.Warn("config_reload", {{"result", "rejected"},
                                {"trigger", why},
                                {"error", status.message()}});
    return;
  }
  last_success_unix_nanos_.store(absl::ToUnixNanos(absl::Now()),
                                 std::memory_order_relaxed);
  ok_.fetch_add(1, std::memory_order_relaxed);
}

absl::Status ConfigReloader::Apply(const std::string& text) {
  // The start-up path, under the same command line.
  absl::StatusOr<LoadedConfig> loaded =
      LoadConfigText(command_line_, on_command_line_, text);
  if (!loaded.ok()) return loaded.status();
  const ServerConfig* next = &loaded->config;
  // Checked again within the running engine-wide limits, which a reload
  // does not change.
  if (absl::Status s = engine_.SetUpstreams(next->engine.upstreams); !s.ok()) {
    return ForSourceOfField(s, loaded->merged);
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
               {"reason",
                "listeners and global limits are read at start-up "
                "only; the running values stay"}});
  }
  return absl::OkStatus();
}

ReloadSnapshot ConfigReloader::Counts() const {
  return ReloadSnapshot{
      .ok = ok_.load(std::memory_order_relaxed),
      .rejected = rejected_.load(std::memory_order_relaxed),
      .last_successful = last_successful_.load(std::memory_order_relaxed),
      .last_success = absl::FromUnixNanos(
          last_success_unix_nanos_.load(std::memory_order_relaxed))};
}

namespace {

bool SameAddress(const std::optional<ListenAddress>& a,
                 const std::optional<ListenAddress>& b) {
  return a.has_value() == b.has_value() && (!a.has_value() || *a == *b);
}

using Differs = bool (*)(const ServerConfig&, const ServerConfig&);

// How to see a change of each setting a reload cannot apply, by its field
// in the config file. Which of them count is the schema's to say
// (NeedsRestartFields); config_reload_test holds this table to it.
const std::pair<const char*, Differs> kCompare[] = {
    {"listen", [](const ServerConfig& a,
                  const ServerConfig& b) { return !(a.listen == b.listen); }},
    {"admin", [](const ServerConfig& a,
                 const ServerConfig& b) { return !(a.admin == b.admin); }},
    {"metrics_listen",
     [](const ServerConfig& a, const ServerConfig& b) {
       return !(a.metrics_listen == b.metrics_listen);
     }},
    {"http_listen",
     [](const ServerConfig& a, const ServerConfig& b) {
       return !SameAddress(a.http_listen, b.http_listen);
     }},
    {"read_listen",
     [](const ServerConfig& a, const ServerConfig& b) {
       return !SameAddress(a.read_listen, b.read_listen);
     }},
    {"listen_front",
     [](const ServerConfig& a, const ServerConfig& b) {
       return a.listen_front != b.listen_front;
     }},
    {"unix_socket_mode",
     [](const ServerConfig& a, const ServerConfig& b) {
       return a.unix_socket_mode != b.unix_socket_mode;
     }},
    {"timeout",
     [](const ServerConfig& a, const ServerConfig& b) {
       return a.engine.timeout != b.engine.timeout;
     }},
    {"max_requests",
     [](const ServerConfig& a, const ServerConfig& b) {
       return a.engine.admission.max_requests !=
              b.engine.admission.max_requests;
     }},
    {"max_attempts",
     [](const ServerConfig& a, const ServerConfig& b) {
       return a.engine.admission.max_attempts !=
              b.engine.admission.max_attempts;
     }},
    {"max_response_bytes",
     [](const ServerConfig& a, const ServerConfig& b) {
       return a.engine.max_response_bytes != b.engine.max_response_bytes;
     }},
    {"max_buffered_bytes",
     [](const ServerConfig& a, const ServerConfig& b) {
       return a.max_buffered_bytes != b.max_buffered_bytes;
     }},
    {"max_streams_per_connection",
     [](const ServerConfig& a, const ServerConfig& b) {
       return a.max_streams_per_connection != b.max_streams_per_connection;
     }},
    {"max_grpc_memory_bytes",
     [](const ServerConfig& a, const ServerConfig& b) {
       return a.max_grpc_memory_bytes != b.max_grpc_memory_bytes;
     }},
    {"max_batch_reads",
     [](const ServerConfig& a, const ServerConfig& b) {
       return a.max_batch_reads != b.max_batch_reads;
     }},
    {"max_connections",
     [](const ServerConfig& a, const ServerConfig& b) {
       return a.max_connections != b.max_connections;
     }},
    {"send_timeout",
     [](const ServerConfig& a, const ServerConfig& b) {
       return a.send_timeout != b.send_timeout;
     }},
    {"drain_timeout",
     [](const ServerConfig& a, const ServerConfig& b) {
       return a.drain_timeout != b.drain_timeout;
     }},
    // Admission's per-tenant cap is sized at start-up.
    {"tenant_share",
     [](const ServerConfig& a, const ServerConfig& b) {
       return a.engine.tenant_share != b.engine.tenant_share;
     }},
};

}  // namespace

std::vector<std::string> ConfigReloader::NeedsRestart(
    const ServerConfig& running, const ServerConfig& next) {
  std::vector<std::string> changed;
  for (const std::string& field : NeedsRestartFields()) {
    for (const auto& [name, differs] : kCompare) {
      if (field == name && differs(running, next)) changed.push_back(field);
    }
  }
  return changed;
}

std::vector<std::string> ConfigReloader::ComparedFields() {
  std::vector<std::string> fields;
  for (const auto& [name, differs] : kCompare) fields.push_back(name);
  return fields;
}

}  // namespace tailgate::server
