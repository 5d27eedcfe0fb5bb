// JsonObject: one flat-or-nested JSON object with keys in insertion order,
// for the experiment's stdout, where every line is one object.
//
// Example:
//   JsonObject line;
//   line.AddString("mode", "hedged").AddInt("requests", 2000);
//   line.AddMillis("p99_ms", absl::Microseconds(9040));
//   puts(line.ToString().c_str());
//   // {"mode":"hedged","requests":2000,"p99_ms":9.040}
//
// Numbers that JSON cannot carry (NaN, infinities) are written as null.
// Keys are not checked for duplicates: each call appends one member.
//
// Thread safety: none; a JsonObject belongs to one thread at a time.

#ifndef TAILGATE_EXPERIMENT_REPORT_JSON_LINE_H_
#define TAILGATE_EXPERIMENT_REPORT_JSON_LINE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace tailgate::experiment {

class JsonObject {
 public:
  JsonObject& AddString(absl::string_view key, absl::string_view value);
  JsonObject& AddInt(absl::string_view key, int64_t value);
  JsonObject& AddUint(absl::string_view key, uint64_t value);
  JsonObject& AddBool(absl::string_view key, bool value);
  JsonObject& AddNull(absl::string_view key);
  // Fixed-point with `decimals` digits after the point.
  JsonObject& AddDouble(absl::string_view key, double value, int decimals);
  // Milliseconds with microsecond resolution (3 decimals).
  JsonObject& AddMillis(absl::string_view key, absl::Duration value);
  JsonObject& AddObject(absl::string_view key, const JsonObject& value);
  // An array of integers: [1,2,3].
  JsonObject& AddIntList(absl::string_view key,
                         const std::vector<int64_t>& values);
  // An array of fixed-point numbers, `decimals` digits after the point
  // (null for NaN and infinities).
  JsonObject& AddDoubleList(absl::string_view key,
                            const std::vector<double>& values, int decimals);
  // An array of objects: [{...},{...}].
  JsonObject& AddObjectList(absl::string_view key,
                            const std::vector<JsonObject>& values);

  // The object, no whitespace, no trailing newline.
  std::string ToString() const { return "{" + members_ + "}"; }

 private:
  void AddKey(absl::string_view key);

  std::string members_;  // "k":v,"k":v
};

// `value` as a JSON string literal, quotes included.
std::string JsonQuote(absl::string_view value);

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_REPORT_JSON_LINE_H_
