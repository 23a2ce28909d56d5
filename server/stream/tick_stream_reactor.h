// TickStreamReactor: one flashtick.v1.TickStream/StreamTicks call. Reads and
// writes alternate (read a step -> maybe predict on the WorkQueue -> write ->
// read the next), so at most one operation is outstanding and per-session order
// is the arrival order. The first message must open the session. Any bad
// message ends the stream with its status; a half-close by the client ends it
// with OK.
// Limits (server/stream/stream_admission.h): the stream takes a slot when it is
// created (refused before any read past the server's or its client's limit),
// reserves a whole day's memory when it opens, and the admission's reaper ends it
// (EndIfIdleSince, on the reaper's thread) when it waits too long for its client.
// That is the one call from outside gRPC's reactions, hence mu_ and finished_, and
// the reference count: the reactor deletes itself when OnDone has run and the
// reaper holds no reference.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include <grpcpp/grpcpp.h>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "flashtick/v1/tick_stream.grpc.pb.h"
#include "server/client_identity.h"
#include "server/inference/inference_core.h"
#include "server/metrics/metrics.h"
#include "server/stream/stream_admission.h"
#include "server/stream/tick_session.h"
#include "server/work_queue.h"

namespace flashtick {

class TickStreamReactor final
    : public grpc::ServerBidiReactor<v1::TickStreamRequest, v1::TickStreamResponse>,
      public IdleStream {
 public:
  TickStreamReactor(grpc::CallbackServerContext* context, const InferenceCore* core,
                    WorkQueue* queue, Metrics* metrics, StreamAdmission* admission,
                    const ClientNamer* namer, DecodeOptions decode = {});

  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnDone() override;

  void Ref() override { refs_.fetch_add(1); }
  void Unref() override;
  bool EndIfIdleSince(absl::Time idle_since, const absl::Status& status) override;

 private:
  void ReadNext();  // StartRead, marking the stream as waiting for its client
  absl::Status Open(const v1::OpenSession& open);
  void HandleStep();
  void PredictLast(absl::Time arrived);  // runs on a worker
  void End(const absl::Status& status);  // Finish once, whoever ends the stream first
  // Counts the request and finishes the call; only after finished_ was set by the caller.
  void RecordAndFinish(const absl::Status& status);

  grpc::CallbackServerContext* context_;
  const InferenceCore* core_;
  WorkQueue* queue_;
  Metrics* metrics_;
  StreamAdmission* admission_;
  DecodeOptions decode_;
  const absl::Time start_;
  std::unique_ptr<StreamAdmission::Ticket> ticket_;  // null when refused
  // Shared: the stream keeps the version it opened until it closes, even if that
  // version is unloaded or replaced meanwhile. Declared before session_, whose
  // decode state points into the model, so that the session goes first.
  ModelEntryPtr model_;
  std::unique_ptr<TickSession> session_;
  int predict_every_ = 1;
  bool incremental_ = false;  // state mode: Step through a K/V cache, else recompute
  v1::TickStreamRequest request_;
  v1::TickStreamResponse response_;

  std::atomic<int> refs_{1};  // OnDone's, plus the reaper's while it calls us
  std::mutex mu_;             // guards the three below
  bool finished_ = false;     // Finish was called (by End or the reaper)
  bool waiting_ = false;      // a read is outstanding: the client's turn
  absl::Time last_activity_;  // when the current read was started
};

}  // namespace flashtick
