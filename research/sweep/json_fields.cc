// JsonFields (see json_fields.h).
#include "research/sweep/json_fields.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace flashtick {
namespace {

constexpr size_t kMaxShown = 60;      // characters of a bad value echoed back
constexpr size_t kMaxMessages = 25;   // problems listed in one status

const nlohmann::json& EmptyObject() {
  static const nlohmann::json* empty = new nlohmann::json(nlohmann::json::object());
  return *empty;
}

// An integral value of a JSON number, if it has one.
bool AsInt(const nlohmann::json& v, int64_t* out) {
  if (v.is_number_integer()) {
    if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
      return false;
    }
    *out = v.get<int64_t>();
    return true;
  }
  if (v.is_number_float()) {
    const double d = v.get<double>();
    // 2^63 is not representable as int64; stay strictly inside.
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.2e18) {
      *out = static_cast<int64_t>(d);
      return true;
    }
  }
  return false;
}

}  // namespace

void JsonErrors::Add(std::string message) { messages_.push_back(std::move(message)); }

absl::Status JsonErrors::ToStatus(const std::string& what) const {
  if (messages_.empty()) return absl::OkStatus();
  std::vector<std::string> shown(
      messages_.begin(), messages_.begin() + std::min(messages_.size(), kMaxMessages));
  std::string more;
  if (messages_.size() > kMaxMessages) {
    more = absl::StrCat("; and ", messages_.size() - kMaxMessages, " more");
  }
  return absl::InvalidArgumentError(absl::StrCat(what, ": ", absl::StrJoin(shown, "; "), more));
}

JsonFields::JsonFields(const nlohmann::json& object, std::string path, JsonErrors* errors)
    : object_(&object), path_(std::move(path)), errors_(errors) {
  if (!object.is_object()) {
    errors_->Add(absl::StrCat(path_.empty() ? "the configuration" : path_,
                              " must be a JSON object, got ", Show(object)));
    object_ = &EmptyObject();
  }
}

std::string JsonFields::Name(const char* key) const {
  return path_.empty() ? std::string(key) : absl::StrCat(path_, ".", key);
}

void JsonFields::Error(const char* key, const std::string& problem) {
  // "[i] ..." names an element: "contexts[1] must be ...".
  const char* sep = !problem.empty() && problem[0] == '[' ? "" : " ";
  errors_->Add(absl::StrCat(Name(key), sep, problem));
}

std::string JsonFields::Show(const nlohmann::json& value) {
  // Containers are described, never dumped: dump() recurses once per level, so a
  // deeply nested value would overflow the stack before any truncation, and a large
  // one would be copied whole only to be cut. Scalars dump in constant depth.
  const auto count = [](size_t n, const char* noun) {
    return absl::StrCat(n, " ", noun, n == 1 ? "" : "s");
  };
  if (value.is_array()) return absl::StrCat("an array of ", count(value.size(), "element"));
  if (value.is_object()) return absl::StrCat("an object of ", count(value.size(), "key"));
  if (value.is_string() && value.get_ref<const std::string&>().size() > kMaxShown) {
    return absl::StrCat("a string of ", value.get_ref<const std::string&>().size(),
                        " characters");
  }
  return value.dump(-1, ' ', /*ensure_ascii=*/true, nlohmann::json::error_handler_t::replace);
}

absl::Status CheckJsonNesting(std::string_view text, int max_depth) {
  // A scan of the text, not of a parsed value, so nothing recursive ever sees a
  // value past the limit. Brackets inside strings do not count.
  int depth = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) {
        return absl::InvalidArgumentError(absl::StrCat(
            "JSON nests arrays/objects more than ", max_depth, " levels deep"));
      }
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return absl::OkStatus();
}

bool JsonFields::Has(const char* key) const { return object_->contains(key); }

const nlohmann::json* JsonFields::Get(const char* key) {
  read_.insert(key);
  auto it = object_->find(key);
  if (it == object_->end() || it->is_null()) return nullptr;  // null = "use the default"
  return &*it;
}

void JsonFields::Int(const char* key, int64_t lo, int64_t hi, int64_t* out) {
  const nlohmann::json* v = Get(key);
  if (v == nullptr) return;
  int64_t x = 0;
  if (!AsInt(*v, &x) || x < lo || x > hi) {
    Error(key, absl::StrCat("must be an integer in [", lo, ", ", hi, "], got ", Show(*v)));
    return;
  }
  *out = x;
}

void JsonFields::Int(const char* key, int lo, int hi, int* out) {
  int64_t x = *out;
  Int(key, static_cast<int64_t>(lo), static_cast<int64_t>(hi), &x);
  *out = static_cast<int>(x);
}

void JsonFields::Uint(const char* key, uint64_t* out) {
  const nlohmann::json* v = Get(key);
  if (v == nullptr) return;
  if (v->is_number_unsigned()) {
    *out = v->get<uint64_t>();
    return;
  }
  int64_t x = 0;
  if (AsInt(*v, &x) && x >= 0) {
    *out = static_cast<uint64_t>(x);
    return;
  }
  Error(key, absl::StrCat("must be a non-negative integer, got ", Show(*v)));
}

void JsonFields::Double(const char* key, double lo, double hi, double* out, bool lo_open) {
  const nlohmann::json* v = Get(key);
  if (v == nullptr) return;
  const bool number = v->is_number();
  const double x = number ? v->get<double>() : 0.0;
  if (!number || !std::isfinite(x) || x < lo || (lo_open && x == lo) || x > hi) {
    Error(key, absl::StrCat("must be a number in ", lo_open ? "(" : "[", lo, ", ", hi, "], got ",
                            Show(*v)));
    return;
  }
  *out = x;
}

