// TickStream session reactor (see tick_stream_reactor.h). State mode
// "incremental" when the model's backend has attention_decode: each answered step
// runs only the new rows through the session's key/value cache
// (TickSession::PredictLast, O(T·d) a step); otherwise "recompute": the model runs
// over all T steps and keeps the last. Both equal ModelInfer on the same prefix
// with last_only = true (to fp32 rounding; tests/model/decode_state_test.cc).
#include "server/stream/tick_stream_reactor.h"

#include <algorithm>
#include <atomic>
#include <string>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "server/inference/forward_window.h"
#include "server/status_convert.h"

namespace flashtick {
namespace {

constexpr char kMethod[] = "StreamTicks";
constexpr char kRecompute[] = "recompute";
constexpr char kIncremental[] = "incremental";
constexpr size_t kMaxOpenModelName = 256;   // Triton model names are path components
constexpr size_t kMaxOpenInstrument = 64;
constexpr size_t kMaxOpenDate = 32;         // an ISO date, with room for a time

std::string NextSessionId() {
  static std::atomic<int64_t> counter{0};
  return absl::StrCat("s", absl::ToUnixMicros(absl::Now()), "-", counter.fetch_add(1));
}

}  // namespace

TickStreamReactor::TickStreamReactor(grpc::CallbackServerContext* context,
                                     const InferenceCore* core, WorkQueue* queue,
                                     Metrics* metrics, StreamAdmission* admission,
                                     const ClientNamer* namer, DecodeOptions decode)
    : context_(context),
      core_(core),
      queue_(queue),
      metrics_(metrics),
      admission_(admission),
      decode_(decode),
      start_(absl::Now()) {
  auto ticket = admission_->Admit(namer->Name(*context_), this);
  if (!ticket.ok()) {  // refused before reading anything
    End(ticket.status());
    return;
  }
  ticket_ = *std::move(ticket);
  metrics_->AddActiveStreams(1);
  ReadNext();
}

void TickStreamReactor::ReadNext() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (finished_) return;
    waiting_ = true;
    last_activity_ = absl::Now();
  }
  StartRead(&request_);
}

void TickStreamReactor::End(const absl::Status& status) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (finished_) return;  // the reaper ended it first
    finished_ = true;
  }
  RecordAndFinish(status);
}

void TickStreamReactor::RecordAndFinish(const absl::Status& status) {
  metrics_->RecordRequest(model_ ? model_->name : "", kMethod, StatusCodeName(status),
                          absl::ToDoubleSeconds(absl::Now() - start_));
  Finish(ToGrpcStatus(status));
}

bool TickStreamReactor::EndIfIdleSince(absl::Time idle_since, const absl::Status& status) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Only while our read is outstanding: Finish is valid with a read in flight
    // (it completes with ok = false), never with a write in flight.
    if (finished_ || !waiting_ || last_activity_ >= idle_since) return false;
    finished_ = true;
  }
  RecordAndFinish(status);
  return true;
}

void TickStreamReactor::OnDone() {
  if (ticket_ != nullptr) {
    ticket_.reset();  // frees the slot and the reserved memory
    metrics_->AddActiveStreams(-1);
  }
  Unref();
}

void TickStreamReactor::Unref() {
  if (refs_.fetch_sub(1) == 1) delete this;
}

void TickStreamReactor::OnWriteDone(bool ok) {
  if (!ok) {
    End(absl::CancelledError("the client went away before the answer was written"));
    return;
  }
  ReadNext();
}

void TickStreamReactor::OnReadDone(bool ok) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    waiting_ = false;
    if (finished_) return;  // ended while the read was outstanding (idle reaper)
  }
  if (!ok) {  // half-close or cancellation: the session ends normally
    End(absl::OkStatus());
    return;
  }
  if (session_ == nullptr) {
    if (request_.kind_case() != v1::TickStreamRequest::kOpen) {
      End(absl::FailedPreconditionError(
          "the first message of a tick stream must be `open` (model, instrument, date)"));
      return;
    }
    absl::Status opened = Open(request_.open());
    if (!opened.ok()) {
      End(opened);
      return;
    }
    StartWrite(&response_);
    return;
  }
  HandleStep();
}

