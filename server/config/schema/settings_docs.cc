#include "server/config/schema/settings_docs.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "server/config/schema/settings_schema.h"

namespace tailgate::server {
namespace {

constexpr size_t kWidth = 78;

// Where the setting is in the config file, for people.
std::string FileField(const SettingDecl& decl) {
  return decl.file_field.empty() ? "" : decl.file_field;
}

std::string ReloadText(const SettingDecl& decl) {
  if (decl.file_field.empty()) return "restart";
  return decl.setting->reloadable() ? "applies" : "restart";
}

// `text` wrapped at kWidth, each line indented by `indent`.
std::string Wrap(absl::string_view text, absl::string_view indent) {
  std::string out;
  std::string line;
  for (absl::string_view word : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    if (!line.empty() &&
        indent.size() + line.size() + 1 + word.size() > kWidth) {
      absl::StrAppend(&out, indent, line, "\n");
      line.clear();
    }
    absl::StrAppend(&line, line.empty() ? "" : " ", word);
  }
  if (!line.empty()) absl::StrAppend(&out, indent, line, "\n");
  return out;
}

std::string Cell(absl::string_view text) {
  return absl::StrReplaceAll(text, {{"|", "\\|"}, {"\n", " "}});
}

}  // namespace

std::string HelpText(absl::string_view usage) {
  std::string out = absl::StrCat(usage, "\n\n");
  absl::StrAppend(
      &out, Wrap("Flags, as declared in proto/tailgate/v1/config.proto and "
                 "command_line.proto (\"file\": the field of the --config "
                 "file; \"reload\": whether a reload of the file applies "
                 "a change):",
                 ""));
  for (const SettingDecl& decl : Settings()) {
    const std::string& flag = decl.setting->flag();
    if (flag.empty()) continue;
    std::vector<std::string> facts;
    const std::string& value = decl.setting->default_value();
    facts.push_back(value.empty() ? "default: unset"
                                  : absl::StrCat("default: \"", value, "\""));
    if (!decl.file_field.empty()) {
      facts.push_back(absl::StrCat("file: ", FileField(decl)));
    }
    facts.push_back(absl::StrCat("reload: ", ReloadText(decl)));
    absl::StrAppend(&out, "\n  --", flag, " (", absl::StrJoin(facts, "; "),
                    ")\n", Wrap(SettingHelp(flag), "      "));
  }
  return out;
}

std::string FlagTable() {
  std::string out =
      "| flag | default | config file | on reload | meaning |\n"
      "|---|---|---|---|---|\n";
  for (const SettingDecl& decl : Settings()) {
    const v1::Setting& setting = *decl.setting;
    if (setting.flag().empty()) continue;
    std::string meaning = setting.help();
    if (!setting.range().empty()) {
      absl::StrAppend(&meaning, " Range: ", setting.range(), ".");
    }
    if (setting.allowed_size() > 0) {
      std::vector<std::string> quoted;
      for (const std::string& allowed : setting.allowed()) {
        quoted.push_back(absl::StrCat("`", allowed, "`"));
      }
      absl::StrAppend(&meaning, " One of ", absl::StrJoin(quoted, ", "), ".");
    }
    const std::string default_text =
        setting.default_value().empty()
            ? setting.unset_means()
            : absl::StrCat("`", setting.default_value(), "`");
    const std::string file =
        decl.file_field.empty() ? "—" : absl::StrCat("`", decl.file_field, "`");
    absl::StrAppend(&out, "| `--", setting.flag(), "` | ", Cell(default_text),
                    " | ", file, " | ", ReloadText(decl), " | ", Cell(meaning),
                    " |\n");
  }
  return out;
}

}  // namespace tailgate::server
