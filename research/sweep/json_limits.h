// Limits on untrusted JSON before any parser sees it. A configuration nested far past
// any real one is refused by a scan of its text, so nothing recursive (a parser, a
// dump, a compare) ever walks a value deeper than the limit.
#pragma once

#include <string_view>

#include "absl/status/status.h"

namespace flashtick {

// Deepest nesting of arrays/objects a configuration may have. Real configs nest 3
// levels.
inline constexpr int kMaxJsonDepth = 32;

// INVALID_ARGUMENT when `text` nests arrays/objects deeper than max_depth, or, unless
// lists_of_lists, has an array directly inside an array (brackets inside strings do
// not count). Call before parsing untrusted text. Protobuf's JSON parser reads a
// list of lists into a repeated scalar field as one flat list; a schema with no such
// field refuses them here instead.
absl::Status CheckJsonNesting(std::string_view text, int max_depth = kMaxJsonDepth,
                              bool lists_of_lists = true);

}  // namespace flashtick