absl::Status TickStreamReactor::Open(const v1::OpenSession& open) {
  // The session keeps these strings for its whole life, outside the memory it
  // reserves, and messages may repeat them: bounded here (docs/security.md).
  for (const auto& [field, value, max] :
       {std::tuple<const char*, const std::string*, size_t>{"open.model_name", &open.model_name(),
                                                            kMaxOpenModelName},
        {"open.instrument", &open.instrument(), kMaxOpenInstrument},
        {"open.date", &open.date(), kMaxOpenDate}}) {
    if (value->size() > max) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, " is ", value->size(), " bytes; at most ", max));
    }
  }
  auto model = core_->repository().Find(open.model_name(), open.model_version());
  if (!model.ok()) return model.status();
  if (open.predict_every() < 0) {
    return absl::InvalidArgumentError("predict_every must be ≥ 0 (0 or 1: answer every step)");
  }
  const bool incremental = (*model)->model != nullptr && (*model)->model->SupportsDecode();
  const int64_t max_steps = core_->MaxSteps(**model);
  if ((*model)->model != nullptr) {
    RETURN_IF_ERROR(ticket_->ReserveMemory(
        TickSession::DayBytes(*(*model)->model, (*model)->features, max_steps, incremental)));
  }
  model_ = *model;
  predict_every_ = std::max(1, open.predict_every());
  incremental_ = incremental;
  session_ = std::make_unique<TickSession>(model_->features, max_steps, open.instrument(),
                                           open.date(), decode_);
  auto* opened = response_.mutable_opened();
  opened->set_session_id(NextSessionId());
  opened->set_model_name(model_->name);
  opened->set_model_version(model_->version_string());
  opened->set_features(model_->features);
  opened->set_max_steps(core_->MaxSteps(*model_));
  opened->set_kernel_path(model_->kernel_path);
  opened->set_device(model_->device);
  opened->set_state_mode(incremental_ ? kIncremental : kRecompute);
  opened->set_idle_timeout_seconds(absl::ToDoubleSeconds(admission_->limits().idle_timeout));
  opened->set_reserved_bytes(ticket_->reserved_bytes());
  opened->set_client(ticket_->client());
  return absl::OkStatus();
}

void TickStreamReactor::HandleStep() {
  const absl::Time arrived = absl::Now();
  absl::Status appended = session_->Append(request_);
  if (!appended.ok()) {
    End(appended);
    return;
  }
  if (session_->steps() % predict_every_ != 0) {
    ReadNext();
    return;
  }
  // The reserved lane: a ModelInfer flood fills --max-queue, not the streams' room,
  // so it cannot end a session (and lose its key/value cache).
  absl::Status submitted = queue_->SubmitReserved([this, arrived] { PredictLast(arrived); });
  if (!submitted.ok()) End(submitted);
}

void TickStreamReactor::PredictLast(absl::Time arrived) {
  if (context_->IsCancelled()) {
    End(absl::CancelledError("the client cancelled the stream"));
    return;
  }
  const ForwardWindow window(*model_->model->backend());
  auto probs = incremental_ ? session_->PredictLast(model_->model.get())
                            : model_->model->Predict(session_->rows(), 1, session_->steps(), true);
  if (!probs.ok()) {
    End(probs.status());
    return;
  }
  auto* prediction = response_.mutable_prediction();
  prediction->set_step(session_->steps() - 1);
  prediction->mutable_probs()->Assign(probs->begin(), probs->end());
  prediction->set_label(static_cast<int>(std::max_element(probs->begin(), probs->end()) -
                                         probs->begin()));
  const double compute_seconds = window.seconds();
  prediction->set_compute_seconds(compute_seconds);
  prediction->set_kernel_path(model_->kernel_path);
  metrics_->RecordInference(model_->name, 1, session_->steps());
  metrics_->RecordQueueAndCompute(model_->name, kMethod,
                                  absl::ToDoubleSeconds(window.start() - arrived), compute_seconds);
  metrics_->RecordRequestPeakMemory(model_->name, kMethod, window.peak_bytes());
  metrics_->RecordStreamTick(model_->name, absl::ToDoubleSeconds(absl::Now() - arrived));
  StartWrite(&response_);
}

}  // namespace flashtick
