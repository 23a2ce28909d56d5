// openssl-made CA, server and client certificates (see test_certs.h).
#include "tests/security/test_certs.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>

#include "absl/strings/str_cat.h"

namespace flashtick {
namespace {

absl::Status Run(const std::string& command) {
  const std::string full = command + " 2>&1";
  FILE* pipe = popen(full.c_str(), "r");
  if (pipe == nullptr) return absl::FailedPreconditionError("popen failed: " + command);
  std::string output;
  char buffer[512];
  while (fgets(buffer, sizeof(buffer), pipe) != nullptr) output += buffer;
  if (pclose(pipe) != 0) {
    return absl::FailedPreconditionError(absl::StrCat("`", command, "` failed: ", output));
  }
  return absl::OkStatus();
}

// A P-256 key and a certificate for `cn` signed by `ca` (self-signed when ca is "").
absl::Status MakeCert(const std::string& d, const std::string& name, const std::string& cn,
                      const std::string& ca, const std::string& extensions) {
  const std::string key = absl::StrCat(d, "/", name, ".key");
  const std::string pem = absl::StrCat(d, "/", name, ".pem");
  const std::string newkey = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
  if (ca.empty()) {
    return Run(absl::StrCat("openssl req -x509 ", newkey, " -keyout ", key, " -out ", pem,
                            " -days 1 -subj /CN=", cn));
  }
  const std::string csr = absl::StrCat(d, "/", name, ".csr");
  const std::string ext = absl::StrCat(d, "/", name, ".ext");
  std::ofstream(ext) << extensions << "\n";
  if (absl::Status s = Run(
          absl::StrCat("openssl req ", newkey, " -keyout ", key, " -out ", csr, " -subj /CN=", cn));
      !s.ok()) {
    return s;
  }
  return Run(absl::StrCat("openssl x509 -req -in ", csr, " -CA ", d, "/", ca, ".pem -CAkey ", d,
                          "/", ca, ".key -CAcreateserial -out ", pem, " -days 1 -extfile ", ext));
}

}  // namespace

absl::StatusOr<TestCerts> TestCerts::Make(const std::string& dir) {
  std::filesystem::create_directories(dir);
  const char* kServerExt = "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth";
  const char* kClientExt = "extendedKeyUsage=clientAuth";
  for (auto [name, cn, ca, ext] :
       {std::tuple{"ca", "flashtick-test-ca", "", ""},
        std::tuple{"server", "localhost", "ca", kServerExt},
        std::tuple{"client", "flashtick-test-client", "ca", kClientExt},
        std::tuple{"rogue_ca", "rogue-ca", "", ""},
        std::tuple{"rogue_client", "rogue-client", "rogue_ca", kClientExt}}) {
    if (absl::Status s = MakeCert(dir, name, cn, ca, ext); !s.ok()) return s;
  }
  TestCerts c;
  c.dir = dir;
  c.ca_pem = dir + "/ca.pem";
  c.server_pem = dir + "/server.pem";
  c.server_key = dir + "/server.key";
  c.client_pem = dir + "/client.pem";
  c.client_key = dir + "/client.key";
  c.rogue_client_pem = dir + "/rogue_client.pem";
  c.rogue_client_key = dir + "/rogue_client.key";
  return c;
}

std::string ReadFileOrEmpty(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace flashtick
