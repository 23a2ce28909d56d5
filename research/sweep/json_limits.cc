// CheckJsonNesting (see json_limits.h).
#include "research/sweep/json_limits.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace flashtick {

absl::Status CheckJsonNesting(std::string_view text, int max_depth, bool lists_of_lists) {
  // A scan of the text, not of a parsed value, so nothing recursive ever sees a
  // value past the limit. Brackets inside strings do not count. `open` holds the
  // brackets open at each level, so its size is the depth (at most max_depth); a
  // closing bracket with none open (not JSON: the parser refuses it) closes nothing.
  std::string open;
  bool in_string = false, escaped = false, list_in_list = false;
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
      if (static_cast<int>(open.size()) >= max_depth) {
        return absl::InvalidArgumentError(absl::StrCat(
            "JSON nests arrays/objects more than ", max_depth, " levels deep"));
      }
      list_in_list |= c == '[' && !open.empty() && open.back() == '[';
      open.push_back(c);
    } else if ((c == ']' || c == '}') && !open.empty()) {
      open.pop_back();
    }
  }
  if (list_in_list && !lists_of_lists) {  // after the depth scan: too deep is said first
    return absl::InvalidArgumentError("JSON has a list inside a list, which no field takes");
  }
  return absl::OkStatus();
}

}  // namespace flashtick
