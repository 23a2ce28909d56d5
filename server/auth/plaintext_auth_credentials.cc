// Plaintext credentials with a token processor (see plaintext_auth_credentials.h).
// The C callback mirrors gRPC's own C++ wrapper for secure credentials: build the
// metadata multimap from the C array, call Process(), hand back the consumed
// entries (they only need to outlive the synchronous done-callback).
#include "server/auth/plaintext_auth_credentials.h"

#include <grpc/grpc.h>
#include <grpc/slice.h>

#include <vector>

namespace flashtick {
namespace {

using Processor = grpc::AuthMetadataProcessor;

grpc::string_ref RefOf(const grpc_slice& slice) {
  return grpc::string_ref(reinterpret_cast<const char*>(GRPC_SLICE_START_PTR(slice)),
                          GRPC_SLICE_LENGTH(slice));
}

grpc_slice SliceOf(const std::string& s) {
  return grpc_slice_from_static_buffer(s.data(), s.size());
}

void ProcessCall(void* state, grpc_auth_context* /*context*/, const grpc_metadata* md,
                 size_t num_md, grpc_process_auth_metadata_done_cb done, void* user_data) {
  auto* processor = static_cast<std::shared_ptr<Processor>*>(state);
  Processor::InputMetadata metadata;
  for (size_t i = 0; i < num_md; ++i) metadata.emplace(RefOf(md[i].key), RefOf(md[i].value));
  Processor::OutputMetadata consumed;
  Processor::OutputMetadata response;
  const grpc::Status status = (*processor)->Process(metadata, nullptr, &consumed, &response);
  std::vector<grpc_metadata> consumed_md;
  for (const auto& [key, value] : consumed) {
    grpc_metadata entry = {};
    entry.key = SliceOf(key);
    entry.value = SliceOf(value);
    consumed_md.push_back(entry);
  }
  done(user_data, consumed_md.data(), consumed_md.size(), nullptr, 0,
       static_cast<grpc_status_code>(status.error_code()),
       status.ok() ? nullptr : status.error_message().c_str());
}

void DestroyProcessor(void* state) { delete static_cast<std::shared_ptr<Processor>*>(state); }

}  // namespace

PlaintextAuthCredentials::PlaintextAuthCredentials()
    : creds_(grpc_insecure_server_credentials_create()) {}

PlaintextAuthCredentials::~PlaintextAuthCredentials() { grpc_server_credentials_release(creds_); }

void PlaintextAuthCredentials::SetAuthMetadataProcessor(
    const std::shared_ptr<Processor>& processor) {
  grpc_auth_metadata_processor c_processor = {};
  c_processor.process = ProcessCall;
  c_processor.destroy = DestroyProcessor;
  c_processor.state = new std::shared_ptr<Processor>(processor);
  grpc_server_credentials_set_auth_metadata_processor(creds_, c_processor);
}

int PlaintextAuthCredentials::AddPortToServer(const std::string& addr, grpc_server* server) {
  return grpc_server_add_http2_port(server, addr.c_str(), creds_);
}

}  // namespace flashtick
