// Text generated from the settings schema (settings_schema.h): the
// sidecar's --help, and the flag table of docs/CONFIGURATION.md
// (`bazel run //server/config:flag_table`; flag_table_test fails when the
// document's table differs).
//
// Thread safety: pure functions.

#ifndef TAILGATE_SERVER_CONFIG_SCHEMA_SETTINGS_DOCS_H_
#define TAILGATE_SERVER_CONFIG_SCHEMA_SETTINGS_DOCS_H_

#include <string>

#include "absl/strings/string_view.h"

namespace tailgate::server {

// --help: `usage`, then every flag with its default, its config file
// field, whether a reload applies it, and its help, wrapped for a
// terminal.
std::string HelpText(absl::string_view usage);

// The Markdown table of every flag, one row each, in schema order; ends
// with a newline.
std::string FlagTable();

// The markers around the table in docs/CONFIGURATION.md.
inline constexpr char kFlagTableBegin[] = "<!-- flag-table:begin -->\n";
inline constexpr char kFlagTableEnd[] = "<!-- flag-table:end -->\n";

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_CONFIG_SCHEMA_SETTINGS_DOCS_H_
