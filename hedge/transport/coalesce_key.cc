#include "hedge/transport/coalesce_key.h"

#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace tailgate::hedge::transport {
namespace {

// "<size>:<bytes>": a field no other field's bytes can be mistaken for.
void AppendField(std::string& key, absl::string_view field) {
  absl::StrAppend(&key, field.size(), ":", field);
}

}  // namespace

std::string CoalesceKey(const EngineRead& read) {
  std::string key;
  key.reserve(read.target.size() + 32);
  key.push_back(read.head ? 'H' : 'G');
  key.push_back(read.hedge_disabled ? 'n' : 'y');
  if (read.hedge_delay.has_value()) {
    absl::StrAppend(&key, absl::ToInt64Nanoseconds(*read.hedge_delay));
  }
  key.push_back('|');
  AppendField(key, read.target);
  for (const hygiene::HttpHeader& header : read.headers) {
    AppendField(key, absl::AsciiStrToLower(header.name));
    AppendField(key, header.value);
  }
  return key;
}

}  // namespace tailgate::hedge::transport
