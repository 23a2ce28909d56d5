// K8sClient (see k8s_client.h).
#include "server/experiments/k8s_client.h"

#include <curl/curl.h>

#include <cstdlib>
#include <mutex>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/file_io.h"

namespace flashtick {
namespace {

constexpr int64_t kMaxSmallFileBytes = 64 << 10;  // token, namespace

struct Sink {
  std::string body;
  int64_t limit = 0;
  bool overflow = false;
};

extern "C" size_t WriteBody(char* data, size_t size, size_t n, void* user) {
  Sink* sink = static_cast<Sink*>(user);
  const size_t bytes = size * n;
  if (static_cast<int64_t>(sink->body.size() + bytes) > sink->limit) {
    sink->overflow = true;
    return 0;  // curl stops with CURLE_WRITE_ERROR
  }
  sink->body.append(data, bytes);
  return bytes;
}

absl::StatusOr<std::string> ReadSmallFile(const std::string& path, const char* what) {
  auto text = ReadFileToString(path);
  if (!text.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("the Kubernetes ", what, " file ", path, ": ", text.status().message()));
  }
  if (static_cast<int64_t>(text->size()) > kMaxSmallFileBytes) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the Kubernetes ", what, " file ", path, " is larger than ", kMaxSmallFileBytes, " bytes"));
  }
  return std::string(absl::StripAsciiWhitespace(*text));
}

struct CurlCleanup {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
struct SlistCleanup {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};

}  // namespace

absl::StatusOr<std::unique_ptr<K8sClient>> K8sClient::Create(K8sClientOptions options) {
  static std::once_flag curl_init;
  std::call_once(curl_init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  if (options.api_server.empty()) {
    const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
    const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
    if (host == nullptr || port == nullptr || *host == '\0' || *port == '\0') {
      return absl::FailedPreconditionError(
          "no Kubernetes API server: KUBERNETES_SERVICE_HOST/PORT are unset (not in a pod) "
          "and --k8s-api-server is empty");
    }
    // An IPv6 service address needs brackets in a URL.
    const std::string h = absl::StrContains(host, ':') ? absl::StrCat("[", host, "]") : host;
    options.api_server = absl::StrCat("https://", h, ":", port);
  }
  while (absl::EndsWith(options.api_server, "/")) options.api_server.pop_back();
  if (!absl::StartsWith(options.api_server, "https://") &&
      !absl::StartsWith(options.api_server, "http://")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--k8s-api-server must start with https:// or http://, got '", options.api_server, "'"));
  }
  if (options.ns.empty()) {
    auto ns = ReadSmallFile(options.namespace_file, "namespace");
    if (!ns.ok()) return ns.status();
    options.ns = *ns;
  }
  if (options.ns.empty()) return absl::InvalidArgumentError("the Kubernetes namespace is empty");
  if (options.request_timeout_seconds <= 0 || options.max_response_bytes <= 0) {
    return absl::InvalidArgumentError("the Kubernetes request timeout and size must be > 0");
  }
  return std::unique_ptr<K8sClient>(new K8sClient(std::move(options)));
}

absl::StatusOr<K8sResponse> K8sClient::Request(absl::string_view method, const std::string& path,
                                               const std::string& body) const {
  std::unique_ptr<CURL, CurlCleanup> curl(curl_easy_init());
  if (curl == nullptr) return absl::InternalError("curl_easy_init failed");
  std::unique_ptr<curl_slist, SlistCleanup> headers;
  auto add_header = [&](const std::string& h) {
    headers.reset(curl_slist_append(headers.release(), h.c_str()));
  };
  add_header("Accept: application/json");
  if (!body.empty()) add_header("Content-Type: application/json");
  if (!options_.token_file.empty()) {
    auto token = ReadSmallFile(options_.token_file, "token");
    if (!token.ok()) return token.status();
    add_header(absl::StrCat("Authorization: Bearer ", *token));
  }
  const std::string url = options_.api_server + path;
  const std::string verb(method);
  Sink sink;
  sink.limit = options_.max_response_bytes;
  CURL* c = curl.get();
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, verb.c_str());
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
  if (!body.empty()) {
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  }
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, WriteBody);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);  // threads: no SIGALRM for timeouts
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS,
                   static_cast<long>(options_.request_timeout_seconds * 1000));
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(options_.request_timeout_seconds * 1000));
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
  if (!options_.ca_file.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, options_.ca_file.c_str());
  const CURLcode rc = curl_easy_perform(c);
  if (sink.overflow) {
    return absl::ResourceExhaustedError(absl::StrCat(
        verb, " ", path, ": the Kubernetes API response is larger than --k8s-max-response-bytes (",
        options_.max_response_bytes, ")"));
  }
  if (rc != CURLE_OK) {
    return absl::UnavailableError(absl::StrCat(verb, " ", url, ": ", curl_easy_strerror(rc)));
  }
  K8sResponse out;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out.status);
  out.body = std::move(sink.body);
  return out;
}

}  // namespace flashtick
