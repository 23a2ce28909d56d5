// RunClosedLoad (see closed_loop_load.h).
#include "bench/load_gen/closed_loop_load.h"

#include <chrono>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "bench/load_gen/load_report.h"
#include "inference/grpc_service.grpc.pb.h"

namespace flashtick::bench {
namespace {

using Clock = std::chrono::steady_clock;

// One client's share, merged after every thread has joined.
struct ClientTally {
  int64_t ok = 0;
  std::map<std::string, int64_t> errors;
  LatencyHistogram latency_ns;
};

void RunClient(inference::GRPCInferenceService::Stub* stub, const ClientOptions& options,
               const inference::ModelInferRequest& request, const ClosedLoadSpec& spec,
               Clock::time_point window_start, Clock::time_point window_end, ClientTally* t) {
  inference::ModelInferResponse response;
  while (true) {
    const Clock::time_point sent = Clock::now();
    if (sent >= window_end) return;  // a request is recorded when it is sent in the window
    grpc::ClientContext context;
    SetDeadline(options, &context);
    response.Clear();
    const grpc::Status s = stub->ModelInfer(&context, request, &response);
    const Clock::time_point done = Clock::now();
    if (sent < window_start) continue;
    if (!s.ok()) {
      ++t->errors[absl::StatusCodeToString(static_cast<absl::StatusCode>(s.error_code()))];
    } else if (spec.expected_output_bytes > 0 &&
               (response.raw_output_contents_size() != 1 ||
                static_cast<int64_t>(response.raw_output_contents(0).size()) !=
                    spec.expected_output_bytes)) {
      ++t->errors["BAD_RESPONSE"];
    } else {
      ++t->ok;
      t->latency_ns.Record(std::chrono::duration_cast<std::chrono::nanoseconds>(done - sent).count());
    }
  }
}

}  // namespace

absl::StatusOr<ClosedLoadResult> RunClosedLoad(const ClientOptions& client,
                                               const inference::ModelInferRequest& request,
                                               const ClosedLoadSpec& spec) {
  if (spec.clients < 1 || !(spec.duration_s > 0) || spec.warmup_s < 0) {
    return absl::InvalidArgumentError(absl::StrCat("RunClosedLoad: ", spec.clients, " clients, ",
                                                   spec.duration_s, " s, warmup ",
                                                   spec.warmup_s, " s"));
  }
  ClientOptions own = client;
  own.private_connection = true;  // one TCP connection a client, as separate processes have
  std::vector<std::unique_ptr<inference::GRPCInferenceService::Stub>> stubs;
  for (int i = 0; i < spec.clients; ++i) {
    std::shared_ptr<grpc::Channel> channel = MakeChannel(own);
    if (!channel->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(10))) {
      return absl::UnavailableError(absl::StrCat("client ", i, " cannot connect to ",
                                                 client.server, " within 10 s"));
    }
    stubs.push_back(inference::GRPCInferenceService::NewStub(channel));
  }
  const auto to_clock = [](double s) {
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
  };
  std::vector<ClientTally> tallies(spec.clients);
  const double cpu0 = ProcessCpuSeconds();
  const Clock::time_point t0 = Clock::now();
  const Clock::time_point window_start = t0 + to_clock(spec.warmup_s);
  const Clock::time_point window_end = window_start + to_clock(spec.duration_s);
  {
    std::vector<std::jthread> threads;
    for (int i = 0; i < spec.clients; ++i) {
      threads.emplace_back(RunClient, stubs[i].get(), std::cref(client), std::cref(request),
                           std::cref(spec), window_start, window_end, &tallies[i]);
    }
  }  // joined
  ClosedLoadResult r;
  r.clients = spec.clients;
  r.window_s = spec.duration_s;
  r.wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
  r.cpu_s = ProcessCpuSeconds() - cpu0;
  for (const ClientTally& t : tallies) {
    r.ok += t.ok;
    for (const auto& [code, n] : t.errors) r.errors[code] += n;
    r.latency_ns.Merge(t.latency_ns);
  }
  return r;
}

nlohmann::json ClosedLoadJson(const ClosedLoadResult& r) {
  nlohmann::json j = {{"clients", r.clients},
                      {"window_s", r.window_s},
                      {"ok", r.ok},
                      {"errors", r.errors},
                      {"error_count", ErrorCount(r.errors)},
                      {"throughput_rps", r.throughput_rps()},
                      {"generator_cpu_cores", r.wall_s > 0 ? r.cpu_s / r.wall_s : 0.0}};
  j.update(LatencyJson(r.latency_ns));
  return j;
}

}  // namespace flashtick::bench
