// Builders of prometheus-cpp metric families over engine snapshots, shared
// by the files that render /metrics (metrics.cc, health_metrics.cc).
// Private to the metrics library.
//
// Thread safety: pure functions.

#ifndef TAILGATE_SERVER_OBSERVABILITY_METRIC_BUILDERS_H_
#define TAILGATE_SERVER_OBSERVABILITY_METRIC_BUILDERS_H_

#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "hedge/latency_histogram.h"
#include "hedge/transport/engine_snapshot.h"
#include "prometheus/client_metric.h"
#include "prometheus/metric_family.h"
#include "prometheus/metric_type.h"

namespace tailgate::server::metrics_internal {

using Labels = std::vector<prometheus::ClientMetric::Label>;

inline prometheus::MetricFamily Family(const char* name, const char* help,
                                       prometheus::MetricType type) {
  prometheus::MetricFamily family;
  family.name = name;
  family.help = help;
  family.type = type;
  return family;
}

inline prometheus::ClientMetric Counter(double value, Labels labels = {}) {
  prometheus::ClientMetric metric;
  metric.label = std::move(labels);
  metric.counter.value = value;
  return metric;
}

inline prometheus::ClientMetric Gauge(double value, Labels labels = {}) {
  prometheus::ClientMetric metric;
  metric.label = std::move(labels);
  metric.gauge.value = value;
  return metric;
}

// HistogramSnapshot counts are per bucket; Prometheus buckets are
// cumulative and end with +Inf (which equals the sample count).
inline prometheus::ClientMetric Histogram(
    const hedge::HistogramSnapshot& snapshot, Labels labels = {}) {
  prometheus::ClientMetric metric;
  metric.label = std::move(labels);
  metric.histogram.sample_count = snapshot.count;
  metric.histogram.sample_sum = snapshot.sum_seconds;
  uint64_t cumulative = 0;
  for (size_t i = 0; i < snapshot.bounds_seconds.size(); ++i) {
    if (i < snapshot.counts.size()) cumulative += snapshot.counts[i];
    metric.histogram.bucket.push_back({cumulative, snapshot.bounds_seconds[i]});
  }
  metric.histogram.bucket.push_back(
      {snapshot.count, std::numeric_limits<double>::infinity()});
  return metric;
}

// Per-replica series: its set's name (the empty string for the default
// set), then its URL.
inline Labels Replica(const hedge::ReplicaSnapshot& replica) {
  return {{"upstream", replica.upstream}, {"replica", replica.url}};
}

// One family per metric name; `value` gives each upstream's sample.
template <typename Value>
prometheus::MetricFamily PerUpstream(const char* name, const char* help,
                                     prometheus::MetricType type,
                                     const hedge::EngineSnapshot& engine,
                                     Value value) {
  prometheus::MetricFamily family = Family(name, help, type);
  for (const hedge::UpstreamSnapshot& upstream : engine.upstreams) {
    prometheus::ClientMetric metric = value(upstream);
    metric.label = {{"upstream", upstream.name}};
    family.metric.push_back(std::move(metric));
  }
  return family;
}

// One family per metric name; `value` gives each tenant's sample. The
// tenants are bounded (hedge/tenants/tenant_table.h), and so are these labels.
template <typename Value>
prometheus::MetricFamily PerTenant(const char* name, const char* help,
                                   prometheus::MetricType type,
                                   const hedge::EngineSnapshot& engine,
                                   Value value) {
  prometheus::MetricFamily family = Family(name, help, type);
  for (const hedge::TenantSnapshot& tenant : engine.tenants) {
    prometheus::ClientMetric metric = value(tenant);
    metric.label = {{"tenant", tenant.name}};
    family.metric.push_back(std::move(metric));
  }
  return family;
}

// One family per metric name; `value` gives each replica's sample.
template <typename Value>
prometheus::MetricFamily PerReplica(const char* name, const char* help,
                                    prometheus::MetricType type,
                                    const hedge::EngineSnapshot& engine,
                                    Value value) {
  prometheus::MetricFamily family = Family(name, help, type);
  for (const hedge::ReplicaSnapshot& replica : engine.replicas) {
    family.metric.push_back(value(replica));
  }
  return family;
}

}  // namespace tailgate::server::metrics_internal

#endif  // TAILGATE_SERVER_OBSERVABILITY_METRIC_BUILDERS_H_