void JsonFields::Bool(const char* key, bool* out) {
  const nlohmann::json* v = Get(key);
  if (v == nullptr) return;
  if (!v->is_boolean()) {
    Error(key, absl::StrCat("must be true or false, got ", Show(*v)));
    return;
  }
  *out = v->get<bool>();
}

void JsonFields::String(const char* key, std::string* out, const std::vector<std::string>& allowed,
                        size_t max_len) {
  const nlohmann::json* v = Get(key);
  if (v == nullptr) return;
  if (!v->is_string()) {
    Error(key, absl::StrCat("must be a string, got ", Show(*v)));
    return;
  }
  const std::string& s = v->get_ref<const std::string&>();
  if (s.size() > max_len) {
    Error(key, absl::StrCat("is ", s.size(), " characters long; at most ", max_len));
    return;
  }
  if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), s) == allowed.end()) {
    Error(key, absl::StrCat("must be one of ", absl::StrJoin(allowed, ", "), "; got ", Show(*v)));
    return;
  }
  *out = s;
}

void JsonFields::IntList(const char* key, int64_t lo, int64_t hi, size_t min_size,
                         size_t max_size, std::vector<int64_t>* out) {
  const nlohmann::json* v = Get(key);
  if (v == nullptr) return;
  if (!v->is_array() || v->size() < min_size || v->size() > max_size) {
    Error(key, absl::StrCat("must be a list of ", min_size, " to ", max_size,
                            " integers, got ", Show(*v)));
    return;
  }
  std::vector<int64_t> values;
  for (size_t i = 0; i < v->size(); ++i) {
    int64_t x = 0;
    if (!AsInt((*v)[i], &x) || x < lo || x > hi) {
      Error(key, absl::StrCat("[", i, "] must be an integer in [", lo, ", ", hi, "], got ",
                              Show((*v)[i])));
      return;
    }
    values.push_back(x);
  }
  *out = std::move(values);
}

void JsonFields::PositiveList(const char* key, double hi, size_t min_size, size_t max_size,
                              std::vector<double>* out) {
  const nlohmann::json* v = Get(key);
  if (v == nullptr) return;
  if (!v->is_array() || v->size() < min_size || v->size() > max_size) {
    Error(key, absl::StrCat("must be a list of ", min_size, " to ", max_size, " numbers, got ",
                            Show(*v)));
    return;
  }
  std::vector<double> values;
  for (size_t i = 0; i < v->size(); ++i) {
    const nlohmann::json& e = (*v)[i];
    const double x = e.is_number() ? e.get<double>() : 0.0;
    if (!e.is_number() || !std::isfinite(x) || !(x > 0) || x > hi) {
      Error(key, absl::StrCat("[", i, "] must be a number in (0, ", hi, "], got ", Show(e)));
      return;
    }
    values.push_back(x);
  }
  *out = std::move(values);
}

void JsonFields::UintList(const char* key, size_t min_size, size_t max_size,
                          std::vector<uint64_t>* out) {
  const nlohmann::json* v = Get(key);
  if (v == nullptr) return;
  if (!v->is_array() || v->size() < min_size || v->size() > max_size) {
    Error(key, absl::StrCat("must be a list of ", min_size, " to ", max_size,
                            " non-negative integers, got ", Show(*v)));
    return;
  }
  std::vector<uint64_t> values;
  for (size_t i = 0; i < v->size(); ++i) {
    const nlohmann::json& e = (*v)[i];
    int64_t x = 0;
    if (e.is_number_unsigned()) {
      values.push_back(e.get<uint64_t>());
    } else if (AsInt(e, &x) && x >= 0) {
      values.push_back(static_cast<uint64_t>(x));
    } else {
      Error(key, absl::StrCat("[", i, "] must be a non-negative integer, got ", Show(e)));
      return;
    }
  }
  *out = std::move(values);
}

void JsonFields::StringList(const char* key, size_t min_size, size_t max_size,
                            std::vector<std::string>* out) {
  const nlohmann::json* v = Get(key);
  if (v == nullptr) return;
  if (!v->is_array() || v->size() < min_size || v->size() > max_size) {
    Error(key, absl::StrCat("must be a list of ", min_size, " to ", max_size, " strings, got ",
                            Show(*v)));
    return;
  }
  std::vector<std::string> values;
  for (size_t i = 0; i < v->size(); ++i) {
    if (!(*v)[i].is_string() || (*v)[i].get_ref<const std::string&>().empty()) {
      Error(key, absl::StrCat("[", i, "] must be a non-empty string, got ", Show((*v)[i])));
      return;
    }
    values.push_back((*v)[i].get<std::string>());
  }
  *out = std::move(values);
}

JsonFields JsonFields::Object(const char* key) {
  const nlohmann::json* v = Get(key);
  if (v == nullptr) return JsonFields(EmptyObject(), Name(key), errors_);
  return JsonFields(*v, Name(key), errors_);
}

void JsonFields::Finish() {
  std::vector<std::string> unknown;
  for (auto it = object_->begin(); it != object_->end(); ++it) {
    if (read_.count(it.key()) == 0) unknown.push_back(absl::StrCat("'", it.key(), "'"));
  }
  if (unknown.empty()) return;
  std::vector<std::string> known;
  for (const std::string& k : read_) known.push_back(k);
  errors_->Add(absl::StrCat("unknown field", unknown.size() > 1 ? "s " : " ",
                            absl::StrJoin(unknown, ", "), " in ",
                            path_.empty() ? "the configuration" : path_,
                            " (known: ", absl::StrJoin(known, ", "), ")"));
}

}  // namespace flashtick
