// flashtickd: the flashtick inference server. Parses flags (server_options.h),
// starts FlashtickServer and serves until SIGTERM or SIGINT, then shuts down
// gracefully. SIGTERM/SIGINT are blocked before any thread starts and taken by
// sigwait on the main thread, so no handler runs inside gRPC or a worker.
// Prints one line "flashtickd ready grpc=HOST:PORT metrics=PORT" once serving.
#include <signal.h>

#include <cstdio>

#include <CLI/CLI.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/flashtick_server.h"
#include "server/logging.h"
#include "server/server_options.h"

int main(int argc, char** argv) {
  flashtick::ServerOptions options;
  CLI::App app{
      "flashtickd: serves the flashtick causal tick transformer over gRPC (KServe v2 "
      "inference.GRPCInferenceService, flashtick.v1.TickStream, flashtick.v1.Experiments, "
      "grpc.health.v1, reflection) with Prometheus metrics."};
  flashtick::AddServerFlags(&app, &options);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto server = flashtick::FlashtickServer::Start(options);
  if (!server.ok()) {
    flashtick::LogError(absl::StrCat("flashtickd failed to start: ", server.status().ToString()));
    return 1;
  }
  const std::string host = options.ListenHost();
  flashtick::LogInfo(absl::StrCat(
      "flashtickd ready grpc=", host, ":", (*server)->grpc_port(),
      " metrics=", (*server)->metrics_port(),
      " models=", absl::StrJoin((*server)->repository().ModelNames(), ","),
      " max_seq_len=", options.max_seq_len));

  int signal_number = 0;
  sigwait(&signals, &signal_number);
  flashtick::LogInfo(absl::StrCat("received signal ", signal_number,
                                  "; draining in-flight requests (grace ",
                                  options.shutdown_grace_seconds, " s)"));
  (*server)->Shutdown();
  flashtick::LogInfo("flashtickd stopped");
  return 0;
}
