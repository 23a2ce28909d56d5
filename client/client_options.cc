// Channel construction for the flashtick CLI (see client_options.h).
#include "client/client_options.h"

#include <chrono>

namespace flashtick {

std::shared_ptr<grpc::Channel> MakeChannel(const ClientOptions& options) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);  // unlimited: the server bounds what it sends
  args.SetMaxSendMessageSize(-1);     // the server answers RESOURCE_EXHAUSTED if too big
  return grpc::CreateCustomChannel(options.server, grpc::InsecureChannelCredentials(), args);
}

void SetDeadline(const ClientOptions& options, grpc::ClientContext* context) {
  context->set_deadline(std::chrono::system_clock::now() +
                        std::chrono::milliseconds(static_cast<int64_t>(
                            options.timeout_seconds * 1000)));
}

}  // namespace flashtick
