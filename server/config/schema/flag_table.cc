// Prints the flag table of docs/CONFIGURATION.md, generated from the
// settings schema: `bazel run //server/config:flag_table`. Paste it
// between the document's flag-table markers.

#include <stdio.h>

#include <string>

#include "server/config/schema/settings_docs.h"

int main() {
  const std::string table = tailgate::server::FlagTable();
  fwrite(table.data(), 1, table.size(), stdout);
  return 0;
}
