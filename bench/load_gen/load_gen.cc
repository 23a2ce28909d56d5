// load_gen: an open-loop load generator for flashtickd's KServe v2 ModelInfer
// (docs/serving.md, "Serving under load").
//
// Why open loop. A closed-loop client (N clients, each sending its next request when
// the last one is answered) slows down exactly when the server does, so the requests
// a stalled server should have received are never sent and never measured; its p99
// then describes a gentler load than the one named ("coordinated omission": G. Tene,
// "How NOT to Measure Latency", Strange Loop 2015; wrk2, https://github.com/giltene/wrk2).
// Here arrivals follow a Poisson process at a fixed offered rate (poisson_arrivals.h),
// each request is sent at its intended time whatever the server is doing, and its
// latency runs from that intended time (infer_load.cc). The send lag (actual −
// intended send) is reported so that a generator which could not keep up is seen,
// and is a stop condition of the sweep.
//
// The sweep: for each --rates entry, --warmup-s of load (not recorded), then
// --duration-s measured, then the answers drained. Per rate: offered and achieved
// throughput, p50/p90/p99/p99.9/max latency (log-linear histogram, ≤ 0.8% above the
// exact sample), errors by gRPC status, send lag and the generator's CPU use. The
// sweep stops after the first rate past the knee (p99 > --slo-ms, achieved < 0.9 ×
// the offered arrivals, errors > --max-error-frac, or the generator behind), unless
// --no-stop. A table goes to stdout and, with --json PATH, one JSON line per rate
// (bench "load_gen"), a meta line first and a summary line last.
//
// --clients K[,K...]: instead of the sweep, closed loop: K clients, each on its own
// connection, sending a request when its last is answered (closed_loop_load.h says
// when that is the right measure); per K, p50/p90/p99/p99.9/max from send to answer
// and the throughput, to stdout and, with --json, one line each (op "model_infer_closed").
//
// --tick-stream: instead of the sweep, one day of --ticks feature rows over
// flashtick.v1.TickStream, each sent when the last is answered (tick_stream_load.h
// says why closed loop is right there); per-tick p50/p90/p99/p99.9/max and the
// server's compute per tick go to stdout and, with --json, a meta line and one line
// (what "tick", impl "load_gen_grpc").
//
//   load_gen --server HOST:PORT --model NAME --rates 100,200,400 [--n 512]
//       [--duration-s 5] [--warmup-s 1] [--slo-ms 50] [--json PATH] [--gpu G] [--commit SHA]
//   load_gen --server HOST:PORT --model NAME --clients 1,8 [--n 23400] [--last-only]
//   load_gen --server HOST:PORT --model NAME --tick-stream [--ticks 23400] [--tick-warmup 0]
#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/load_gen/closed_loop_load.h"
#include "bench/load_gen/infer_load.h"
#include "bench/load_gen/tick_stream_load.h"
#include "client/client_options.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"

