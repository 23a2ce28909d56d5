// TestCerts: a throwaway PKI for the security tests, made with the openssl CLI
// in a temp dir: a CA, a server certificate for localhost/127.0.0.1 and a client
// certificate signed by it, and a second ("rogue") CA with its own client
// certificate. P-256 keys, one-day validity: seconds to make on two cores.
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace flashtick {

struct TestCerts {
  std::string dir;
  std::string ca_pem, server_pem, server_key, client_pem, client_key;
  std::string rogue_client_pem, rogue_client_key;  // signed by another CA

  // FAILED_PRECONDITION with openssl's output when a command fails.
  static absl::StatusOr<TestCerts> Make(const std::string& dir);
};

// The whole file, or "" when unreadable (tests assert on it).
std::string ReadFileOrEmpty(const std::string& path);

}  // namespace flashtick
