// JsonFields: typed, range-checked reads of one JSON object for configuration
// parsers, with messages a person can act on ("optimizer.learning_rate must be a
// number in (0, 1], got \"fast\""). Every problem is collected, not just the first,
// so one INVALID_ARGUMENT lists every bad field. Absent keys leave the caller's
// default in place; Finish() reports keys that no getter asked for (a typo such as
// "learning_rat" must not silently fall back to a default). Pure: no I/O, no
// exceptions (nlohmann's typed getters are only called after a type check), so a
// fuzz target can drive the parsers built on it.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"

namespace flashtick {

// Deepest nesting of arrays/objects a configuration may have. Real configs nest 3
// levels; the limit keeps every recursive walk of a parsed value (dump, compare,
// copy) far from the stack's end.
inline constexpr int kMaxJsonDepth = 32;

// INVALID_ARGUMENT when `text` nests arrays/objects deeper than max_depth (brackets
// inside strings do not count). Call before json::parse on untrusted text.
absl::Status CheckJsonNesting(std::string_view text, int max_depth = kMaxJsonDepth);

// Collected problems of one parse; shared by the readers of nested objects.
class JsonErrors {
 public:
  void Add(std::string message);
  bool empty() const { return messages_.empty(); }
  // INVALID_ARGUMENT "<what>: <problem 1>; <problem 2>; ..." or OK.
  absl::Status ToStatus(const std::string& what) const;

 private:
  std::vector<std::string> messages_;
};

class JsonFields {
 public:
  // `path` names the object in messages ("" for the top level). `object` must
  // outlive the reader. A non-object value is reported once and reads nothing.
  JsonFields(const nlohmann::json& object, std::string path, JsonErrors* errors);

  bool Has(const char* key) const;
  // Integers in [lo, hi]. A float with an integral value (4.0) is accepted.
  void Int(const char* key, int64_t lo, int64_t hi, int64_t* out);
  void Int(const char* key, int lo, int hi, int* out);
  void Uint(const char* key, uint64_t* out);
  // Finite numbers in [lo, hi]; `lo_open` makes the lower bound exclusive.
  void Double(const char* key, double lo, double hi, double* out, bool lo_open = false);
  void Bool(const char* key, bool* out);
  // A string of at most max_len characters; when `allowed` is non-empty it must be
  // one of them (the message lists them).
  void String(const char* key, std::string* out, const std::vector<std::string>& allowed = {},
              size_t max_len = 4096);
  // Non-empty lists (min_size..max_size elements).
  void IntList(const char* key, int64_t lo, int64_t hi, size_t min_size, size_t max_size,
               std::vector<int64_t>* out);
  void UintList(const char* key, size_t min_size, size_t max_size, std::vector<uint64_t>* out);
  // Finite numbers in (lo, hi] each.
  void PositiveList(const char* key, double hi, size_t min_size, size_t max_size,
                    std::vector<double>* out);
  void StringList(const char* key, size_t min_size, size_t max_size,
                  std::vector<std::string>* out);
  // A nested object: a reader for it (reading nothing when absent or not an
  // object; the latter is reported).
  JsonFields Object(const char* key);

  // Reports every key that was not read. Call once, after the getters.
  void Finish();

  // "path.key" for messages.
  std::string Name(const char* key) const;
  void Error(const char* key, const std::string& problem);

 private:
  const nlohmann::json* Get(const char* key);
  // A bad value for a message: scalars as JSON (long strings by their length),
  // arrays and objects by their type and size, never dumped.
  static std::string Show(const nlohmann::json& value);

  const nlohmann::json* object_;
  std::string path_;
  JsonErrors* errors_;
  std::set<std::string> read_;
};

}  // namespace flashtick
