// StartMetricsEndpoint (see metrics_endpoint.h).
#include "server/metrics/metrics_endpoint.h"

#include <dlfcn.h>
#include <pthread.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <exception>
#include <mutex>
#include <vector>

#include <CivetServer.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/logging.h"

// Debian's civetweb is built with USE_STACK_SIZE=102400: every civetweb thread asks
// pthread_attr_setstacksize for 100 KiB. glibc carves the static TLS of every loaded
// library out of each thread's stack and refuses (EINVAL) a stack smaller than
// static TLS + guard + 16 KiB; cuBLASLt 13 alone brings 92 KiB of static TLS, so in
// a CUDA build civetweb could not start one thread ("Cannot create threads") and
// flashtickd could not serve /metrics. This interposer (the executable's definition
// wins over libc's for civetweb's call) raises any requested size to 1 MiB and
// forwards to libc; callers asking for more are unchanged.
extern "C" int pthread_attr_setstacksize(pthread_attr_t* attr, size_t size) {
  using SetStackSize = int (*)(pthread_attr_t*, size_t);
  static const SetStackSize libc_setstacksize =
      reinterpret_cast<SetStackSize>(dlsym(RTLD_NEXT, "pthread_attr_setstacksize"));
  constexpr size_t kMinThreadStackBytes = size_t{1} << 20;
  if (libc_setstacksize == nullptr) return EINVAL;
  return libc_setstacksize(attr, std::max(size, kMinThreadStackBytes));
}

namespace flashtick {
namespace {

// civetweb calls log_message from whichever thread fails, with no user pointer
// before its context exists; starts are rare, so one guarded list is enough.
std::mutex g_log_mutex;
std::vector<std::string>* g_log = nullptr;

int CaptureCivetwebLog(const mg_connection*, const char* message) {
  if (message == nullptr) return 1;
  std::lock_guard<std::mutex> lock(g_log_mutex);
  if (g_log != nullptr) {
    g_log->emplace_back(message);  // a start in progress: returned in its status
  } else {
    LogWarning(absl::StrCat("metrics endpoint (civetweb): ", message));
  }
  return 1;  // handled: civetweb writes nothing itself
}

}  // namespace

absl::StatusOr<std::unique_ptr<prometheus::Exposer>> StartMetricsEndpoint(
    const std::string& host, int port, int threads, int request_timeout_ms) {
  const std::string address = absl::StrCat(host, ":", port);
  std::vector<std::string> log;
  CivetCallbacks callbacks;
  callbacks.log_message = &CaptureCivetwebLog;
  std::unique_ptr<prometheus::Exposer> exposer;
  std::string failure;
  {
    std::lock_guard<std::mutex> lock(g_log_mutex);
    g_log = &log;
  }
  try {
    exposer = std::make_unique<prometheus::Exposer>(
        std::vector<std::string>{"listening_ports", address, "num_threads",
                                 std::to_string(threads), "request_timeout_ms",
                                 std::to_string(request_timeout_ms)},
        &callbacks);
  } catch (const std::exception& e) {
    failure = e.what();
  }
  {
    std::lock_guard<std::mutex> lock(g_log_mutex);
    g_log = nullptr;
  }
  if (exposer) return exposer;
  return absl::UnavailableError(absl::StrCat(
      "metrics endpoint cannot listen on ", address, ": ",
      log.empty() ? failure : absl::StrJoin(log, "; "),
      " (is the port in use? choose another with --metrics-port, or -1 to turn metrics off)"));
}

}  // namespace flashtick
