// PeerHost (server/client_identity.h): the per-client limits count one machine's
// connections together, so the port goes and the host stays, for IPv4, bracketed
// IPv6 and anything else gRPC reports.
#include "server/client_identity.h"

#include <gtest/gtest.h>

namespace flashtick {
namespace {

TEST(ClientIdentity, PeerHostDropsThePortOnly) {
  EXPECT_EQ(PeerHost("ipv4:10.0.0.7:53412"), "10.0.0.7");
  EXPECT_EQ(PeerHost("ipv4:127.0.0.1:1"), "127.0.0.1");
  EXPECT_EQ(PeerHost("ipv6:[::1]:4000"), "::1");
  EXPECT_EQ(PeerHost("ipv6:[2001:db8::5]:443"), "2001:db8::5");
  EXPECT_EQ(PeerHost("unix:/tmp/flashtick.sock"), "unix:/tmp/flashtick.sock");
  EXPECT_EQ(PeerHost(""), "");
}

}  // namespace
}  // namespace flashtick
