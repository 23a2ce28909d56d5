// ClientNamer: who is calling, for per-client limits (tick streams, experiments).
// In order of trust:
//   "token#N"     the call presented the N-th accepted bearer token (file order;
//                 server/auth/token_set.h), matched in constant time; the token
//                 itself is never shown;
//   "tls:NAME"    the verified client certificate's identity under mutual TLS;
//   "peer:HOST"   the caller's address without its port (so one machine's many
//                 connections count together), when neither applies.
// Without tokens or mutual TLS the address is the best the server knows: several
// users behind one NAT count as one client, which errs on the side of the limit.
// Why not an auth-context property set by the token processor: gRPC hands the
// processor the connection's context, which calls with different tokens share
// (channels in one process share connections), so the name is taken per call.
#pragma once

#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "absl/strings/string_view.h"
#include "server/auth/token_set.h"

namespace flashtick {

class ClientNamer {
 public:
  // tokens: the accepted bearer tokens, or null when token auth is off.
  explicit ClientNamer(std::shared_ptr<const TokenSet> tokens) : tokens_(std::move(tokens)) {}
  std::string Name(const grpc::ServerContextBase& context) const;

 private:
  std::shared_ptr<const TokenSet> tokens_;
};

// "ipv4:10.0.0.7:53412" → "10.0.0.7", "ipv6:[::1]:4000" → "::1",
// "unix:/tmp/s" → "unix:/tmp/s". Exposed for its unit test.
std::string PeerHost(absl::string_view peer);

}  // namespace flashtick