namespace flashtick::bench {
namespace {

struct Args {
  ClientOptions client;
  std::string model, model_version, json_path, gpu = "unknown", commit = "unknown";
  std::vector<double> rates;
  std::vector<int> clients;
  int64_t n = 512, batch = 1;
  bool last_only = false, no_stop = false, tick_stream = false;
  InferLoadSpec load;
  TickStreamSpec ticks;
  KneeLimits limits;
  std::string command;
};

// The flags. When CLI11 handles the command line itself (--help, or a parse error it
// has printed), *cli_exit is set to app.exit()'s code (0 for --help).
absl::StatusOr<Args> Parse(int argc, char** argv, int* cli_exit) {
  Args a;
  for (int i = 0; i < argc; ++i) a.command += (i ? " " : "") + std::string(argv[i]);
  CLI::App app{
      "Open-loop load generator for flashtickd's KServe v2 ModelInfer: Poisson arrivals at each "
      "offered rate, latency from the intended send time (no coordinated omission), up to the "
      "knee. Prints a table; --json writes one JSON line per rate.",
      "load_gen"};
  const CLI::Range kPositive(1e-9, std::numeric_limits<double>::max());
  const CLI::Range kAtLeastOne(int64_t{1}, std::numeric_limits<int64_t>::max());
  app.add_option("--server", a.client.server, "flashtickd gRPC address host:port")
      ->capture_default_str();
  AddClientSecurityFlags(&app, &a.client);
  app.add_option("--model", a.model, "Served model name")->required();
  app.add_option("--model-version", a.model_version, "Model version (\"\": the highest)");
  app.add_option("--rates", a.rates,
                 "Offered rates in requests/s, comma-separated, ascending (required without "
                 "--tick-stream)")
      ->delimiter(',')
      ->check(kPositive);
  app.add_option("--clients", a.clients,
                 "Instead of the rate sweep: closed loop with each of these client counts, "
                 "comma-separated (each client on its own connection, sending when answered)")
      ->delimiter(',')
      ->check(CLI::Range(1, 4096));
  app.add_option("--n", a.n, "Steps N of each request's day ([B, N, F] FP32)")
      ->check(kAtLeastOne)
      ->capture_default_str();
  app.add_option("--batch", a.batch, "Sequences B per request")
      ->check(kAtLeastOne)
      ->capture_default_str();
  app.add_flag("--last-only", a.last_only, "Ask for the last step's probabilities only");
  app.add_option("--duration-s", a.load.duration_s, "Measured seconds per rate")
      ->check(kPositive)
      ->capture_default_str();
  app.add_option("--warmup-s", a.load.warmup_s, "Unrecorded seconds of load before each window")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--max-inflight", a.load.max_inflight,
                 "Most requests outstanding; a send held back by it is counted")
      ->check(kAtLeastOne)
      ->capture_default_str();
  app.add_option("--timeout-s", a.load.timeout_s, "Per-request deadline in seconds")
      ->check(kPositive)
      ->capture_default_str();
  app.add_option("--seed", a.load.seed, "Seed of the arrival times and of the request data")
      ->capture_default_str();
  app.add_option("--slo-ms", a.limits.slo_ms, "Knee: p99 latency above this (ms)")
      ->check(kPositive)
      ->capture_default_str();
  app.add_option("--max-error-frac", a.limits.max_error_frac,
                 "Knee: errors above this fraction of the requests")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--max-send-lag-ms", a.limits.max_send_lag_ms,
                 "Knee: the generator's send-lag p99 above this (ms) and above a tenth of the "
                 "latency p99 means it fell behind")
      ->check(kPositive)
      ->capture_default_str();
  app.add_flag("--spin", a.load.spin,
               "Busy-poll the last 2.5 ms before each send (one core; microsecond send lag)");
  app.add_flag("--no-stop", a.no_stop, "Run every rate, past the knee too");
  app.add_flag("--tick-stream", a.tick_stream,
               "Instead of the ModelInfer sweep: stream --ticks feature rows over TickStream, "
               "one at a time, and report per-tick latency");
  app.add_option("--ticks", a.ticks.ticks, "Feature rows of the streamed day (--tick-stream)")
      ->check(kAtLeastOne)
      ->capture_default_str();
  app.add_option("--tick-warmup", a.ticks.warmup,
                 "First ticks of the day not recorded (--tick-stream; they are still sent)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--json", a.json_path, "Write JSON lines here (meta, one per rate, summary)");
  app.add_option("--gpu", a.gpu, "Recorded in each line")->capture_default_str();
  app.add_option("--commit", a.commit, "Recorded in each line")->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    *cli_exit = app.exit(e);  // prints the help, or the error to stderr
    return absl::InvalidArgumentError(e.what());
  }
  if (!a.tick_stream && a.rates.empty() && a.clients.empty()) {
    return absl::InvalidArgumentError("--rates or --clients is required (unless --tick-stream)");
  }
  if (a.tick_stream + !a.rates.empty() + !a.clients.empty() > 1) {
    return absl::InvalidArgumentError("--rates, --clients and --tick-stream are separate runs: "
                                      "give one");
  }
  if (a.tick_stream && a.ticks.warmup >= a.ticks.ticks) {
    return absl::InvalidArgumentError("--tick-warmup must be below --ticks");
  }
  for (size_t i = 1; i < a.rates.size(); ++i) {
    if (a.rates[i] <= a.rates[i - 1]) {
      return absl::InvalidArgumentError("--rates must be ascending (the sweep stops at the knee)");
    }
  }
  RETURN_IF_ERROR(LoadClientSecurity(&a.client));
  a.client.timeout_seconds = a.load.timeout_s;
  a.ticks.model = a.model;
  a.ticks.model_version = a.model_version;
  a.ticks.seed = a.load.seed;
  return a;
}

