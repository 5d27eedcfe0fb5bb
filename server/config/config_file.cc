#include "server/config/config_file.h"

#include <string>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/flags/reflection.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"
#include "hedge/hygiene/replica_url.h"
#include "tailgate/v1/config.pb.h"

namespace tailgate::server {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::TextFormat;

// The file's global settings: each is the field named like its flag.
// Text (addresses, durations) ...
constexpr std::pair<const char*, std::string RawFlags::*> kTextGlobals[] = {
    {"listen", &RawFlags::listen},
    {"admin", &RawFlags::admin},
    {"metrics_listen", &RawFlags::metrics_listen},
    {"http_listen", &RawFlags::http_listen},
    {"read_listen", &RawFlags::read_listen},
    {"listen_front", &RawFlags::listen_front},
    {"unix_socket_mode", &RawFlags::unix_socket_mode},
    {"timeout", &RawFlags::timeout},
    {"send_timeout", &RawFlags::send_timeout},
    {"drain_timeout", &RawFlags::drain_timeout},
};
// ... and numbers, taken as the file typed them.
constexpr std::pair<const char*, RawValue RawFlags::*> kNumberGlobals[] = {
    {"max_requests", &RawFlags::max_requests},
    {"max_attempts", &RawFlags::max_attempts},
    {"max_response_bytes", &RawFlags::max_response_bytes},
    {"max_buffered_bytes", &RawFlags::max_buffered_bytes},
    {"max_streams_per_connection", &RawFlags::max_streams_per_connection},
    {"max_grpc_memory_bytes", &RawFlags::max_grpc_memory_bytes},
    {"max_connections", &RawFlags::max_connections},
    {"max_batch_reads", &RawFlags::max_batch_reads},
    {"tenant_share", &RawFlags::tenant_share},
};

// Keeps the parser's first error as "PATH:LINE:COLUMN: message".
class FirstError : public google::protobuf::io::ErrorCollector {
 public:
  explicit FirstError(absl::string_view path) : path_(path) {}

  void AddError(int line, int column, const std::string& message) override {
    if (!first_.empty()) return;
    first_ = absl::StrCat(path_, ":", line + 1, ":", column + 1, ": ", message);
  }

  const std::string& first() const { return first_; }

 private:
  const std::string path_;
  std::string first_;
};

// Where the parser saw fields, as "PATH:LINE:COLUMN".
class Places {
 public:
  Places(absl::string_view path, const TextFormat::ParseInfoTree& tree)
      : path_(path), tree_(tree) {}

  // Field `name` of `message` in `tree` (the file's root by default),
  // entry `index` of a repeated field (-1 for a singular one).
  std::string Of(const google::protobuf::Descriptor& message,
                 absl::string_view name, int index = -1,
                 const TextFormat::ParseInfoTree* tree = nullptr) const {
    const FieldDescriptor* field = message.FindFieldByName(std::string(name));
    if (tree == nullptr) tree = &tree_;
    const TextFormat::ParseLocation at = tree->GetLocation(field, index);
    if (at.line < 0) return path_;
    return absl::StrCat(path_, ":", at.line + 1, ":", at.column + 1);
  }

  const std::string& path() const { return path_; }

