// TokenSet: the bearer tokens flashtickd accepts, read from --auth-token-file
// (one token per line; blank lines and lines starting with '#' are ignored;
// surrounding spaces are trimmed). Matches() compares in constant time: its
// running time depends only on the length of the presented token, never on how
// many leading bytes agree or which token matched, so timing does not leak a
// token byte by byte. Tokens are secrets: nothing here logs or prints them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace flashtick {

// The header a bearer token travels in, and the token of its value
// "Bearer <token>" (scheme case-insensitive, RFC 6750 §2.1); nullopt when the value is
// not that. One parser for the token check and for naming the client.
inline constexpr absl::string_view kAuthorizationHeader = "authorization";
std::optional<absl::string_view> BearerToken(absl::string_view header_value);

class TokenSet {
 public:
  // NOT_FOUND / PERMISSION_DENIED naming --auth-token-file and the path when the
  // file cannot be read; INVALID_ARGUMENT when it holds no token or a token has
  // characters not allowed in an HTTP/2 header value.
  static absl::StatusOr<TokenSet> LoadFile(const std::string& path);
  // Same rules, from the file's text (`source` names it in error messages).
  static absl::StatusOr<TokenSet> Parse(absl::string_view text, absl::string_view source);

  bool Matches(absl::string_view presented) const { return Match(presented) > 0; }
  // The 1-based position of the matched token among the accepted ones (file order),
  // 0 when none matches; same constant-time comparison. The position names the
  // client ("token#3") for per-client limits without ever showing the secret.
  int Match(absl::string_view presented) const;
  size_t size() const { return tokens_.size(); }

 private:
  std::vector<std::string> tokens_;
};

}  // namespace flashtick
