// TickStreamService: flashtick.v1.TickStream on gRPC's callback API. Each
// StreamTicks call gets its own TickStreamReactor (one session per stream).
#pragma once

#include <grpcpp/grpcpp.h>

#include "flashtick/v1/tick_stream.grpc.pb.h"
#include "model/decode_state.h"
#include "server/client_identity.h"
#include "server/inference/inference_core.h"
#include "server/metrics/metrics.h"
#include "server/stream/stream_admission.h"
#include "server/work_queue.h"

namespace flashtick {

class TickStreamService final : public flashtick::v1::TickStream::CallbackService {
 public:
  // None owned.
  TickStreamService(const InferenceCore* core, WorkQueue* queue, Metrics* metrics,
                    StreamAdmission* admission, const ClientNamer* namer,
                    DecodeOptions decode = {});

  grpc::ServerBidiReactor<v1::TickStreamRequest, v1::TickStreamResponse>* StreamTicks(
      grpc::CallbackServerContext* context) override;

 private:
  const InferenceCore* core_;
  WorkQueue* queue_;
  Metrics* metrics_;
  StreamAdmission* admission_;
  const ClientNamer* namer_;
  DecodeOptions decode_;
};

}  // namespace flashtick
