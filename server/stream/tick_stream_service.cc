// TickStream service: hands each stream to its own reactor.
#include "server/stream/tick_stream_service.h"

#include "server/stream/tick_stream_reactor.h"

namespace flashtick {

TickStreamService::TickStreamService(const InferenceCore* core, WorkQueue* queue, Metrics* metrics,
                                     StreamAdmission* admission, const ClientNamer* namer,
                                     DecodeOptions decode)
    : core_(core), queue_(queue), metrics_(metrics), admission_(admission), namer_(namer),
      decode_(decode) {}

grpc::ServerBidiReactor<v1::TickStreamRequest, v1::TickStreamResponse>*
TickStreamService::StreamTicks(grpc::CallbackServerContext* context) {
  return new TickStreamReactor(context, core_, queue_, metrics_, admission_, namer_, decode_);
}

}  // namespace flashtick
