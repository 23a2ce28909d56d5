// ConfigFields: range and choice checks of one message of the sweep configuration
// (proto/flashtick/v1/sweep_config.proto) as it is read into the engine's typed
// SweepConfig, with messages a person can act on ("optimizer.learning_rate must be a
// number in (0, 10], got 0"). Protobuf's JSON mapping has already checked the types
// and the field names; these checks are what the schema cannot say. Every problem is
// collected, not just the first, so one INVALID_ARGUMENT lists every bad field.
// An absent optional field (has = false) or an empty list leaves the caller's
// default in place.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"

namespace flashtick {

// Collected problems of one read; shared by the readers of nested messages.
class ConfigErrors {
 public:
  void Add(std::string message);
  bool empty() const { return messages_.empty(); }
  // INVALID_ARGUMENT "<what>: <problem 1>; <problem 2>; ..." or OK.
  absl::Status ToStatus(const std::string& what) const;

 private:
  std::vector<std::string> messages_;
};

class ConfigFields {
 public:
  // `path` names the message in problems ("" for the top level).
  ConfigFields(std::string path, ConfigErrors* errors);
  ConfigFields Nested(const char* key) const { return ConfigFields(Name(key), errors_); }

  void Int(const char* key, bool has, int64_t value, int64_t lo, int64_t hi, int64_t* out);
  void Int(const char* key, bool has, int64_t value, int64_t lo, int64_t hi, int* out);
  void Uint(const char* key, bool has, uint64_t value, uint64_t* out);
  // Finite numbers in [lo, hi]; `lo_open` makes the lower bound exclusive.
  void Double(const char* key, bool has, double value, double lo, double hi, double* out,
              bool lo_open = false);
  void Bool(const char* key, bool has, bool value, bool* out);
  // At most max_len characters; when `allowed` is non-empty, one of them.
  void String(const char* key, bool has, const std::string& value, std::string* out,
              const std::vector<std::string>& allowed = {}, size_t max_len = 4096);
  // Lists of at most max_size elements, each in [lo, hi] (numbers: (0, hi]).
  void IntList(const char* key, absl::Span<const int32_t> values, int64_t lo, int64_t hi,
               size_t max_size, std::vector<int64_t>* out);
  void UintList(const char* key, absl::Span<const uint32_t> values, size_t max_size,
                std::vector<uint64_t>* out);
  void PositiveList(const char* key, absl::Span<const double> values, double hi,
                    size_t max_size, std::vector<double>* out);
  // Non-empty strings of at most 4,096 characters each.
  void StringList(const char* key, const std::vector<std::string>& values, size_t max_size,
                  std::vector<std::string>* out);

  // "path.key" for messages.
  std::string Name(const char* key) const;
  void Error(const char* key, const std::string& problem);

 private:
  // True when a list of `size` elements is to be read: not empty (empty keeps the
  // default) and at most max_size (else a problem is added).
  bool ListSize(const char* key, size_t size, size_t max_size, const char* noun);

  std::string path_;
  ConfigErrors* errors_;
};

}  // namespace flashtick
