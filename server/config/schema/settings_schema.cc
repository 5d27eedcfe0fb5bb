#include "server/config/schema/settings_schema.h"

#include <cstdlib>
#include <limits>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "tailgate/v1/command_line.pb.h"
#include "tailgate/v1/config.pb.h"

namespace tailgate::server {
namespace {

using google::protobuf::Descriptor;

struct Schema {
  std::vector<SettingDecl> all;
  absl::flat_hash_map<std::string, size_t> by_flag;
};

void Add(const Descriptor& message, absl::string_view file_prefix,
         Schema& schema) {
  for (int i = 0; i < message.field_count(); ++i) {
    const google::protobuf::FieldDescriptor* field = message.field(i);
    if (!field->options().HasExtension(v1::setting)) continue;
    SettingDecl decl;
    decl.field = field;
    decl.setting = &field->options().GetExtension(v1::setting);
    if (decl.setting->scope() != v1::SETTING_SCOPE_COMMAND_LINE) {
      decl.file_field = absl::StrCat(file_prefix, field->name());
    }
    if (!decl.setting->flag().empty()) {
      schema.by_flag.emplace(decl.setting->flag(), schema.all.size());
    }
    schema.all.push_back(std::move(decl));
  }
}

const Schema& TheSchema() {
  static const Schema* const schema = [] {
    auto* built = new Schema;
    Add(*v1::CommandLine::descriptor(), "", *built);
    Add(*v1::SidecarConfig::descriptor(), "", *built);
    Add(*v1::UpstreamConfig::descriptor(), "upstreams.", *built);
    return built;
  }();
  return *schema;
}

const v1::Setting& Declared(absl::string_view flag) {
  const SettingDecl* decl = SettingOfFlag(flag);
  if (decl == nullptr) abort();  // a flag defined without a declaration
  return *decl->setting;
}

}  // namespace

const std::vector<SettingDecl>& Settings() { return TheSchema().all; }

const SettingDecl* SettingOfFlag(absl::string_view flag) {
  const Schema& schema = TheSchema();
  auto it = schema.by_flag.find(flag);
  return it == schema.by_flag.end() ? nullptr : &schema.all[it->second];
}

std::string SettingDefault(absl::string_view flag) {
  return Declared(flag).default_value();
}

std::string SettingHelp(absl::string_view flag) {
  const v1::Setting& setting = Declared(flag);
  std::string help = setting.help();
  if (!setting.range().empty()) {
    absl::StrAppend(&help, " Range: ", setting.range(), ".");
  }
  if (setting.allowed_size() > 0) {
    absl::StrAppend(&help, " One of: ", absl::StrJoin(setting.allowed(), ", "),
                    ".");
  }
  if (setting.default_value().empty() && !setting.unset_means().empty()) {
    absl::StrAppend(&help, " Unset: ", setting.unset_means(), ".");
  }
  return absl::StrReplaceAll(help, {{"`", ""}});
}

SettingBounds BoundsOf(absl::string_view flag) {
  const v1::Setting& setting = Declared(flag);
  return {
      setting.has_min() ? setting.min() : std::numeric_limits<int64_t>::min(),
      setting.has_max() ? setting.max() : std::numeric_limits<int64_t>::max()};
}

bool Allows(absl::string_view flag, absl::string_view value) {
  const v1::Setting& setting = Declared(flag);
  if (setting.allowed_size() == 0) return true;
  for (const std::string& allowed : setting.allowed()) {
    if (allowed == value) return true;
  }
  return false;
}

std::string AllowedText(absl::string_view flag) {
  const auto& allowed = Declared(flag).allowed();
  if (allowed.empty()) return "";
  if (allowed.size() == 1) return allowed[0];
  std::vector<std::string> head(allowed.begin(), allowed.end() - 1);
  return absl::StrCat(absl::StrJoin(head, ", "), " or ",
                      allowed[allowed.size() - 1]);
}

std::vector<std::string> NeedsRestartFields() {
  std::vector<std::string> fields;
  for (const SettingDecl& decl : Settings()) {
    if (decl.field->containing_type() == v1::SidecarConfig::descriptor() &&
        !decl.setting->reloadable()) {
      fields.push_back(decl.field->name());
    }
  }
  return fields;
}

}  // namespace tailgate::server