absl::Status FromGrpc(const std::string& what, const grpc::Status& s) {
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()),
                      absl::StrCat(what, ": ", s.error_message()));
}

struct ModelShape {
  int64_t features = 0, classes = 0;
};

// F and the class count from ModelMetadata ([-1, -1, F] in, [-1, -1, C] out).
absl::StatusOr<ModelShape> FetchShape(inference::GRPCInferenceService::Stub* stub, const Args& a) {
  grpc::ClientContext context;
  SetDeadline(a.client, &context);
  inference::ModelMetadataRequest request;
  request.set_name(a.model);
  request.set_version(a.model_version);
  inference::ModelMetadataResponse response;
  grpc::Status s = stub->ModelMetadata(&context, request, &response);
  if (!s.ok()) return FromGrpc(absl::StrCat("ModelMetadata of '", a.model, "' at ", a.client.server), s);
  if (response.inputs_size() < 1 || response.inputs(0).shape_size() != 3 ||
      response.outputs_size() < 1 || response.outputs(0).shape_size() != 3) {
    return absl::FailedPreconditionError(
        absl::StrCat("model '", a.model, "' does not have the [B, N, F] -> [B, N, C] signature"));
  }
  return ModelShape{response.inputs(0).shape(2), response.outputs(0).shape(2)};
}

inference::ModelInferRequest MakeRequest(const Args& a, const ModelShape& shape) {
  inference::ModelInferRequest request;
  request.set_model_name(a.model);
  request.set_model_version(a.model_version);
  if (a.last_only) (*request.mutable_parameters())["last_only"].set_bool_param(true);
  auto* input = request.add_inputs();
  input->set_name("ticks");
  input->set_datatype("FP32");
  for (int64_t d : {a.batch, a.n, shape.features}) input->add_shape(d);
  std::mt19937_64 rng(a.load.seed);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::vector<float> x(a.batch * a.n * shape.features);
  for (float& v : x) v = normal(rng);
  request.add_raw_input_contents()->assign(reinterpret_cast<const char*>(x.data()),
                                           x.size() * sizeof(float));
  request.add_outputs()->set_name("probs");
  return request;
}

// One request before the sweep: a request the server refuses (N past its limit, a
// wrong model) is an error here, not thousands of them in the table. Returns the
// response for its device and kernel_path.
absl::StatusOr<inference::ModelInferResponse> Probe(inference::GRPCInferenceService::Stub* stub,
                                                    const Args& a,
                                                    const inference::ModelInferRequest& request) {
  grpc::ClientContext context;
  SetDeadline(a.client, &context);
  inference::ModelInferResponse response;
  grpc::Status s = stub->ModelInfer(&context, request, &response);
  if (!s.ok()) return FromGrpc("ModelInfer (probe before the sweep)", s);
  if (response.raw_output_contents_size() != 1 ||
      static_cast<int64_t>(response.raw_output_contents(0).size()) !=
          a.load.expected_output_bytes) {
    return absl::DataLossError(absl::StrCat("ModelInfer (probe): expected ",
                                            a.load.expected_output_bytes,
                                            " bytes of probabilities"));
  }
  return response;
}

std::string Param(const inference::ModelInferResponse& r, const std::string& key) {
  auto it = r.parameters().find(key);
  return it == r.parameters().end() ? "" : it->second.string_param();
}

// --json's file, or a closed stream when there is none; a cut run keeps its lines.
absl::StatusOr<std::unique_ptr<std::ofstream>> OpenJson(const std::string& path) {
  auto json = std::make_unique<std::ofstream>();
  if (path.empty()) return json;
  json->open(path, std::ios::trunc);
  if (!*json) return absl::PermissionDeniedError(absl::StrCat("cannot write --json ", path));
  return json;
}

nlohmann::json MetaLine(const Args& a) {
  return {{"bench", "meta"}, {"tool", "load_gen"}, {"command", a.command},
          {"date", absl::FormatTime(absl::Now(), absl::UTCTimeZone())}, {"server", a.client.server},
          {"gpu", a.gpu}, {"commit", a.commit}};
}

