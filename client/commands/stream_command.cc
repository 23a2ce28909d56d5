// `flashtick stream` (see stream_command.h).
#include "client/commands/stream_command.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <vector>

#include <CLI/CLI.hpp>
#include <grpcpp/grpcpp.h>

#include "absl/strings/str_cat.h"
#include "client/tick_csv.h"
#include "common/status_macros.h"
#include "flashtick/v1/tick_stream.grpc.pb.h"
#include "ticks/features.h"

namespace flashtick {
namespace {

using Clock = std::chrono::steady_clock;

struct StreamArgs {
  std::string model = "flashtick-tiny";
  std::string version;
  std::string csv;
  std::optional<uint64_t> synthetic_seed;
  int64_t steps = 600;       // of the synthetic day, or the first steps of the CSV
  int64_t print_every = 60;  // print one step in this many (every step goes to --output)
  std::string output;
};

absl::Status FromGrpc(const grpc::Status& s) {
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
}

double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1))];
}

absl::Status RunStream(const ClientOptions& options, const StreamArgs& args) {
  if (args.steps < 1) return absl::InvalidArgumentError("--steps must be ≥ 1");
  std::vector<v1::TickStreamRequest> steps;
  if (args.synthetic_seed.has_value()) {
    const SessionGrid day = SimpleSyntheticDay(*args.synthetic_seed, args.steps);
    for (int64_t t = 0; t < day.steps(); ++t) {
      v1::Tick* tick = steps.emplace_back().mutable_tick();
      tick->set_step(t);
      tick->set_bid(day.bid[t]);
      tick->set_ask(day.ask[t]);
      tick->set_flow(day.flow[t]);
    }
  } else {
    ASSIGN_OR_RETURN(TickTable table, ReadTickCsv(args.csv));
    for (int64_t t = 0; t < std::min(table.steps, args.steps); ++t) {
      v1::FeatureRow* row = steps.emplace_back().mutable_features();
      row->set_step(t);
      for (int f = 0; f < kNumFeatures; ++f) row->add_values(table.features[t * kNumFeatures + f]);
    }
  }
  std::FILE* out = nullptr;
  if (!args.output.empty()) {
    out = std::fopen(args.output.c_str(), "w");
    if (out == nullptr) return absl::PermissionDeniedError(absl::StrCat("cannot write ", args.output));
    std::fprintf(out, "step,p_down,p_flat,p_up,latency_ms,compute_ms\n");
  }
  auto stub = v1::TickStream::NewStub(MakeChannel(options));
  grpc::ClientContext context;
  SetDeadline(options, &context);
  auto stream = stub->StreamTicks(&context);
  v1::TickStreamRequest open;
  open.mutable_open()->set_model_name(args.model);
  open.mutable_open()->set_model_version(args.version);
  open.mutable_open()->set_instrument(args.synthetic_seed ? "SYNTH" : "CSV");
  open.mutable_open()->set_date("2026-01-02");
  v1::TickStreamResponse response;
  if (!stream->Write(open) || !stream->Read(&response) || !response.has_opened()) {
    stream->WritesDone();
    return FromGrpc(stream->Finish());
  }
  const v1::SessionOpened& opened = response.opened();
  std::printf("session %s: %s v%s on %s (%s), %lld steps\n", opened.session_id().c_str(),
              opened.model_name().c_str(), opened.model_version().c_str(),
              opened.device().c_str(), opened.state_mode().c_str(),
              static_cast<long long>(steps.size()));
  std::printf("%6s %8s %8s %8s %6s %11s %11s\n", "step", "p_down", "p_flat", "p_up", "label",
              "latency_ms", "compute_ms");
  std::vector<double> latencies;
  latencies.reserve(steps.size());
  for (const v1::TickStreamRequest& step : steps) {
    const auto sent = Clock::now();
    if (!stream->Write(step) || !stream->Read(&response)) break;
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - sent).count();
    latencies.push_back(ms);
    const v1::StepPrediction& p = response.prediction();
    const float down = p.probs_size() > 0 ? p.probs(0) : 0, flat = p.probs_size() > 1 ? p.probs(1) : 0,
                up = p.probs_size() > 2 ? p.probs(2) : 0;
    const double compute_ms = p.compute_seconds() * 1e3;
    if (out != nullptr) {
      std::fprintf(out, "%lld,%.9g,%.9g,%.9g,%.3f,%.3f\n", static_cast<long long>(p.step()), down,
                   flat, up, ms, compute_ms);
    }
    if (args.print_every > 0 && (p.step() % args.print_every == 0 ||
                                 p.step() + 1 == static_cast<int64_t>(steps.size()))) {
      std::printf("%6lld %8.4f %8.4f %8.4f %6d %11.3f %11.3f\n", static_cast<long long>(p.step()),
                  down, flat, up, p.label(), ms, compute_ms);
    }
  }
  stream->WritesDone();
  const grpc::Status status = stream->Finish();
  if (out != nullptr) std::fclose(out);
  if (!status.ok()) return FromGrpc(status);
  std::printf("%zu steps; latency ms p50 %.3f, p99 %.3f, max %.3f\n", latencies.size(),
              Percentile(latencies, 0.5), Percentile(latencies, 0.99),
              Percentile(latencies, 1.0));
  return absl::OkStatus();
}

}  // namespace

void AddStreamCommand(CLI::App* app, const ClientOptions* options, int* exit_code) {
  auto args = std::make_shared<StreamArgs>();
  CLI::App* cmd = app->add_subcommand(
      "stream", "Stream a day step by step over TickStream; print predictions and latency.");
  auto* csv = cmd->add_option("--csv", args->csv, "a day as CSV (the layouts of `predict --csv`)");
  auto* synthetic =
      cmd->add_option("--synthetic-day", args->synthetic_seed, "stream SimpleSyntheticDay(SEED)");
  csv->excludes(synthetic);
  cmd->add_option("--steps", args->steps, "steps to stream (the synthetic day's length)")
      ->capture_default_str();
  cmd->add_option("--model", args->model, "model name")->capture_default_str();
  cmd->add_option("--model-version", args->version, "model version (default: the latest)");
  cmd->add_option("--print-every", args->print_every, "print one step in this many (0: none)")
      ->capture_default_str();
  cmd->add_option("--output", args->output,
                  "write step,p_down,p_flat,p_up,latency_ms,compute_ms for every step");
  cmd->callback([options, exit_code, args, csv, synthetic] {
    if (csv->count() == 0 && synthetic->count() == 0) {
      std::fprintf(stderr, "stream: give --csv FILE or --synthetic-day SEED\n");
      *exit_code = 2;
      return;
    }
    const absl::Status status = RunStream(*options, *args);
    if (!status.ok()) {
      std::fprintf(stderr, "stream: %s\n", status.ToString().c_str());
      *exit_code = 1;
      return;
    }
    *exit_code = 0;
  });
}

}  // namespace flashtick
