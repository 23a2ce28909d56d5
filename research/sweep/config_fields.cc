// ConfigFields (see config_fields.h).
#include "research/sweep/config_fields.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace flashtick {
namespace {

constexpr size_t kMaxShown = 60;     // characters of a bad string echoed back
constexpr size_t kMaxMessages = 25;  // problems listed in one status

std::string Show(const std::string& s) {
  if (s.size() > kMaxShown) return absl::StrCat("a string of ", s.size(), " characters");
  return absl::StrCat("\"", s, "\"");
}

}  // namespace

void ConfigErrors::Add(std::string message) { messages_.push_back(std::move(message)); }

absl::Status ConfigErrors::ToStatus(const std::string& what) const {
  if (messages_.empty()) return absl::OkStatus();
  std::vector<std::string> shown(
      messages_.begin(), messages_.begin() + std::min(messages_.size(), kMaxMessages));
  std::string more;
  if (messages_.size() > kMaxMessages) {
    more = absl::StrCat("; and ", messages_.size() - kMaxMessages, " more");
  }
  return absl::InvalidArgumentError(absl::StrCat(what, ": ", absl::StrJoin(shown, "; "), more));
}

ConfigFields::ConfigFields(std::string path, ConfigErrors* errors)
    : path_(std::move(path)), errors_(errors) {}

std::string ConfigFields::Name(const char* key) const {
  return path_.empty() ? std::string(key) : absl::StrCat(path_, ".", key);
}

void ConfigFields::Error(const char* key, const std::string& problem) {
  // "[i] ..." names an element: "contexts[1] must be ...".
  const char* sep = !problem.empty() && problem[0] == '[' ? "" : " ";
  errors_->Add(absl::StrCat(Name(key), sep, problem));
}

void ConfigFields::Int(const char* key, bool has, int64_t value, int64_t lo, int64_t hi,
                       int64_t* out) {
  if (!has) return;
  if (value < lo || value > hi) {
    Error(key, absl::StrCat("must be an integer in [", lo, ", ", hi, "], got ", value));
    return;
  }
  *out = value;
}

void ConfigFields::Int(const char* key, bool has, int64_t value, int64_t lo, int64_t hi,
                       int* out) {
  int64_t x = *out;
  Int(key, has, value, lo, hi, &x);
  *out = static_cast<int>(x);
}

void ConfigFields::Uint(const char* /*key*/, bool has, uint64_t value, uint64_t* out) {
  if (has) *out = value;  // every value of the field's type is a seed
}

void ConfigFields::Double(const char* key, bool has, double value, double lo, double hi,
                          double* out, bool lo_open) {
  if (!has) return;
  if (!std::isfinite(value) || value < lo || (lo_open && value == lo) || value > hi) {
    Error(key, absl::StrCat("must be a number in ", lo_open ? "(" : "[", lo, ", ", hi, "], got ",
                            value));
    return;
  }
  // -0 is stored as 0: the JSON writer prints -0 as "-0", which protobuf reads back as
  // 0, so a config holding -0 would not write the same JSON twice.
  *out = value == 0 ? 0.0 : value;
}

void ConfigFields::Bool(const char* /*key*/, bool has, bool value, bool* out) {
  if (has) *out = value;
}

void ConfigFields::String(const char* key, bool has, const std::string& value, std::string* out,
                          const std::vector<std::string>& allowed, size_t max_len) {
  if (!has) return;
  if (value.size() > max_len) {
    Error(key, absl::StrCat("is ", value.size(), " characters long; at most ", max_len));
    return;
  }
  if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), value) == allowed.end()) {
    Error(key, absl::StrCat("must be one of ", absl::StrJoin(allowed, ", "), "; got ",
                            Show(value)));
    return;
  }
  *out = value;
}

bool ConfigFields::ListSize(const char* key, size_t size, size_t max_size, const char* noun) {
  if (size == 0) return false;  // the default stays
  if (size > max_size) {
    Error(key, absl::StrCat("must be a list of 1 to ", max_size, " ", noun, ", got ", size));
    return false;
  }
  return true;
}

void ConfigFields::IntList(const char* key, absl::Span<const int32_t> values, int64_t lo,
                           int64_t hi, size_t max_size, std::vector<int64_t>* out) {
  if (!ListSize(key, values.size(), max_size, "integers")) return;
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] < lo || values[i] > hi) {
      Error(key, absl::StrCat("[", i, "] must be an integer in [", lo, ", ", hi, "], got ",
                              values[i]));
      return;
    }
  }
  out->assign(values.begin(), values.end());
}

void ConfigFields::UintList(const char* key, absl::Span<const uint32_t> values, size_t max_size,
                            std::vector<uint64_t>* out) {
  if (!ListSize(key, values.size(), max_size, "non-negative integers")) return;
  out->assign(values.begin(), values.end());
}

void ConfigFields::PositiveList(const char* key, absl::Span<const double> values, double hi,
                                size_t max_size, std::vector<double>* out) {
  if (!ListSize(key, values.size(), max_size, "numbers")) return;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i]) || !(values[i] > 0) || values[i] > hi) {
      Error(key, absl::StrCat("[", i, "] must be a number in (0, ", hi, "], got ", values[i]));
      return;
    }
  }
  out->assign(values.begin(), values.end());
}

void ConfigFields::StringList(const char* key, const std::vector<std::string>& values,
                              size_t max_size, std::vector<std::string>* out) {
  if (!ListSize(key, values.size(), max_size, "strings")) return;
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i].empty() || values[i].size() > 4096) {
      Error(key, absl::StrCat("[", i, "] must be a non-empty string of at most 4096 "
                              "characters, got ", Show(values[i])));
      return;
    }
  }
  *out = values;
}

}  // namespace flashtick