// --tick-stream: one day over TickStream, the features' count from ModelMetadata.
absl::Status RunTicks(Args a, const std::shared_ptr<grpc::Channel>& channel,
                      const ModelShape& shape) {
  ASSIGN_OR_RETURN(std::unique_ptr<std::ofstream> json, OpenJson(a.json_path));
  if (json->is_open()) *json << MetaLine(a).dump() << "\n" << std::flush;
  a.ticks.features = shape.features;
  std::printf("load_gen: %s model %s, TickStream of %lld ticks (%lld unrecorded), F = %lld\n",
              a.client.server.c_str(), a.model.c_str(), static_cast<long long>(a.ticks.ticks),
              static_cast<long long>(a.ticks.warmup), static_cast<long long>(shape.features));
  std::fflush(stdout);
  auto stub = v1::TickStream::NewStub(channel);
  ASSIGN_OR_RETURN(TickStreamResult r, RunTickStream(stub.get(), a.ticks));
  nlohmann::json line = {{"bench", "load_gen"}, {"op", "tick_stream"}, {"model", a.model},
                         {"features", shape.features}, {"seed", a.ticks.seed}, {"gpu", a.gpu},
                         {"commit", a.commit}};
  line.update(TickStreamJson(r, a.ticks));
  if (json->is_open()) *json << line.dump() << "\n" << std::flush;
  std::printf("%lld ticks recorded (%s, %s, %s): latency ms p50 %.3f, p90 %.3f, p99 %.3f, "
              "p99.9 %.3f, max %.3f; server compute ms p50 %.3f, mean %.3f\n",
              static_cast<long long>(r.latency_ns.count()), r.opened.state_mode().c_str(),
              r.opened.device().c_str(), r.opened.kernel_path().c_str(),
              line["p50_ms"].get<double>(), line["p90_ms"].get<double>(),
              line["p99_ms"].get<double>(), line["p999_ms"].get<double>(),
              line["max_ms"].get<double>(), line["compute_p50_ms"].get<double>(),
              line["compute_mean_ms"].get<double>());
  return absl::OkStatus();
}

// --clients: closed loop at each client count, the same request for all.
absl::Status RunClients(const Args& a, const inference::ModelInferRequest& request,
                        nlohmann::json shared, std::ofstream* json) {
  std::printf("load_gen: %s model %s, closed loop, [%lld, %lld] per request%s, %g s per client "
              "count (+%g s warmup)\n%8s %10s %9s %9s %9s %9s %9s %7s %6s\n",
              a.client.server.c_str(), a.model.c_str(), static_cast<long long>(a.batch),
              static_cast<long long>(a.n), a.last_only ? ", last step only" : "",
              a.load.duration_s, a.load.warmup_s, "clients", "answers/s", "p50 ms", "p90 ms",
              "p99 ms", "p99.9 ms", "max ms", "errors", "cpu");
  std::fflush(stdout);
  shared["op"] = "model_infer_closed";
  // latency_table.py's row and column: the closed-loop rows of serve_latency.py's
  // Python client, measured here by a C++ client.
  shared["what"] = a.last_only ? "forward_last" : "forward";
  shared["impl"] = "load_gen_grpc";
  for (int k : a.clients) {
    ClosedLoadSpec spec{k, a.load.warmup_s, a.load.duration_s, a.load.expected_output_bytes};
    ASSIGN_OR_RETURN(ClosedLoadResult r, RunClosedLoad(a.client, request, spec));
    nlohmann::json line = shared;
    line.update(ClosedLoadJson(r));
    if (json->is_open()) *json << line.dump() << "\n" << std::flush;
    std::printf("%8d %10.1f %9.3f %9.3f %9.3f %9.3f %9.3f %7lld %6.2f\n", k,
                r.throughput_rps(), line["p50_ms"].get<double>(), line["p90_ms"].get<double>(),
                line["p99_ms"].get<double>(), line["p999_ms"].get<double>(),
                line["max_ms"].get<double>(), static_cast<long long>(line["error_count"].get<int64_t>()),
                line["generator_cpu_cores"].get<double>());
    std::fflush(stdout);
  }
  return absl::OkStatus();
}

