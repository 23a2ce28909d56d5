// Bearer-token file parsing and constant-time matching (see token_set.h).
#include "server/auth/token_set.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"
#include "common/file_io.h"

namespace flashtick {
namespace {

// Printable ASCII without spaces: what survives "Bearer <token>" in a header.
bool IsTokenChar(char c) { return c > ' ' && c < 0x7f; }

// Constant-time equality for a presented token against one accepted token.
// Every byte of `presented` is visited and the loop never exits early; the
// accepted token is indexed modulo its length so a length mismatch costs the
// same as a byte mismatch (the length flag is folded in at the end).
bool ConstantTimeEquals(absl::string_view presented, absl::string_view accepted) {
  unsigned char diff = presented.size() == accepted.size() ? 0 : 1;
  for (size_t i = 0; i < presented.size(); ++i) {
    diff |= static_cast<unsigned char>(presented[i]) ^
            static_cast<unsigned char>(accepted[i % accepted.size()]);
  }
  return diff == 0;
}

}  // namespace

std::optional<absl::string_view> BearerToken(absl::string_view header_value) {
  constexpr absl::string_view kBearer = "Bearer ";
  if (header_value.size() <= kBearer.size() ||
      !absl::EqualsIgnoreCase(header_value.substr(0, kBearer.size()), kBearer)) {
    return std::nullopt;
  }
  return header_value.substr(kBearer.size());
}

absl::StatusOr<TokenSet> TokenSet::LoadFile(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadFlagFile("--auth-token-file", path));
  return Parse(text, absl::StrCat("--auth-token-file '", path, "'"));
}

absl::StatusOr<TokenSet> TokenSet::Parse(absl::string_view text, absl::string_view source) {
  TokenSet set;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line.front() == '#') continue;
    for (char c : line) {
      if (!IsTokenChar(c)) {
        // The token itself is not quoted: it is a secret even when malformed.
        return absl::InvalidArgumentError(
            absl::StrCat(source, " line ", line_number,
                         ": a token may hold only printable ASCII without spaces (it is sent as "
                         "'authorization: Bearer <token>')"));
      }
    }
    set.tokens_.emplace_back(line);
  }
  if (set.tokens_.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, " holds no token (one per line; '#' starts a comment)"));
  }
  return set;
}

int TokenSet::Match(absl::string_view presented) const {
  if (presented.empty()) return 0;
  int matched = 0;
  // No early exit and no branch on the result: every accepted token is compared and
  // the position is selected arithmetically, so the time does not say which one (or
  // whether any) matched.
  for (size_t i = 0; i < tokens_.size(); ++i) {
    const int equal = ConstantTimeEquals(presented, tokens_[i]) ? 1 : 0;
    matched += equal * static_cast<int>(matched == 0) * static_cast<int>(i + 1);  // first match
  }
  return matched;
}

}  // namespace flashtick
