// RunLocation (see run_location.h).
#include "research/sweep/run_location.h"

#include <unistd.h>

#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace flashtick {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

}  // namespace

std::string RunLocation() {
  const std::string pod = Env("POD_NAME"), node = Env("NODE_NAME");
  if (!pod.empty() && !node.empty()) return absl::StrCat("pod ", pod, " on node ", node);
  if (!pod.empty()) return absl::StrCat("pod ", pod);
  if (!node.empty()) return absl::StrCat("node ", node);
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0') return "host unknown";
  return absl::StrCat("host ", host);
}

}  // namespace flashtick