absl::Status Run(Args a) {
  std::shared_ptr<grpc::Channel> channel = MakeChannel(a.client);
  if (!channel->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(10))) {
    return absl::UnavailableError(absl::StrCat("cannot connect to flashtickd at ", a.client.server,
                                               " within 10 s"));
  }
  auto stub = inference::GRPCInferenceService::NewStub(channel);
  ASSIGN_OR_RETURN(ModelShape shape, FetchShape(stub.get(), a));
  if (a.tick_stream) return RunTicks(std::move(a), channel, shape);
  a.load.expected_output_bytes =
      a.batch * (a.last_only ? 1 : a.n) * shape.classes * static_cast<int64_t>(sizeof(float));
  const inference::ModelInferRequest request = MakeRequest(a, shape);
  ASSIGN_OR_RETURN(inference::ModelInferResponse probe, Probe(stub.get(), a, request));

  ASSIGN_OR_RETURN(std::unique_ptr<std::ofstream> json, OpenJson(a.json_path));
  const nlohmann::json shared = {
      {"bench", "load_gen"}, {"op", "model_infer"}, {"impl", "flashtickd_grpc"},
      {"model", a.model}, {"N", a.n}, {"B", a.batch}, {"features", shape.features},
      {"last_only", a.last_only}, {"server_device", Param(probe, "device")},
      {"kernel_path", Param(probe, "kernel_path")}, {"duration_s", a.load.duration_s},
      {"warmup_s", a.load.warmup_s}, {"max_inflight_limit", a.load.max_inflight},
      {"seed", a.load.seed}, {"gpu", a.gpu}, {"commit", a.commit}};
  auto emit = [&json](const nlohmann::json& line) {
    if (json->is_open()) *json << line.dump() << "\n" << std::flush;
  };
  emit(MetaLine(a));
  if (!a.clients.empty()) return RunClients(a, request, shared, json.get());

  std::printf("load_gen: %s model %s, [%lld, %lld, %lld] per request, %g s per rate (+%g s warmup), "
              "SLO p99 %g ms, device %s\n%s\n",
              a.client.server.c_str(), a.model.c_str(), static_cast<long long>(a.batch),
              static_cast<long long>(a.n), static_cast<long long>(shape.features),
              a.load.duration_s, a.load.warmup_s, a.limits.slo_ms, Param(probe, "device").c_str(),
              TableHeader().c_str());
  std::fflush(stdout);
  std::optional<double> knee_rps, sustained_rps;
  std::string knee_reason;
  size_t rates_run = 0;
  for (size_t i = 0; i < a.rates.size(); ++i) {
    ++rates_run;
    InferLoadSpec spec = a.load;
    spec.rate_per_s = a.rates[i];
    spec.seed = a.load.seed + i;  // each rate its own arrivals, the run repeatable
    ASSIGN_OR_RETURN(RateResult r, RunInferLoad(stub.get(), request, spec));
    std::printf("%s\n", TableRow(r, a.limits).c_str());
    std::fflush(stdout);
    nlohmann::json line = shared;
    line.update(RateJson(r, a.limits));
    emit(line);
    const std::string reason = KneeReason(r, a.limits);
    if (reason.empty()) {
      if (!knee_rps) sustained_rps = r.offered_rps;
      continue;
    }
    if (!knee_rps) knee_rps = r.offered_rps, knee_reason = reason;
    if (!a.no_stop) break;
  }
  nlohmann::json summary = shared;
  summary.update({{"what", "summary"}, {"rates_run", rates_run},
                  {"max_sustained_rps", sustained_rps ? nlohmann::json(*sustained_rps) : nullptr},
                  {"knee_rps", knee_rps ? nlohmann::json(*knee_rps) : nullptr},
                  {"knee_reason", knee_reason}, {"slo_ms", a.limits.slo_ms}});
  emit(summary);
  std::printf("%s\n", knee_rps ? absl::StrCat("knee at ", *knee_rps, " requests/s (", knee_reason,
                                               "); highest rate within every limit: ",
                                               sustained_rps ? absl::StrCat(*sustained_rps) : "none")
                                        .c_str()
                               : "no knee within the rates offered");
  return absl::OkStatus();
}

}  // namespace
}  // namespace flashtick::bench

int main(int argc, char** argv) {
  int cli_exit = -1;
  auto args = flashtick::bench::Parse(argc, argv, &cli_exit);
  if (cli_exit >= 0) return cli_exit;
  if (!args.ok()) {
    std::fprintf(stderr, "load_gen: %s\n", args.status().ToString().c_str());
    return 2;
  }
  absl::Status s = flashtick::bench::Run(*std::move(args));
  if (!s.ok()) {
    std::fprintf(stderr, "load_gen: %s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}
