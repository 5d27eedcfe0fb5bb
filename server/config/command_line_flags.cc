#include "server/config/command_line_flags.h"

#include <string>

#include "absl/flags/flag.h"
#include "server/config/schema/settings_schema.h"

// Each flag's default and help come from its declaration in the .proto
// files; settings_schema_test checks that every declared flag is defined
// here and that no flag is defined without a declaration.
#define TAILGATE_SETTING_FLAG(name)                                       \
  ABSL_FLAG(std::string, name, ::tailgate::server::SettingDefault(#name), \
            ::tailgate::server::SettingHelp(#name))

// tailgate.v1.CommandLine
TAILGATE_SETTING_FLAG(config);
TAILGATE_SETTING_FLAG(backends);
TAILGATE_SETTING_FLAG(timer_spin);
TAILGATE_SETTING_FLAG(log_format);
TAILGATE_SETTING_FLAG(cpus);
TAILGATE_SETTING_FLAG(sched_policy);
TAILGATE_SETTING_FLAG(http_max_connections);
TAILGATE_SETTING_FLAG(http_header_timeout);
// tailgate.v1.SidecarConfig
TAILGATE_SETTING_FLAG(listen);
TAILGATE_SETTING_FLAG(admin);
TAILGATE_SETTING_FLAG(metrics_listen);
TAILGATE_SETTING_FLAG(http_listen);
TAILGATE_SETTING_FLAG(read_listen);
TAILGATE_SETTING_FLAG(listen_front);
TAILGATE_SETTING_FLAG(unix_socket_mode);
TAILGATE_SETTING_FLAG(timeout);
TAILGATE_SETTING_FLAG(max_requests);
TAILGATE_SETTING_FLAG(max_attempts);
TAILGATE_SETTING_FLAG(max_response_bytes);
TAILGATE_SETTING_FLAG(max_buffered_bytes);
TAILGATE_SETTING_FLAG(max_streams_per_connection);
TAILGATE_SETTING_FLAG(max_grpc_memory_bytes);
TAILGATE_SETTING_FLAG(max_connections);
TAILGATE_SETTING_FLAG(max_batch_reads);
TAILGATE_SETTING_FLAG(send_timeout);
TAILGATE_SETTING_FLAG(drain_timeout);
TAILGATE_SETTING_FLAG(tenant_share);
// tailgate.v1.UpstreamConfig: the defaults of upstreams that leave them out
TAILGATE_SETTING_FLAG(hedge_delay);
TAILGATE_SETTING_FLAG(hedge_fraction);
TAILGATE_SETTING_FLAG(hedge_burst);
TAILGATE_SETTING_FLAG(failure_threshold);
TAILGATE_SETTING_FLAG(cooldown);
TAILGATE_SETTING_FLAG(preconnect);
ABSL_FLAG(bool, backend_http2,
          ::tailgate::server::SettingDefault("backend_http2") == "true",
          ::tailgate::server::SettingHelp("backend_http2"));
ABSL_FLAG(bool, coalesce,
          ::tailgate::server::SettingDefault("coalesce") == "true",
          ::tailgate::server::SettingHelp("coalesce"));
TAILGATE_SETTING_FLAG(ca_file);
TAILGATE_SETTING_FLAG(hedge_delay_min);
TAILGATE_SETTING_FLAG(hedge_delay_max);
TAILGATE_SETTING_FLAG(retry_fraction);
TAILGATE_SETTING_FLAG(retry_per_second);
TAILGATE_SETTING_FLAG(retry_window);
TAILGATE_SETTING_FLAG(ejection_failure_rate);
TAILGATE_SETTING_FLAG(ejection_min_requests);
TAILGATE_SETTING_FLAG(ejection_window);
TAILGATE_SETTING_FLAG(max_ejection_time);
TAILGATE_SETTING_FLAG(probe_successes);
TAILGATE_SETTING_FLAG(ramp_up);
TAILGATE_SETTING_FLAG(max_ejected_share);
TAILGATE_SETTING_FLAG(give_up_factor);
TAILGATE_SETTING_FLAG(give_up_min);
TAILGATE_SETTING_FLAG(give_up_max);
TAILGATE_SETTING_FLAG(probe_path);
TAILGATE_SETTING_FLAG(probe_method);

namespace tailgate::server {

RawFlags RawFlagsFromCommandLine() {
  RawFlags flags;
  flags.config = absl::GetFlag(FLAGS_config);
  flags.backends = absl::GetFlag(FLAGS_backends);
  flags.listen = absl::GetFlag(FLAGS_listen);
  flags.admin = absl::GetFlag(FLAGS_admin);
  flags.metrics_listen = absl::GetFlag(FLAGS_metrics_listen);
  flags.hedge_delay = absl::GetFlag(FLAGS_hedge_delay);
  flags.hedge_delay_min = absl::GetFlag(FLAGS_hedge_delay_min);
  flags.hedge_delay_max = absl::GetFlag(FLAGS_hedge_delay_max);
  flags.hedge_fraction = absl::GetFlag(FLAGS_hedge_fraction);
  flags.hedge_burst = absl::GetFlag(FLAGS_hedge_burst);
  flags.retry_fraction = absl::GetFlag(FLAGS_retry_fraction);
  flags.retry_per_second = absl::GetFlag(FLAGS_retry_per_second);
  flags.retry_window = absl::GetFlag(FLAGS_retry_window);
  flags.tenant_share = absl::GetFlag(FLAGS_tenant_share);
  flags.timeout = absl::GetFlag(FLAGS_timeout);
  flags.max_requests = absl::GetFlag(FLAGS_max_requests);
  flags.max_streams_per_connection =
      absl::GetFlag(FLAGS_max_streams_per_connection);
  flags.max_attempts = absl::GetFlag(FLAGS_max_attempts);
  flags.max_grpc_memory_bytes = absl::GetFlag(FLAGS_max_grpc_memory_bytes);
  flags.max_buffered_bytes = absl::GetFlag(FLAGS_max_buffered_bytes);
  flags.max_connections = absl::GetFlag(FLAGS_max_connections);
  flags.max_batch_reads = absl::GetFlag(FLAGS_max_batch_reads);
  flags.send_timeout = absl::GetFlag(FLAGS_send_timeout);
  flags.preconnect = absl::GetFlag(FLAGS_preconnect);
  flags.timer_spin = absl::GetFlag(FLAGS_timer_spin);
  flags.max_response_bytes = absl::GetFlag(FLAGS_max_response_bytes);
  flags.failure_threshold = absl::GetFlag(FLAGS_failure_threshold);
  flags.cooldown = absl::GetFlag(FLAGS_cooldown);
  flags.drain_timeout = absl::GetFlag(FLAGS_drain_timeout);
  flags.backend_http2 = absl::GetFlag(FLAGS_backend_http2);
  flags.coalesce = absl::GetFlag(FLAGS_coalesce);
  flags.ca_file = absl::GetFlag(FLAGS_ca_file);
  flags.log_format = absl::GetFlag(FLAGS_log_format);
  flags.listen_front = absl::GetFlag(FLAGS_listen_front);
  flags.unix_socket_mode = absl::GetFlag(FLAGS_unix_socket_mode);
  flags.cpus = absl::GetFlag(FLAGS_cpus);
  flags.sched_policy = absl::GetFlag(FLAGS_sched_policy);
  flags.http_listen = absl::GetFlag(FLAGS_http_listen);
  flags.http_max_connections = absl::GetFlag(FLAGS_http_max_connections);
  flags.read_listen = absl::GetFlag(FLAGS_read_listen);
  flags.http_header_timeout = absl::GetFlag(FLAGS_http_header_timeout);

  RawHealth& health = flags.health;
  health.ejection_failure_rate = absl::GetFlag(FLAGS_ejection_failure_rate);
  health.ejection_min_requests = absl::GetFlag(FLAGS_ejection_min_requests);
  health.ejection_window = absl::GetFlag(FLAGS_ejection_window);
  health.max_ejection_time = absl::GetFlag(FLAGS_max_ejection_time);
  health.probe_successes = absl::GetFlag(FLAGS_probe_successes);
  health.ramp_up = absl::GetFlag(FLAGS_ramp_up);
  health.max_ejected_share = absl::GetFlag(FLAGS_max_ejected_share);
  health.give_up_factor = absl::GetFlag(FLAGS_give_up_factor);
  health.give_up_min = absl::GetFlag(FLAGS_give_up_min);
  health.give_up_max = absl::GetFlag(FLAGS_give_up_max);
  health.probe_path = absl::GetFlag(FLAGS_probe_path);
  health.probe_method = absl::GetFlag(FLAGS_probe_method);
  return flags;
}

}  // namespace tailgate::server