 private:
  const std::string path_;
  const TextFormat::ParseInfoTree& tree_;
};

absl::Status ErrorAt(absl::string_view place, absl::string_view field,
                     absl::string_view problem) {
  return absl::InvalidArgumentError(
      absl::StrCat(place, ": ", field, ": ", problem));
}

// Upstream names become metric labels and the `upstreams.NAME.` of error
// messages: no dots, nothing to escape.
bool ValidName(absl::string_view name) {
  for (char c : name) {
    if (!absl::ascii_isalnum(c) && c != '_' && c != '-') return false;
  }
  return true;
}

RawValue Number(double value) { return RawValue::Number(value); }
RawValue Integer(int64_t value) { return RawValue::Integer(value); }

// The replica-health fields the file sets (health_settings.h), through
// `set` (which records where); numbers as the file typed them.
template <typename Set>
void AddHealth(const v1::UpstreamConfig& file, const Set& set, RawHealth& raw) {
  if (file.has_ejection_failure_rate()) {
    set("ejection_failure_rate", Number(file.ejection_failure_rate()),
        raw.ejection_failure_rate);
  }
  if (file.has_ejection_min_requests()) {
    set("ejection_min_requests", Integer(file.ejection_min_requests()),
        raw.ejection_min_requests);
  }
  if (!file.ejection_window().empty()) {
    set("ejection_window", file.ejection_window(), raw.ejection_window);
  }
  if (!file.max_ejection_time().empty()) {
    set("max_ejection_time", file.max_ejection_time(), raw.max_ejection_time);
  }
  if (file.has_probe_successes()) {
    set("probe_successes", Integer(file.probe_successes()),
        raw.probe_successes);
  }
  if (!file.ramp_up().empty()) set("ramp_up", file.ramp_up(), raw.ramp_up);
  if (file.has_max_ejected_share()) {
    set("max_ejected_share", Number(file.max_ejected_share()),
        raw.max_ejected_share);
  }
  if (file.has_give_up_factor()) {
    set("give_up_factor", Number(file.give_up_factor()), raw.give_up_factor);
  }
  if (!file.give_up_min().empty()) {
    set("give_up_min", file.give_up_min(), raw.give_up_min);
  }
  if (!file.give_up_max().empty()) {
    set("give_up_max", file.give_up_max(), raw.give_up_max);
  }
  if (file.has_probe_path()) {
    raw.probe_path.emplace();
    set("probe_path", file.probe_path(), *raw.probe_path);
  }
  if (!file.probe_method().empty()) {
    set("probe_method", file.probe_method(), raw.probe_method);
  }
}

absl::Status AddUpstream(const v1::UpstreamConfig& file, int index,
                         const Places& places,
                         const TextFormat::ParseInfoTree& root,
                         const OnCommandLine& on_command_line,
                         RawFlags& flags) {
  const google::protobuf::Descriptor& root_type =
      *v1::SidecarConfig::descriptor();
  const google::protobuf::Descriptor& type = *v1::UpstreamConfig::descriptor();
  const TextFormat::ParseInfoTree* tree =
      root.GetTreeForNested(root_type.FindFieldByName("upstreams"), index);
  const std::string block = places.Of(root_type, "upstreams", index);
  const auto at = [&](absl::string_view field, int i = -1) {
    return places.Of(type, field, i, tree);
  };
  const std::string prefix =
      file.name().empty() ? "" : absl::StrCat("upstreams.", file.name(), ".");

  if (!ValidName(file.name())) {
    return ErrorAt(at("name"), "name",
                   absl::StrCat("want letters, digits, _ and -, got \"",
                                absl::CHexEscape(file.name()), "\""));
  }
  for (const RawUpstream& other : flags.upstreams) {
    if (other.name == file.name()) {
      return ErrorAt(file.name().empty() ? block : at("name"), "upstreams",
                     absl::StrCat("duplicate name \"", file.name(), "\""));
    }
  }
  if (!file.name().empty()) {
    flags.file_locations[absl::StrCat("upstreams.", file.name())] = block;
  }

  RawUpstream raw;
  raw.name = file.name();
  const bool replaced = file.name().empty() && on_command_line("backends");
  if (file.replicas().empty() && !replaced) {
    return ErrorAt(block, absl::StrCat(prefix, "replicas"),
                   "no replica configured");
  }
  for (int i = 0; i < file.replicas_size(); ++i) {
    const std::string& url = file.replicas(i);
    absl::Status s = url.find(',') == std::string::npos
                         ? hygiene::ParseReplicaUrl(url).status()
                         : absl::InvalidArgumentError(
                               "one URL per replicas entry, got a comma");
    if (!s.ok()) {
      return ErrorAt(at("replicas", i), absl::StrCat(prefix, "replicas"),
                     s.message());
    }
  }
  raw.replicas = absl::StrJoin(file.replicas(), ",");
  if (!replaced && !file.replicas().empty()) {
    flags.file_locations[absl::StrCat(prefix, "replicas")] = at("replicas", 0);
  }

  // Each field the file sets, as text, and where.
  const auto set = [&](absl::string_view field, auto value, auto& to) {
    to = std::move(value);
    flags.file_locations[absl::StrCat(prefix, field)] = at(field);
  };
  if (!file.hedge_delay().empty()) {
    set("hedge_delay", file.hedge_delay(), raw.hedge_delay);
  }
  if (!file.hedge_delay_min().empty()) {
    set("hedge_delay_min", file.hedge_delay_min(), raw.hedge_delay_min);
  }
  if (!file.hedge_delay_max().empty()) {
    set("hedge_delay_max", file.hedge_delay_max(), raw.hedge_delay_max);
  }
  if (file.has_hedge_fraction()) {
    set("hedge_fraction", Number(file.hedge_fraction()), raw.hedge_fraction);
  }
  if (file.has_hedge_burst()) {
    set("hedge_burst", Number(file.hedge_burst()), raw.hedge_burst);
  }
  if (file.has_retry_fraction()) {
    set("retry_fraction", Number(file.retry_fraction()), raw.retry_fraction);
  }
  if (file.has_retry_per_second()) {
    set("retry_per_second", Number(file.retry_per_second()),
        raw.retry_per_second);
  }
  if (!file.retry_window().empty()) {
    set("retry_window", file.retry_window(), raw.retry_window);
  }
  if (file.has_tenant_share()) {
    set("tenant_share", Number(file.tenant_share()), raw.tenant_share);
  }
  if (file.has_failure_threshold()) {
    set("failure_threshold", Integer(file.failure_threshold()),
        raw.failure_threshold);
  }
  if (!file.cooldown().empty()) {
    set("cooldown", file.cooldown(), raw.cooldown);
  }
  AddHealth(file, set, raw.health);
  if (file.has_preconnect()) {
    set("preconnect", Integer(file.preconnect()), raw.preconnect);
  }
  if (file.has_http2()) {
    raw.http2 = file.http2();
    flags.file_locations[absl::StrCat(prefix, "http_version")] = at("http2");
  }
  if (file.has_coalesce()) {
    raw.coalesce = file.coalesce();
    flags.file_locations[absl::StrCat(prefix, "coalesce")] = at("coalesce");
  }
  if (!file.ca_file().empty()) set("ca_file", file.ca_file(), raw.ca_file);
  // The default set's limits are the global ones: its fields would share
  // their names (and their places in errors) with the file's globals.
  if (file.name().empty()) {
    for (const char* limit :
         {"timeout", "max_response_bytes", "max_requests"}) {
      const FieldDescriptor* field = type.FindFieldByName(limit);
      if (file.GetReflection()->HasField(file, field)) {
        return ErrorAt(at(limit), limit,
                       "the default set's limits are the global ones: set "
                       "it at the top level of the file");
      }
    }
  }
  if (!file.timeout().empty()) set("timeout", file.timeout(), raw.timeout);
  if (file.has_max_response_bytes()) {
    set("max_response_bytes", Integer(file.max_response_bytes()),
        raw.max_response_bytes);
  }
  if (file.has_max_requests()) {
    set("max_requests", Integer(file.max_requests()), raw.max_requests);
  }
  raw.resolve = file.resolve();
  if (!file.refresh_interval().empty()) {
    set("refresh_interval", file.refresh_interval(), raw.refresh_interval);
  }
  flags.upstreams.push_back(std::move(raw));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<RawFlags> ApplyConfigText(absl::string_view path,
                                         absl::string_view text, RawFlags flags,
                                         const OnCommandLine& on_command_line) {
  FirstError errors(path);
  TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  TextFormat::ParseInfoTree tree;
  parser.WriteLocationsTo(&tree);
  v1::SidecarConfig file;
  if (!parser.ParseFromString(std::string(text), &file)) {
    return absl::InvalidArgumentError(errors.first().empty()
                                          ? absl::StrCat(path, ": cannot parse")
                                          : errors.first());
  }
  const Places places(path, tree);
  const google::protobuf::Reflection& reflection = *file.GetReflection();
  const google::protobuf::Descriptor& type = *file.GetDescriptor();
  // A global the command line gives keeps the command line's value.
  const auto from_file = [&](const char* name) -> const FieldDescriptor* {
    const FieldDescriptor* field = type.FindFieldByName(name);
    if (!reflection.HasField(file, field) || on_command_line(name)) {
      return nullptr;
    }
    flags.file_locations[name] = places.Of(type, name);
    return field;
  };
  for (const auto& [name, member] : kTextGlobals) {
    if (const FieldDescriptor* field = from_file(name)) {
      flags.*member = reflection.GetString(file, field);
    }
  }
  for (const auto& [name, member] : kNumberGlobals) {
    if (const FieldDescriptor* field = from_file(name)) {
      flags.*member = field->cpp_type() == FieldDescriptor::CPPTYPE_DOUBLE
                          ? RawValue::Number(reflection.GetDouble(file, field))
                          : RawValue::Integer(reflection.GetInt64(file, field));
    }
  }
  for (int i = 0; i < file.upstreams_size(); ++i) {
    if (absl::Status s = AddUpstream(file.upstreams(i), i, places, tree,
                                     on_command_line, flags);
        !s.ok()) {
      return s;
    }
  }
  return flags;
}

OnCommandLine FlagsNamedIn(int argc, char** argv) {
  absl::flat_hash_set<std::string> named;
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (arg == "--") break;  // the rest are not flags
    if (!absl::ConsumePrefix(&arg, "-")) continue;
    absl::ConsumePrefix(&arg, "-");
    const absl::string_view name = arg.substr(0, arg.find('='));
    // --noNAME sets the boolean NAME.
    if (absl::FindCommandLineFlag(name) == nullptr &&
        absl::StartsWith(name, "no")) {
      named.insert(std::string(name.substr(2)));
    } else {
      named.insert(std::string(name));
    }
  }
  return [named = std::move(named)](absl::string_view name) {
    return named.contains(name);
  };
}

}  // namespace tailgate::server
