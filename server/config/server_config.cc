#include "server/config/server_config.h"

#include <unistd.h>

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "cpus/cpu_set.h"
#include "flags/flag_values.h"
#include "hedge/errors/field_error.h"
#include "server/config/engine_settings.h"
#include "server/config/flag_reader.h"
#include "server/config/schema/settings_schema.h"

namespace tailgate::server {
namespace {

void CheckDistinct(FlagReader& reader, absl::string_view flag,
                   const ListenAddress& address, absl::string_view other_flag,
                   const ListenAddress& other) {
  const bool ephemeral = !address.is_unix && address.port == 0;
  if (!ephemeral && address == other) {
    reader.Fail(flag, absl::StrCat("same address as --", other_flag, " (",
                                   address.ToString(), ")"));
  }
}

// An integer within the bounds the schema declares for `flag`.
int64_t Bounded(FlagReader& reader, absl::string_view flag,
                const RawValue& value) {
  const SettingBounds bounds = BoundsOf(flag);
  return reader.IntegerIn(flag, value, bounds.min, bounds.max);
}

// Fails `flag` unless `value` is one the schema allows.
void CheckAllowed(FlagReader& reader, absl::string_view flag,
                  const std::string& value) {
  if (!Allows(flag, value)) {
    reader.Fail(flag, absl::StrCat("want ", AllowedText(flag), ", got \"",
                                   value, "\""));
  }
}

}  // namespace

absl::StatusOr<ServerConfig> ConfigFromRawFlags(const RawFlags& flags) {
  FlagReader reader(&flags.file_locations);
  ServerConfig config;
  config.engine = EngineConfigFromFlags(reader, flags);

  config.listen = reader.Address("listen", flags.listen);
  config.admin = reader.Address("admin", flags.admin);
  config.metrics_listen =
      reader.Address("metrics_listen", flags.metrics_listen);
  if (config.metrics_listen.is_unix) {
    reader.Fail("metrics_listen", "want host:port (HTTP is served over TCP)");
  }
  CheckDistinct(reader, "admin", config.admin, "listen", config.listen);
  CheckDistinct(reader, "metrics_listen", config.metrics_listen, "listen",
                config.listen);
  CheckDistinct(reader, "metrics_listen", config.metrics_listen, "admin",
                config.admin);

  if (!flags.http_listen.empty()) {
    config.http_listen = reader.Address("http_listen", flags.http_listen);
    CheckDistinct(reader, "http_listen", *config.http_listen, "listen",
                  config.listen);
    CheckDistinct(reader, "http_listen", *config.http_listen, "admin",
                  config.admin);
    CheckDistinct(reader, "http_listen", *config.http_listen, "metrics_listen",
                  config.metrics_listen);
  }
  if (!flags.read_listen.empty()) {
    config.read_listen = reader.Address("read_listen", flags.read_listen);
    CheckDistinct(reader, "read_listen", *config.read_listen, "listen",
                  config.listen);
    CheckDistinct(reader, "read_listen", *config.read_listen, "admin",
                  config.admin);
    CheckDistinct(reader, "read_listen", *config.read_listen, "metrics_listen",
                  config.metrics_listen);
    if (config.http_listen.has_value()) {
      CheckDistinct(reader, "read_listen", *config.read_listen, "http_listen",
                    *config.http_listen);
    }
  }
  config.http_max_connections = static_cast<int>(
      Bounded(reader, "http_max_connections", flags.http_max_connections));
  config.http_header_timeout =
      reader.Duration("http_header_timeout", flags.http_header_timeout);
  if (config.http_header_timeout <= absl::ZeroDuration()) {
    reader.Fail("http_header_timeout", absl::StrCat("must be positive, got ",
                                                    flags.http_header_timeout));
  }

  // Defaults to twice max_requests, once that has been validated.
  int64_t streams = 0;
  if (!flags.max_streams_per_connection.empty()) {
    streams = Bounded(reader, "max_streams_per_connection",
                      flags.max_streams_per_connection);
  }
  config.max_grpc_memory_bytes =
      Bounded(reader, "max_grpc_memory_bytes", flags.max_grpc_memory_bytes);
  config.max_connections = static_cast<int>(
      Bounded(reader, "max_connections", flags.max_connections));
  config.max_batch_reads = static_cast<int>(
      Bounded(reader, "max_batch_reads", flags.max_batch_reads));
  config.max_buffered_bytes =
      Bounded(reader, "max_buffered_bytes", flags.max_buffered_bytes);
  config.send_timeout = reader.Duration("send_timeout", flags.send_timeout);
  if (config.send_timeout <= absl::ZeroDuration()) {
    reader.Fail("send_timeout",
                absl::StrCat("must be positive, got ", flags.send_timeout));
  }

  config.drain_timeout = reader.Duration("drain_timeout", flags.drain_timeout);
  if (config.drain_timeout < absl::ZeroDuration()) {
    reader.Fail("drain_timeout", absl::StrCat("must not be negative, got ",
                                              flags.drain_timeout));
  }
  if (!flags.ca_file.empty() && access(flags.ca_file.c_str(), R_OK) != 0) {
    reader.Fail("ca_file", absl::StrCat("cannot read \"", flags.ca_file, "\""));
  }

  CheckAllowed(reader, "listen_front", flags.listen_front);
  config.listen_front =
      flags.listen_front == "grpc" ? ListenFront::kGrpc : ListenFront::kLoop;
  config.unix_socket_mode = reader.Take(
      "unix_socket_mode", ParseUnixSocketMode(flags.unix_socket_mode),
      kDefaultUnixSocketMode);
  for (ListenAddress* address : {&config.listen, &config.admin}) {
    address->unix_mode = config.unix_socket_mode;
  }
  for (std::optional<ListenAddress>* address :
       {&config.http_listen, &config.read_listen}) {
    if (address->has_value()) (*address)->unix_mode = config.unix_socket_mode;
  }
  CheckAllowed(reader, "log_format", flags.log_format);
  config.log_format =
      flags.log_format == "json" ? LogFormat::kJson : LogFormat::kLogfmt;
  config.cpus = reader.Take("cpus", CpusToUse(flags.cpus), std::vector<int>());
  config.sched_policy =
      reader.Take("sched_policy", ParseSchedPolicy(flags.sched_policy),
                  SchedPolicy::kNormal);
  if (!reader.status().ok()) return reader.status();

  if (absl::Status s = hedge::ValidateEngineConfig(config.engine); !s.ok()) {
    return ForSourceOfField(s, flags);
  }
  if (config.max_buffered_bytes < config.engine.max_response_bytes) {
    reader.Fail("max_buffered_bytes",
                absl::StrCat("must be at least max_response_bytes (",
                             config.engine.max_response_bytes, "), got ",
                             config.max_buffered_bytes));
    return reader.status();
  }
  // Only now is max_requests known to be in range.
  config.max_streams_per_connection =
      flags.max_streams_per_connection.empty()
          ? static_cast<int>(
                std::min<int64_t>(2 * config.engine.admission.max_requests,
                                  std::numeric_limits<int>::max()))
          : static_cast<int>(streams);
  return config;
}

}  // namespace tailgate::server
