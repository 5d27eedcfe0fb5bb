#include "experiment/report/json_line.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace tailgate::experiment {

std::string JsonQuote(absl::string_view value) {
  std::string out = "\"";
  for (const char c : value) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          absl::StrAppendFormat(&out, "\\u%04x", static_cast<unsigned>(c));
        } else {
          out.push_back(c);
        }
    }
  }
  out.push_back('"');
  return out;
}

void JsonObject::AddKey(absl::string_view key) {
  if (!members_.empty()) members_.push_back(',');
  absl::StrAppend(&members_, JsonQuote(key), ":");
}

JsonObject& JsonObject::AddString(absl::string_view key,
                                  absl::string_view value) {
  AddKey(key);
  members_ += JsonQuote(value);
  return *this;
}

JsonObject& JsonObject::AddInt(absl::string_view key, int64_t value) {
  AddKey(key);
  absl::StrAppend(&members_, value);
  return *this;
}

JsonObject& JsonObject::AddUint(absl::string_view key, uint64_t value) {
  AddKey(key);
  absl::StrAppend(&members_, value);
  return *this;
}

JsonObject& JsonObject::AddBool(absl::string_view key, bool value) {
  AddKey(key);
  members_ += value ? "true" : "false";
  return *this;
}

JsonObject& JsonObject::AddNull(absl::string_view key) {
  AddKey(key);
  members_ += "null";
  return *this;
}

JsonObject& JsonObject::AddDouble(absl::string_view key, double value,
                                  int decimals) {
  if (!std::isfinite(value)) return AddNull(key);
  AddKey(key);
  absl::StrAppendFormat(&members_, "%.*f", decimals, value);
  return *this;
}

JsonObject& JsonObject::AddMillis(absl::string_view key, absl::Duration value) {
  return AddDouble(key, absl::ToDoubleMilliseconds(value), 3);
}

JsonObject& JsonObject::AddObject(absl::string_view key,
                                  const JsonObject& value) {
  AddKey(key);
  members_ += value.ToString();
  return *this;
}

JsonObject& JsonObject::AddIntList(absl::string_view key,
                                   const std::vector<int64_t>& values) {
  AddKey(key);
  absl::StrAppend(&members_, "[", absl::StrJoin(values, ","), "]");
  return *this;
}

JsonObject& JsonObject::AddDoubleList(absl::string_view key,
                                      const std::vector<double>& values,
                                      int decimals) {
  AddKey(key);
  members_ += "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) members_ += ",";
    if (std::isfinite(values[i])) {
      absl::StrAppendFormat(&members_, "%.*f", decimals, values[i]);
    } else {
      members_ += "null";
    }
  }
  members_ += "]";
  return *this;
}

JsonObject& JsonObject::AddObjectList(absl::string_view key,
                                      const std::vector<JsonObject>& values) {
  AddKey(key);
  members_ += "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) members_ += ",";
    members_ += values[i].ToString();
  }
  members_ += "]";
  return *this;
}

}  // namespace tailgate::experiment
