// One day over TickStream, timed per tick (see tick_stream_load.h).
#include "bench/load_gen/tick_stream_load.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <random>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "bench/load_gen/load_report.h"

namespace flashtick::bench {
namespace {

using Clock = std::chrono::steady_clock;

absl::Status StreamError(const std::string& what, const grpc::Status& s) {
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()),
                      absl::StrCat("TickStream ", what, ": ", s.error_message()));
}

}  // namespace

absl::StatusOr<TickStreamResult> RunTickStream(v1::TickStream::Stub* stub,
                                               const TickStreamSpec& spec) {
  if (spec.ticks < 1 || spec.warmup < 0 || spec.warmup >= spec.ticks) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--ticks ", spec.ticks, " must exceed --tick-warmup ", spec.warmup, " (≥ 0)"));
  }
  TickStreamResult result;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::duration_cast<std::chrono::system_clock::duration>(
                           std::chrono::duration<double>(spec.timeout_s)));
  const Clock::time_point start = Clock::now();
  std::unique_ptr<grpc::ClientReaderWriter<v1::TickStreamRequest, v1::TickStreamResponse>> stream =
      stub->StreamTicks(&context);
  v1::TickStreamRequest open;
  open.mutable_open()->set_model_name(spec.model);
  open.mutable_open()->set_model_version(spec.model_version);
  open.mutable_open()->set_instrument("LOADGEN");
  open.mutable_open()->set_date("2026-01-02");
  v1::TickStreamResponse response;
  if (!stream->Write(open) || !stream->Read(&response) || !response.has_opened()) {
    stream->WritesDone();
    return StreamError("open", stream->Finish());
  }
  result.opened = response.opened();
  const int64_t features = spec.features > 0 ? spec.features : result.opened.features();
  if (features < 1) return absl::FailedPreconditionError("the session names no feature count");

  // Every row made before the first send, so the loop times the stream alone; the
  // message is reused (its values overwritten in place: no allocation per tick).
  std::mt19937_64 rng(spec.seed);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::vector<float> rows(static_cast<size_t>(spec.ticks * features));
  for (float& v : rows) v = normal(rng);
  v1::TickStreamRequest msg;
  v1::FeatureRow* row = msg.mutable_features();
  row->mutable_values()->Resize(static_cast<int>(features), 0.f);
  for (int64_t t = 0; t < spec.ticks; ++t) {
    row->set_step(t);
    std::copy_n(rows.data() + t * features, features, row->mutable_values()->mutable_data());
    const Clock::time_point sent = Clock::now();
    if (!stream->Write(msg) || !stream->Read(&response)) {
      stream->WritesDone();
      return StreamError(absl::StrCat("at step ", t), stream->Finish());
    }
    const int64_t ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - sent).count();
    if (!response.has_prediction() || response.prediction().step() != t ||
        response.prediction().probs_size() < 1) {
      context.TryCancel();
      return absl::DataLossError(absl::StrCat("TickStream: step ", t, " answered with ",
                                              response.ShortDebugString()));
    }
    ++result.answered;
    if (t < spec.warmup) continue;
    result.latency_ns.Record(ns);
    result.compute_ns.Record(static_cast<int64_t>(response.prediction().compute_seconds() * 1e9));
  }
  stream->WritesDone();
  const grpc::Status finished = stream->Finish();
  if (!finished.ok()) return StreamError("finish", finished);
  result.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

nlohmann::json TickStreamJson(const TickStreamResult& r, const TickStreamSpec& spec) {
  const LatencyHistogram& c = r.compute_ns;
  nlohmann::json j = {
      {"what", "tick"},
      {"impl", "load_gen_grpc"},
      {"N", spec.ticks},
      {"B", 1},
      {"clients", 1},
      {"warmup_ticks", spec.warmup},
      {"answered", r.answered},
      {"compute_p50_ms", Ms(c.Percentile(0.50))},
      {"compute_p99_ms", Ms(c.Percentile(0.99))},
      {"compute_mean_ms", c.mean() * 1e-6},
      {"ticks_per_s", r.wall_s > 0 ? static_cast<double>(r.answered) / r.wall_s : 0.0},
      {"state_mode", r.opened.state_mode()},
      {"kernel_path", r.opened.kernel_path()},
      {"device", r.opened.device()},
      {"session_id", r.opened.session_id()}};
  j.update(LatencyJson(r.latency_ns));
  return j;
}

}  // namespace flashtick::bench
