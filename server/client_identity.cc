// Who is calling (see client_identity.h).
#include "server/client_identity.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace flashtick {

std::string PeerHost(absl::string_view peer) {
  for (absl::string_view scheme : {"ipv4:", "ipv6:"}) {
    if (!absl::StartsWith(peer, scheme)) continue;
    absl::string_view address = peer.substr(scheme.size());
    if (!address.empty() && address.front() == '[') {  // [v6]:port
      const size_t close = address.find(']');
      if (close != absl::string_view::npos) return std::string(address.substr(1, close - 1));
    }
    const size_t colon = address.rfind(':');
    return std::string(colon == absl::string_view::npos ? address : address.substr(0, colon));
  }
  return std::string(peer);  // unix sockets and anything else: the whole name
}

std::string ClientNamer::Name(const grpc::ServerContextBase& context) const {
  if (tokens_ != nullptr) {
    // A token that does not match (possible on methods the processor leaves open)
    // names no one: the caller is then named like a caller without one.
    const auto& metadata = context.client_metadata();
    const auto header = metadata.find(grpc::string_ref(kAuthorizationHeader.data(),
                                                       kAuthorizationHeader.size()));
    if (header != metadata.end()) {
      const auto token =
          BearerToken(absl::string_view(header->second.data(), header->second.size()));
      const int n = token.has_value() ? tokens_->Match(*token) : 0;
      if (n > 0) return absl::StrCat("token#", n);
    }
  }
  const std::shared_ptr<const grpc::AuthContext> auth = context.auth_context();
  if (auth != nullptr && auth->IsPeerAuthenticated()) {
    const auto identity = auth->GetPeerIdentity();
    if (!identity.empty()) {
      return absl::StrCat("tls:",
                          absl::string_view(identity.front().data(), identity.front().size()));
    }
  }
  return absl::StrCat("peer:", PeerHost(context.peer()));
}

}  // namespace flashtick
