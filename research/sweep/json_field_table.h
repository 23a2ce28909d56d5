// A struct's scalar JSON fields as one table: each row names a key and the member it
// holds, and the same rows write the JSON and read it back, so a new field is one row,
// never a writer and a reader kept in step by hand. Reading is strict about types: a
// resumed sweep must not continue from a misread state, so a wrong type is DATA_LOSS
// naming the field. A row marked optional is a field added after state files were
// first written: absent, it keeps the struct's default; present, its type is checked.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <variant>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace flashtick {

template <typename S>
struct JsonField {
  using Member = std::variant<std::string S::*, int64_t S::*, uint64_t S::*, int S::*, double S::*>;
  const char* key;
  Member member;
  bool optional = false;
};

inline absl::Status JsonFieldLost(absl::string_view what, absl::string_view field) {
  return absl::DataLossError(
      absl::StrCat(what, ": field '", field, "' is missing or has the wrong type"));
}

template <typename S>
void WriteJsonFields(const S& s, absl::Span<const JsonField<S>> fields, nlohmann::json* j) {
  for (const JsonField<S>& f : fields) {
    std::visit([&](auto member) { (*j)[f.key] = s.*member; }, f.member);
  }
}

// `what` names the record in messages ("arm state"), `path` the object ("days[]").
template <typename S>
absl::Status ReadJsonFields(const nlohmann::json& j, absl::Span<const JsonField<S>> fields,
                            absl::string_view what, absl::string_view path, S* s) {
  if (!j.is_object()) return JsonFieldLost(what, path.empty() ? "(top level)" : path);
  for (const JsonField<S>& f : fields) {
    const auto it = j.find(f.key);
    const std::string name = path.empty() ? std::string(f.key) : absl::StrCat(path, ".", f.key);
    if (it == j.end()) {
      if (f.optional) continue;
      return JsonFieldLost(what, name);
    }
    bool ok = true;
    std::visit(
        [&](auto member) {
          using T = std::remove_reference_t<decltype(s->*member)>;
          if constexpr (std::is_same_v<T, std::string>) {
            ok = it->is_string();
          } else if constexpr (std::is_same_v<T, double>) {
            ok = it->is_number();
          } else {
            ok = it->is_number_integer();
          }
          if (ok) s->*member = it->template get<T>();
        },
        f.member);
    if (!ok) return JsonFieldLost(what, name);
  }
  return absl::OkStatus();
}

}  // namespace flashtick
