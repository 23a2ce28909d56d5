// TickStreamReactor: one flashtick.v1.TickStream/StreamTicks call. Reads and
// writes alternate (read a step -> maybe predict on the WorkQueue -> write ->
// read the next), so at most one operation is outstanding and per-session order
// is the arrival order. The first message must open the session. Any bad
// message ends the stream with its status; a half-close by the client ends it
// with OK. Deletes itself in OnDone.
#pragma once

#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "flashtick/v1/tick_stream.grpc.pb.h"
#include "server/inference/inference_core.h"
#include "server/metrics/metrics.h"
#include "server/stream/tick_session.h"
#include "server/work_queue.h"

namespace flashtick {

class TickStreamReactor final
    : public grpc::ServerBidiReactor<v1::TickStreamRequest, v1::TickStreamResponse> {
 public:
  TickStreamReactor(grpc::CallbackServerContext* context, const InferenceCore* core,
                    WorkQueue* queue, Metrics* metrics);

  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnDone() override;

 private:
  absl::Status Open(const v1::OpenSession& open);
  void HandleStep();
  void PredictLast(absl::Time arrived);  // runs on a worker
  void End(const absl::Status& status);

  grpc::CallbackServerContext* context_;
  const InferenceCore* core_;
  WorkQueue* queue_;
  Metrics* metrics_;
  const absl::Time start_;
  const ModelEntry* model_ = nullptr;
  std::unique_ptr<TickSession> session_;
  int predict_every_ = 1;
  bool incremental_ = false;  // state mode: Step through a K/V cache, else recompute
  v1::TickStreamRequest request_;
  v1::TickStreamResponse response_;
};

}  // namespace flashtick
